import type { RetryPolicy } from '../config/types.js';

/**
 * How the exponential backoff is randomized.
 *
 * With `base(n) = min(initialBackoff * backoffMultiplier^(n-1), maxBackoff)` for retry n (counted since the
 * start of the call or since the last server pushback) and `r` uniform in [0, 1):
 * - `'a6'` (default, gRPC A6 as revised in 2024): `base(n) * (0.8 + 0.4 r)`, i.e. ±20% around the capped value.
 * - `'full'` (Brooker, "Exponential Backoff and Jitter"): `base(n) * r`, anywhere between 0 and the capped value.
 * - `'equal'`: `base(n) / 2 + base(n) / 2 * r`, at least half the capped value.
 * - `'decorrelated'`: `min(maxBackoff, initialBackoff + (3 * previous - initialBackoff) * r)` where `previous` is
 *   the delay chosen for the previous retry (initialBackoff before the first); grows from the last delay rather
 *   than from n, so `backoffMultiplier` is not used.
 */
export type JitterStrategy = 'a6' | 'full' | 'equal' | 'decorrelated';

export const JITTER_STRATEGIES: readonly JitterStrategy[] = ['a6', 'full', 'equal', 'decorrelated'];

/** The un-randomized delay before retry `retryNumber` (1-based): the cap applies before any jitter. */
export function cappedBackoffMs(
  policy: Pick<RetryPolicy, 'initialBackoffMs' | 'maxBackoffMs' | 'backoffMultiplier'>,
  retryNumber: number,
): number {
  const exponential = policy.initialBackoffMs * policy.backoffMultiplier ** (retryNumber - 1);
  return Math.min(exponential, policy.maxBackoffMs);
}

/**
 * Backoff state of one call: hands out the delay before each retry and forgets its progress when the server
 * pushes back (A6: after a pushback the backoff restarts from initialBackoff).
 */
export class Backoff {
  private retryNumber = 0;
  private previousDelayMs: number;

  constructor(
    private readonly policy: Pick<RetryPolicy, 'initialBackoffMs' | 'maxBackoffMs' | 'backoffMultiplier'>,
    private readonly jitter: JitterStrategy = 'a6',
    private readonly random: () => number = Math.random,
  ) {
    this.previousDelayMs = policy.initialBackoffMs;
  }

  /** The delay in ms before the next retry; advances the state. */
  next(): number {
    this.retryNumber += 1;
    const r = this.random();
    let delay: number;
    switch (this.jitter) {
      case 'a6':
        delay = cappedBackoffMs(this.policy, this.retryNumber) * (0.8 + 0.4 * r);
        break;
      case 'full':
        delay = cappedBackoffMs(this.policy, this.retryNumber) * r;
        break;
      case 'equal': {
        const half = cappedBackoffMs(this.policy, this.retryNumber) / 2;
        delay = half + half * r;
        break;
      }
      case 'decorrelated': {
        const low = this.policy.initialBackoffMs;
        const high = Math.max(low, this.previousDelayMs * 3);
        delay = Math.min(this.policy.maxBackoffMs, low + (high - low) * r);
        break;
      }
    }
    this.previousDelayMs = delay;
    return delay;
  }

  /** Restart from initialBackoff (after a server pushback). */
  reset(): void {
    this.retryNumber = 0;
    this.previousDelayMs = this.policy.initialBackoffMs;
  }
}

/** The largest delay any strategy can produce before retry n: what a worst-case estimate must assume. */
export function maxBackoffMs(
  policy: Pick<RetryPolicy, 'initialBackoffMs' | 'maxBackoffMs' | 'backoffMultiplier'>,
  retryNumber: number,
  jitter: JitterStrategy = 'a6',
): number {
  if (jitter === 'a6') return cappedBackoffMs(policy, retryNumber) * 1.2;
  if (jitter === 'decorrelated') return policy.maxBackoffMs;
  return cappedBackoffMs(policy, retryNumber);
}
