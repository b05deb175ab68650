import { tokenRatioThousandths, truncateTokenRatio } from '../config/token-ratio.js';
import type { RetryThrottlingConfig } from '../config/types.js';
import type { RetryGate } from '../shared/retry-gate.js';
import { checkOptions, describeValue } from '../util/option-checks.js';
import { wrongTypeHint } from '../util/wrong-type-hint.js';

/** Where config errors point: `RetryThrottle: config.maxToken is not an option ...`. */
const WHERE = 'RetryThrottle: config';
const KNOWN_KEYS = ['maxTokens', 'tokenRatio'] as const;

/**
 * A6 retry throttling: a token bucket per server, shared by every call that points at it.
 *
 * Tokens start at `maxTokens` and stay within [0, maxTokens]. An attempt failing with a retryable (retry) or
 * non-fatal (hedging) code, or with a do-not-retry pushback, takes one token; a successful call adds `tokenRatio`.
 * Retries and further hedges are allowed only while tokens > maxTokens / 2.
 *
 * Share one instance between interceptors (or clients) that talk to the same server so they throttle together.
 * Tokens are kept in thousandths, so `tokenRatio` (3 decimals) adds up exactly.
 */
export class RetryThrottle implements RetryGate {
  readonly name = 'retry-throttle';
  readonly maxTokens: number;
  readonly tokenRatio: number;
  private readonly maxMilli: number;
  private readonly ratioMilli: number;
  private milliTokens: number;

  /**
   * @param config `{ maxTokens, tokenRatio }`, as in a service config's `retryThrottling`.
   * @throws TypeError when `config` is not an object, has a key other than these two, or a value is not a number;
   *   RangeError when a number is out of range.
   */
  constructor(config: RetryThrottlingConfig) {
    if (config === undefined) {
      throw new TypeError(`${WHERE} must be an object ({ maxTokens, tokenRatio }), got nothing`);
    }
    const { maxTokens, tokenRatio } = checkOptions(WHERE, config, KNOWN_KEYS);
    if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens <= 0 || maxTokens > 1000) {
      throw numberError('maxTokens', 'an integer in (0, 1000]', maxTokens);
    }
    if (typeof tokenRatio !== 'number' || !Number.isFinite(tokenRatio) || tokenRatio <= 0) {
      throw numberError('tokenRatio', 'a number greater than 0', tokenRatio);
    }
    if (truncateTokenRatio(tokenRatio) <= 0) {
      // As the config parser says of the same value: it would read 0 here and add a thousandth all the same.
      throw numberError('tokenRatio', 'at least 0.001 (decimals beyond the third are dropped)', tokenRatio);
    }
    this.maxTokens = maxTokens;
    this.maxMilli = maxTokens * 1000;
    // A6: decimals beyond the third are ignored (the same rule as the config parser). Adding more than maxTokens at
    // once is the same as adding maxTokens.
    this.tokenRatio = truncateTokenRatio(tokenRatio);
    this.ratioMilli = Math.min(tokenRatioThousandths(tokenRatio), this.maxMilli);
    this.milliTokens = this.maxMilli;
  }

  /** Current token count. */
  get tokens(): number {
    return this.milliTokens / 1000;
  }

  /** Retries and hedges are allowed only while tokens exceed this. */
  get threshold(): number {
    return this.maxTokens / 2;
  }

  /**
   * {@link RetryGate}: whether a retry or a further hedge may be sent now (tokens above the threshold). Asking spends
   * nothing: A6's throttle counts failures and successes, not attempts.
   */
  allowAttempt(): boolean {
    return this.milliTokens * 2 > this.maxMilli;
  }

  /** An attempt failed in a way that counts against the server: take one token. */
  recordFailure(): void {
    this.milliTokens = Math.max(0, this.milliTokens - 1000);
  }

  /** A call succeeded: add tokenRatio. */
  recordSuccess(): void {
    this.milliTokens = Math.min(this.maxMilli, this.milliTokens + this.ratioMilli);
  }
}

/** `RetryThrottle: maxTokens must be ..., got "10"; did you mean 10 (a number, not a string)?` */
function numberError(name: string, rule: string, value: unknown): Error {
  const message = `RetryThrottle: ${name} must be ${rule}, got ${describeValue(value)}${wrongTypeHint(value, 'number')}`;
  return typeof value === 'number' && !Number.isNaN(value) ? new RangeError(message) : new TypeError(message);
}
