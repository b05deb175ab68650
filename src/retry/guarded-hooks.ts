/**
 * The application's own gate and random source, as the engine calls them: from inside grpc-js callbacks and timers,
 * where an exception would escape as an uncaught one, leave the call without a status, and take the process down.
 * A gate that throws or a random source that gives a number outside [0, 1) is reported once per hook and interceptor as a
 * process warning (`GRPC_RETRY_HEDGING_HOOK_ERROR`), and the call goes on with the safe reading: the gate refuses
 * the attempt (no extra load on a server the gate was meant to protect), and the draw comes from `Math.random`.
 * A gate's `name` that is no string, or `tokens` that are no finite number, is reported the same way and left out
 * of the `throttled` event (`gate: 'gate'`, `tokens: NaN`), as when the gate has none.
 * @internal
 */

import type { GatedAttemptKind, RetryGate } from '../shared/retry-gate.js';
import { thrownMessage as errorMessage, hookReporter as reporter } from '../util/guarded-random.js';
import { describeValue } from '../util/option-checks.js';

export { guardedRandom } from '../util/guarded-random.js';

const PATH = 'createRetryInterceptor: options';

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
      return read(
        () => gate.name,
        'name',
        (name) => typeof name === 'string',
        'a string',
      );
    },
    get tokens(): number | undefined {
      return read(
        () => gate.tokens,
        'tokens',
        (tokens) => typeof tokens === 'number' && Number.isFinite(tokens),
        'a finite number',
      );
    },
  };
  if (gate.recordCall !== undefined) {
    guarded.recordCall = () => record('recordCall');
  }
  return guarded;

  /** The gate's `property`, or undefined (reported once) when reading it throws or gives what is not `wanted`. */
  function read<T>(
    get: () => T,
    property: string,
    fits: (value: unknown) => boolean,
    wanted: string,
  ): T | undefined {
    let value: T;
    try {
      value = get();
    } catch (error) {
      report(property, `${PATH}.gate.${property} threw (${errorMessage(error)}); the event leaves it out`);
      return undefined;
    }
    if (value === undefined || fits(value)) {
      return value;
    }
    report(
      property,
      `${PATH}.gate.${property} must be ${wanted} or undefined, got ${describeValue(value)}; the event leaves it out`,
    );
    return undefined;
  }
}
