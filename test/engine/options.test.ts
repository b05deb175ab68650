import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { withRetryOptions } from '../../src/retry/call-options.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import { systemClock } from '../../src/shared/clock.js';
import { engineCall, eventsOfType, retryPolicy } from '../helpers/engine.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const config = retryPolicy();

describe('option checks', () => {
  it('an unknown interceptor option names itself and the closest known one', () => {
    expect(() => createRetryInterceptor(config, { maxAttempt: 3 } as never)).toThrow(
      /createRetryInterceptor: options\.maxAttempt is not an option; did you mean "maxAttemptsLimit"\?/,
    );
    expect(() => createRetryInterceptor(config, { jiter: 'full' } as never)).toThrow(/did you mean "jitter"/);
  });

  it('null options get the same clear error as other bad options, not a raw TypeError', () => {
    expect(() => createRetryInterceptor(config, null as never)).toThrow(
      'createRetryInterceptor: options must be an object, got null',
    );
    expect(() => createRetryInterceptor(config, 3 as never)).toThrow(/options must be an object/);
  });

  it('withRetryOptions rejects a misspelled key instead of retrying anyway', () => {
    expect(() => withRetryOptions({ enable: false } as never)).toThrow(
      /withRetryOptions: options\.enable is not an option; did you mean "enabled"\?/,
    );
    expect(() => withRetryOptions(null as never)).toThrow(/must be an object/);
  });

  it('withRetryOptions refuses enabled: false with a policy it would never read; a later call may turn it off', () => {
    const policy = RETRY_UNAVAILABLE_POLICY;
    expect(() => withRetryOptions({ enabled: false, policy })).toThrow(
      'withRetryOptions: options: enabled is false and a policy is given; a call with retries off makes one attempt and never reads the policy',
    );
    expect(() => withRetryOptions({ enabled: true, policy })).not.toThrow();
    expect(() => withRetryOptions({ enabled: false }, withRetryOptions({ policy }))).not.toThrow();
  });

  it('bad values name the option', () => {
    expect(() => createRetryInterceptor(config, { jitter: 'wild' as never })).toThrow(
      /options\.jitter must be one of a6, full/,
    );
    // null is refused as for every other option (it used to read as the default for these two)
    expect(() => createRetryInterceptor(config, { jitter: null as never })).toThrow(
      /options\.jitter must be one of a6, full.*, got null/,
    );
    expect(() => createRetryInterceptor(config, { cancelRateLimit: null as never })).toThrow(
      'createRetryInterceptor: options.cancelRateLimit must be true, false, an options object or a CancelRateLimiter, got null',
    );
    expect(() => createRetryInterceptor(config, { clock: {} as never })).toThrow(
      /options\.clock must be a Clock \(an object with now, setTimer and clearTimer methods\)/,
    );
    expect(() => createRetryInterceptor(config, { clock: { ...systemClock, resolutionMs: -1 } })).toThrow(
      /options\.clock\.resolutionMs must be a finite number of ms, 0 or more, got -1/,
    );
    expect(() => createRetryInterceptor(config, { gate: {} as never })).toThrow(
      /options\.gate must be a retry gate/,
    );
    expect(() => createRetryInterceptor(config, { perRpcBufferBytes: -1 })).toThrow(RangeError);
  });

  it('an attempt limit and buffer sizes are whole numbers', () => {
    expect(() => createRetryInterceptor(config, { maxAttemptsLimit: 2.5 })).toThrow(
      /options\.maxAttemptsLimit must be an integer/,
    );
    expect(() => createRetryInterceptor(config, { perRpcBufferBytes: 1.5 })).toThrow(
      /options\.perRpcBufferBytes must be an integer/,
    );
    expect(() => createRetryInterceptor(config, { totalBufferBytes: 1.5 })).toThrow(
      /options\.totalBufferBytes must be an integer/,
    );
  });
});

describe('retry options given twice', () => {
  it('keep an earlier enabled: false when the later ones leave enabled out', () => {
    // A helper's options, wrapped by the caller's listener.
    const options = withRetryOptions({ onEvent: () => undefined }, withRetryOptions({ enabled: false }));
    const h = engineCall(config, { callOptions: options as Record<string, unknown> });
    h.attempt(0).fail();
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).not.toBe(0);
  });
});

describe('renamed options', () => {
  it('the old name is an error naming the new one', () => {
    const gate = new RetryThrottle({ maxTokens: 10, tokenRatio: 0.1 });
    expect(() => createRetryInterceptor(config, { throttle: gate } as never)).toThrow(
      'createRetryInterceptor: options.throttle was renamed to "gate"',
    );
    expect(() => createRetryInterceptor(config, { gate })).not.toThrow();
  });

  it('retryInfo is switched like the other options: false, true or an object; enabled is gone', () => {
    expect(() => createRetryInterceptor(config, { retryInfo: false })).not.toThrow();
    expect(() => createRetryInterceptor(config, { retryInfo: true })).not.toThrow();
    expect(() => createRetryInterceptor(config, { retryInfo: { enabled: false } } as never)).toThrow(
      'options.retryInfo.enabled was removed: write retryInfo: false',
    );
  });
});

describe('event delays', () => {
  it('are whole milliseconds', () => {
    const h = engineCall(config, { interceptor: { random: () => 0.1234567 } });
    h.attempt(0).fail();
    const [scheduled] = eventsOfType(h.events, 'retry-scheduled');
    expect(scheduled?.delayMs).toBe(85); // 100 × (0.8 + 0.4 × 0.1234567) = 84.94
    expect(Number.isInteger(scheduled?.delayMs)).toBe(true);
  });
});

describe('checkResentRequests', () => {
  it('is a boolean; false resends a changed request as it is', () => {
    expect(() => createRetryInterceptor(config, { checkResentRequests: 'no' as never })).toThrow(
      /options\.checkResentRequests must be/,
    );
    const h = engineCall(config, { start: false, interceptor: { checkResentRequests: false } });
    const request = { id: 1, toString: () => `id=${request.id}` };
    h.call.start(new Metadata(), {});
    h.call.sendMessageWithContext({}, request);
    h.call.halfClose();
    request.id = 2;
    h.attempt(0).fail();
    h.clock.runNext();
    expect(h.attempts).toHaveLength(2);
    expect(String(h.attempt(1).messages[0])).toBe('id=2');
  });
});
