import {
  type BackoffPolicy,
  type BackoffState,
  initialBackoffState,
  type JitterStrategy,
  nextBackoff,
} from '../../src/retry/backoff.js';

/**
 * The delays of one call's retries, drawn one after another: a stateful wrapper over the engine's pure
 * {@link nextBackoff}, for the fleet simulation (the engine keeps its {@link BackoffState} in the call).
 */
export class BackoffSequence {
  private state: BackoffState;

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly jitter: JitterStrategy = 'a6',
    private readonly random: () => number = Math.random,
  ) {
    this.state = initialBackoffState(policy);
  }

  /** The delay in ms before the next retry; advances the state. */
  next(): number {
    const step = nextBackoff(this.policy, this.jitter, this.state, this.random());
    this.state = step.state;
    return step.delayMs;
  }

  /** Restart from initialBackoff (after a server pushback). */
  reset(): void {
    this.state = initialBackoffState(this.policy);
  }
}
