/**
 * withRetryOptions, where mutation testing found it unchecked (src/retry/call-options.ts): the errors for a left-out
 * argument and bad values, how options given twice merge, a Metadata of another grpc-js copy passed as call options,
 * and the registered key the per-call options travel under.
 */
import { type CallOptions, Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { CALL_RETRY_OPTIONS, readCallRetryOptions, withRetryOptions } from '../../src/retry/call-options.js';
import type { RetryEvent } from '../../src/retry/events.js';
import { engineCall, retryPolicy, Status } from '../helpers/engine.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const CALL_OPTIONS =
  'withRetryOptions: callOptions must be grpc-js call options (an object such as { deadline })';

/** A policy in service-config form with `maxAttempts`, to tell two policies apart. */
const policyWith = (maxAttempts: number) => ({
  retryPolicy: { ...RETRY_UNAVAILABLE_POLICY.retryPolicy, maxAttempts },
});

describe('withRetryOptions: errors', () => {
  it('a left-out first argument says what to pass', () => {
    expect(() => withRetryOptions(undefined as never)).toThrow(
      new TypeError('withRetryOptions: options must be an object such as { enabled: false }, got nothing'),
    );
  });

  it('a non-boolean enabled is named', () => {
    expect(() => withRetryOptions({ enabled: 'no' as never })).toThrow(
      new TypeError('withRetryOptions: options.enabled must be true or false, got "no"'),
    );
  });

  it('a listener that is not a function is named, alone or in an array', () => {
    expect(() => withRetryOptions({ onEvent: 5 as never })).toThrow(
      new TypeError('withRetryOptions: options.onEvent must be a function or an array of functions, got 5'),
    );
    expect(() => withRetryOptions({ onEvent: [() => undefined, 'x'] as never })).toThrow(
      /^withRetryOptions: options\.onEvent must be a function or an array of functions, got \[/,
    );
  });
});

describe('withRetryOptions given twice', () => {
  it('a later enabled: true turns retries back on', () => {
    const options = withRetryOptions({ enabled: true }, withRetryOptions({ enabled: false }));
    expect(readCallRetryOptions(options)?.enabled).toBe(true);
    const h = engineCall(retryPolicy(), { callOptions: options as Record<string, unknown> });
    h.attempt(0).fail();
    h.clock.runNext();
    expect(h.attempts).toHaveLength(2);
  });

  it('a later policy, enabled left out, is used over an earlier enabled: false (not silently dropped)', () => {
    // A helper turned retries off; the caller gives the call a policy of its own: the later options win.
    const options = withRetryOptions({ policy: policyWith(3) }, withRetryOptions({ enabled: false }));
    expect(readCallRetryOptions(options)).toMatchObject({ enabled: true, policy: { maxAttempts: 3 } });
    const h = engineCall({ methodConfig: [] }, { callOptions: options as Record<string, unknown> });
    h.attempt(0).fail();
    h.clock.runNext();
    expect(h.attempts).toHaveLength(2);
  });

  it('the later policy wins, and an earlier one is kept when the later options give none', () => {
    const later = withRetryOptions({ policy: policyWith(4) }, withRetryOptions({ policy: policyWith(2) }));
    expect(readCallRetryOptions(later)?.policy?.maxAttempts).toBe(4);
    const kept = withRetryOptions({ onEvent: () => undefined }, withRetryOptions({ policy: policyWith(2) }));
    expect(readCallRetryOptions(kept)).toMatchObject({ enabled: true, policy: { maxAttempts: 2 } });
  });

  it('the merged options still steer the call: the earlier policy retries, and both listeners hear it', () => {
    const heard: string[] = [];
    const options = withRetryOptions(
      { onEvent: (e: RetryEvent) => heard.push(`later ${e.type}`) },
      withRetryOptions({ policy: policyWith(2), onEvent: (e) => heard.push(`earlier ${e.type}`) }),
    );
    // The interceptor's own config has no entry for the method: the retries come from the per-call policy.
    const h = engineCall(
      { methodConfig: [] },
      { unobserved: true, callOptions: options as Record<string, unknown> },
    );
    h.attempt(0).fail();
    h.clock.runNext();
    h.attempt(1).fail();
    expect(h.attempts).toHaveLength(2);
    expect(h.status.code).toBe(Status.UNAVAILABLE);
    expect(heard).toContain('earlier retry-scheduled');
    expect(heard.indexOf('earlier retry-scheduled')).toBe(heard.indexOf('later retry-scheduled') - 1);
  });
});

describe('withRetryOptions: a Metadata passed as call options', () => {
  /** What a Metadata of another copy of grpc-js looks like here: not an instance of ours, with its methods. */
  const foreignMetadata = () => ({ getMap: () => ({}), toHttp2Headers: () => ({}), get: () => [] });

  it('is recognized by its methods when another copy of grpc-js made it', () => {
    expect(() => withRetryOptions({ enabled: false }, foreignMetadata() as never)).toThrow(
      new TypeError(
        `${CALL_OPTIONS}, got a grpc.Metadata; the metadata is an argument of its own, before the call options: client.method(request, metadata, withRetryOptions(...), callback)`,
      ),
    );
    expect(() => withRetryOptions({ enabled: false }, new Metadata() as never)).toThrow(
      /got a grpc\.Metadata/,
    );
  });

  it('is not confused with call options that have only one of its two methods', () => {
    for (const callOptions of [
      { deadline: 5, getMap: () => ({}) },
      { deadline: 5, toHttp2Headers: () => ({}) },
    ]) {
      const options = withRetryOptions({ enabled: false }, callOptions as CallOptions);
      expect(options.deadline).toBe(5);
      expect(readCallRetryOptions(options)?.enabled).toBe(false);
    }
  });
});

describe('the key the per-call options travel under', () => {
  it('is the registered symbol every copy and version of the package reads', () => {
    expect(Symbol.keyFor(CALL_RETRY_OPTIONS)).toBe('grpc-retry-hedging.call-retry-options');
    const options = withRetryOptions({ enabled: false });
    expect(
      (options as Record<symbol, unknown>)[Symbol.for('grpc-retry-hedging.call-retry-options')],
    ).toMatchObject({ enabled: false });
  });
});
