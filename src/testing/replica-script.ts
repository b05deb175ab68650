/**
 * What one replica of a {@link FlakyCluster} does with every attempt it serves, and the checking of it.
 */

import { describeValue } from '../config/service-config-error.js';
import { readStatusCode } from '../config/status-codes.js';
import { MAX_TIMER_MS } from '../shared/clock.js';

/** One replica's behaviour. Every field is optional; `{}` answers at once with OK. */
export interface ReplicaScript {
  /**
   * How long the replica waits before it answers, ms: a number, or `[min, max]` drawn uniformly per attempt. Default
   * 0. The name `FlakyServer`'s scripts use for the same wait.
   */
  delayMs?: number | readonly [number, number] | undefined;
  /**
   * Status the replica answers failing attempts with (numeric `grpc.status` or its name, e.g. `"UNAVAILABLE"`).
   * Default `UNAVAILABLE` when `failureRate` is set, else OK (no failures).
   */
  status?: number | string | undefined;
  /** Fraction (0..1) of attempts that fail with `status`. Default 1 when `status` is set and not OK, else 0. */
  failureRate?: number | undefined;
  /** The replica is not serving: its port refuses connections (as a crashed or drained server's would). */
  down?: boolean | undefined;
  /**
   * Slow for a while: for `forMs` after the script is set (cluster start or `setScript`), the replica waits
   * `delayMs` instead.
   */
  slow?: { readonly delayMs: number; readonly forMs: number } | undefined;
}

/** A checked script. @internal */
export interface CheckedReplicaScript {
  readonly latency: readonly [number, number];
  readonly status: number;
  readonly failureRate: number;
  readonly down: boolean;
  readonly slow: { readonly delayMs: number; readonly until: number } | undefined;
}

const KNOWN = ['delayMs', 'status', 'failureRate', 'down', 'slow'];

/** A number of ms >= 0; a delay (`timer`, the default) also no longer than a timer can wait. */
function checkMs(value: unknown, where: string, timer = true): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new RangeError(`${where} must be a non-negative number of ms, got ${describeValue(value)}`);
  }
  if (timer && value > MAX_TIMER_MS) {
    // Node's setTimeout would wait 1 ms for it (a TimeoutOverflowWarning), and the replica would answer at once.
    throw new RangeError(
      `${where} must be a non-negative number of ms, at most ${MAX_TIMER_MS} (about 24.8 days), got ${describeValue(value)}`,
    );
  }
  return value;
}

/** @internal */
export function checkReplicaScript(script: unknown, where: string, now: number): CheckedReplicaScript {
  if (typeof script !== 'object' || script === null || Array.isArray(script)) {
    throw new TypeError(`${where} must be an object, got ${describeValue(script)}`);
  }
  for (const key of Object.keys(script)) {
    if (key === 'latencyMs') {
      throw new TypeError(`${where}.latencyMs was renamed to "delayMs" (as in FlakyServer scripts)`);
    }
    if (!KNOWN.includes(key)) {
      throw new TypeError(`${where}.${key} is not a replica script field (known: ${KNOWN.join(', ')})`);
    }
  }
  const s = script as ReplicaScript;
  let latency: [number, number] = [0, 0];
  if (Array.isArray(s.delayMs)) {
    const [min, max] = s.delayMs as unknown[];
    latency = [checkMs(min, `${where}.delayMs[0]`), checkMs(max, `${where}.delayMs[1]`)];
    if (s.delayMs.length !== 2 || latency[0] > latency[1]) {
      throw new RangeError(`${where}.delayMs must be a number or [min, max] with min <= max`);
    }
  } else if (s.delayMs !== undefined) {
    const ms = checkMs(s.delayMs, `${where}.delayMs`);
    latency = [ms, ms];
  }
  let status = s.failureRate !== undefined ? 14 : 0;
  if (s.status !== undefined) {
    const code = readStatusCode(s.status);
    if (typeof code === 'string') {
      throw new RangeError(`${where}.status ${code}`);
    }
    status = code;
  }
  const failureRate = s.failureRate ?? (status !== 0 ? 1 : 0);
  if (typeof failureRate !== 'number' || !(failureRate >= 0 && failureRate <= 1)) {
    throw new RangeError(
      `${where}.failureRate must be a number from 0 to 1, got ${describeValue(failureRate)}`,
    );
  }
  if (failureRate > 0 && status === 0) {
    throw new RangeError(`${where}.status must not be OK when failureRate is set`);
  }
  if (s.down !== undefined && typeof s.down !== 'boolean') {
    throw new TypeError(`${where}.down must be true or false, got ${describeValue(s.down)}`);
  }
  let slow: CheckedReplicaScript['slow'];
  if (s.slow !== undefined) {
    if (typeof s.slow !== 'object' || s.slow === null) {
      throw new TypeError(`${where}.slow must be { delayMs, forMs }, got ${describeValue(s.slow)}`);
    }
    if ('latencyMs' in s.slow) {
      throw new TypeError(`${where}.slow.latencyMs was renamed to "delayMs" (as in FlakyServer scripts)`);
    }
    slow = {
      delayMs: checkMs(s.slow.delayMs, `${where}.slow.delayMs`),
      until: now + checkMs(s.slow.forMs, `${where}.slow.forMs`, false),
    };
  }
  return { latency, status, failureRate, down: s.down ?? false, slow };
}
