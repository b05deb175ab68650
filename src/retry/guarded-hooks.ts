/**
 * The application's own gate and random source, as the engine calls them: from inside grpc-js callbacks and timers,
 * where an exception would escape as an uncaught one, leave the call without a status, and take the process down.
 * A gate that throws or a random source that gives a number outside [0, 1) is reported once per hook and interceptor as a
 * process warning (`GRPC_RETRY_HEDGING_HOOK_ERROR`), and the call goes on with the safe reading: the gate refuses
 * the attempt (no extra load on a server the gate was meant to protect), and the draw comes from `Math.random`.
 * @internal
 */

import type { GatedAttemptKind, RetryGate } from '../shared/retry-gate.js';
import { errorMessage as describeError } from '../util/error-message.js';
import { describeValue } from '../util/option-checks.js';

const CODE = 'GRPC_RETRY_HEDGING_HOOK_ERROR';
const PATH = 'createRetryInterceptor: options';

/** Reports the first error of each hook (`key`), not the ones after it. */
function reporter(): (key: string, message: string) => void {
  const warned = new Set<string>();
  return (key, message) => {
    if (!warned.has(key)) {
      warned.add(key);
      process.emitWarning(`grpc-retry-hedging: ${message}; further errors of it are not reported`, {
        code: CODE,
      });
    }
  };
}

/** `gate`, never throwing: a refusal where `allowAttempt` throws, nothing where a record method does. */
export function guardedGate(gate: RetryGate): RetryGate {
  const report = reporter();
  const record = (method: 'recordFailure' | 'recordSuccess' | 'recordCall'): void => {
    try {
      gate[method]?.();
    } catch (error) {
      report(method, `${PATH}.gate.${method} threw (${errorMessage(error)}); the call goes on`);
    }
  };
  const guarded: RetryGate = {
    allowAttempt(kind: GatedAttemptKind): boolean {
      let allowed: unknown;
      try {
        allowed = gate.allowAttempt(kind);
      } catch (error) {
        report(
          'allowAttempt',
          `${PATH}.gate.allowAttempt threw (${errorMessage(error)}); the attempt is refused`,
        );
        return false;
      }
      if (typeof allowed !== 'boolean') {
        report(
          'allowAttempt',
          `${PATH}.gate.allowAttempt must return true or false, got ${describeValue(allowed)}; the attempt is refused`,
        );
        return false;
      }
      return allowed;
    },
    recordFailure: () => record('recordFailure'),
    recordSuccess: () => record('recordSuccess'),
    get name(): string | undefined {
      return read(() => gate.name, 'name');
    },
    get tokens(): number | undefined {
      return read(() => gate.tokens, 'tokens');
    },
  };
  if (gate.recordCall !== undefined) {
    guarded.recordCall = () => record('recordCall');
  }
  return guarded;

  function read<T>(get: () => T, property: string): T | undefined {
    try {
      return get();
    } catch (error) {
      report(property, `${PATH}.gate.${property} threw (${errorMessage(error)}); the event leaves it out`);
      return undefined;
    }
  }
}

/** `random`, never throwing and always in [0, 1): a throw or a value outside it is a draw of `Math.random`. */
export function guardedRandom(random: () => number): () => number {
  const report = reporter();
  return () => {
    let value: unknown;
    try {
      value = random();
    } catch (error) {
      report('random', `${PATH}.random threw (${errorMessage(error)}); Math.random is drawn instead`);
      return Math.random();
    }
    if (typeof value !== 'number' || !(value >= 0 && value < 1)) {
      report(
        'random',
        `${PATH}.random must return a number in [0, 1), got ${describeValue(value)}; Math.random is drawn instead`,
      );
      return Math.random();
    }
    return value;
  };
}

/** What was thrown, for the warning; never throws itself (a thrown value may have a throwing toString). */
function errorMessage(error: unknown): string {
  try {
    return describeError(error);
  } catch {
    return 'a value that cannot be shown';
  }
}
