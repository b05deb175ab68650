/**
 * An attempt the adaptive throttle below rejected locally (UNAVAILABLE, details starting with its prefix, a
 * do-not-retry pushback): never retried, never counted against the gate, and a later attempt's rejection leaves the
 * call with the server's failure it was retrying, reason `throttled`. Under fake time with scripted attempts.
 */

import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it, vi } from 'vitest';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import {
  isLocalRejection,
  LOCAL_REJECTION_DETAILS_PREFIX,
  localRejectionTrailers,
} from '../../src/shared/local-rejection.js';
import { engineCall, eventsOfType, hedgingPolicy, retryPolicy, Status } from '../helpers/engine.js';

const REJECTED = `${LOCAL_REJECTION_DETAILS_PREFIX} (client-side adaptive throttling of pkg.S: ...)`;
/** The trailers the throttle sends with a rejection it does not want retried: marked, with a do-not-retry pushback. */
function doNotRetry(): Metadata {
  const trailers = localRejectionTrailers();
  trailers.set('grpc-retry-pushback-ms', '-1');
  return trailers;
}

describe('isLocalRejection', () => {
  it('is UNAVAILABLE with the trailers the throttle made, not the text: a server may forward that', () => {
    expect(isLocalRejection({ code: Status.UNAVAILABLE, metadata: doNotRetry() })).toBe(true);
    expect(isLocalRejection({ code: Status.UNAVAILABLE, metadata: localRejectionTrailers() })).toBe(true);
    expect(isLocalRejection({ code: Status.RESOURCE_EXHAUSTED, metadata: doNotRetry() })).toBe(false);
    const forwarded = new Metadata();
    forwarded.set('grpc-retry-pushback-ms', '-1');
    expect(isLocalRejection({ code: Status.UNAVAILABLE, metadata: forwarded })).toBe(false);
    expect(isLocalRejection({ code: Status.UNAVAILABLE, metadata: doNotRetry().clone() })).toBe(false);
    expect(isLocalRejection({ code: Status.UNAVAILABLE })).toBe(false);
  });
});

describe('engine: an attempt rejected locally by an adaptive throttle below', () => {
  it("a retry rejected: the call ends with the server's failure (details, trailers), reason throttled", () => {
    const gate = new RetryThrottle({ maxTokens: 10, tokenRatio: 0.1 });
    const h = engineCall(retryPolicy({ initialBackoff: '0.01s', maxBackoff: '0.01s' }), {
      interceptor: { gate },
    });
    h.attempt(0).status(Status.UNAVAILABLE, 'db shard 7 down', { 'x-shard': '7' });
    h.clock.runNext();
    h.attempt(1).status(Status.UNAVAILABLE, REJECTED, doNotRetry());
    expect(h.attempts).toHaveLength(2);
    expect(h.status.code).toBe(Status.UNAVAILABLE);
    expect(h.status.details).toBe('db shard 7 down');
    expect(h.status.metadata.get('x-shard')).toEqual(['7']);
    expect(eventsOfType(h.events, 'call-end')[0]).toMatchObject({ reason: 'throttled', attempts: 2 });
    // Only the server's failure counted against the gate.
    expect(gate.tokens).toBe(9);
  });

  it('a first attempt rejected: nothing else to report, the call ends with the rejection, the gate untouched', () => {
    const gate = new RetryThrottle({ maxTokens: 10, tokenRatio: 0.1 });
    const h = engineCall(retryPolicy(), { interceptor: { gate } });
    h.attempt(0).status(Status.UNAVAILABLE, REJECTED, doNotRetry());
    expect(h.attempts).toHaveLength(1);
    expect(h.status.details).toBe(REJECTED);
    expect(eventsOfType(h.events, 'call-end')[0]?.reason).toBe('throttled');
    expect(gate.tokens).toBe(10);
  });

  it("with retryLocalRejections (no pushback), a rejection is retried, and the server's failure is still the one shown", () => {
    const h = engineCall(retryPolicy({ maxAttempts: 4, initialBackoff: '0.01s', maxBackoff: '0.01s' }));
    h.attempt(0).status(Status.UNAVAILABLE, 'first');
    h.clock.runNext();
    h.attempt(1).status(Status.UNAVAILABLE, REJECTED, localRejectionTrailers()); // retryable: no pushback
    h.clock.runNext();
    expect(h.attempts).toHaveLength(3);
    h.attempt(2).status(Status.UNAVAILABLE, REJECTED, doNotRetry());
    expect(h.status.details).toBe('first');
  });

  it('the failure shown is the latest a server gave, across several retries; the trailers count the attempts before it, not before the rejected one', () => {
    const h = engineCall(retryPolicy({ maxAttempts: 4, initialBackoff: '0.01s', maxBackoff: '0.01s' }));
    h.attempt(0).status(Status.UNAVAILABLE, 'first');
    h.clock.runNext();
    h.attempt(1).status(Status.UNAVAILABLE, 'second');
    h.clock.runNext();
    h.attempt(2).status(Status.UNAVAILABLE, REJECTED, doNotRetry());
    expect(h.status.details).toBe('second');
    expect(h.status.metadata.get('grpc-previous-rpc-attempts')).toEqual(['1']);
  });

  it('a per-attempt timeout shown after a rejected retry says why no attempt followed', () => {
    const h = engineCall(
      retryPolicy({
        perAttemptRecvTimeout: '0.05s',
        initialBackoff: '0.01s',
        maxBackoff: '0.01s',
        retryableStatusCodes: ['DEADLINE_EXCEEDED'],
      }),
    );
    h.clock.advance(50);
    h.clock.runNext();
    expect(h.attempts).toHaveLength(2);
    h.attempt(1).status(Status.UNAVAILABLE, REJECTED, doNotRetry());
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toBe(
      'per-attempt receive timeout (50 ms) hit on attempt 1; a retry was refused (by the retry gate or an adaptive throttle)',
    );
    expect(h.status.metadata.get('grpc-previous-rpc-attempts')).toEqual([]);
  });

  it("hedging: the trailers count the attempts before the server's failure shown", () => {
    const h = engineCall(
      hedgingPolicy({ maxAttempts: 3, hedgingDelay: '5s', nonFatalStatusCodes: ['UNAVAILABLE'] }),
    );
    h.attempt(0).status(Status.UNAVAILABLE, 'replica draining');
    h.attempt(1).status(Status.UNAVAILABLE, REJECTED, doNotRetry());
    expect(h.status.details).toBe('replica draining');
    expect(h.status.metadata.get('grpc-previous-rpc-attempts')).toEqual([]);
  });

  it("hedging: the hedge sent after a server's failure is rejected: the call ends with the server's failure", () => {
    const h = engineCall(
      hedgingPolicy({ maxAttempts: 3, hedgingDelay: '5s', nonFatalStatusCodes: ['UNAVAILABLE'] }),
    );
    h.attempt(0).status(Status.UNAVAILABLE, 'replica draining');
    expect(h.attempts).toHaveLength(2); // a non-fatal failure sends the next hedge at once
    h.attempt(1).status(Status.UNAVAILABLE, REJECTED, doNotRetry());
    expect(h.attempts).toHaveLength(2); // the do-not-retry pushback stops the hedges
    expect(h.status.details).toBe('replica draining');
    expect(eventsOfType(h.events, 'call-end')[0]).toMatchObject({
      details: 'replica draining',
      reason: 'throttled',
    });
  });

  it('hedging: a rejected hedge is no fatal status, whatever the policy lists: the attempt in flight answers', () => {
    const h = engineCall(
      hedgingPolicy({ maxAttempts: 3, hedgingDelay: '0.05s', nonFatalStatusCodes: ['INTERNAL'] }),
    );
    h.clock.advance(50);
    expect(h.attempts).toHaveLength(2);
    h.attempt(1).status(Status.UNAVAILABLE, REJECTED, doNotRetry());
    expect(h.received.statuses).toEqual([]);
    expect(h.attempt(0).cancelled).toBeUndefined();
    h.clock.advance(50);
    expect(h.attempts).toHaveLength(2); // no further hedge
    h.attempt(0).headers();
    h.attempt(0).message('reply');
    h.attempt(0).status(Status.OK);
    expect(h.status.code).toBe(Status.OK);
    expect(h.received.messages).toEqual(['reply']);
  });
});

// An application may load both builds of the package (ESM and CJS), each with its own modules: an ESM app's retry
// interceptor above the adaptive throttle of a CommonJS library. A second module instance stands for the other build.
describe('engine: an attempt rejected locally by the adaptive throttle of another copy of the package', () => {
  it("is a local rejection too: the call ends with the server's failure, reason throttled, the gate untouched by it", async () => {
    vi.resetModules();
    const other = await import('../../src/shared/local-rejection.js');
    expect(other.localRejectionTrailers).not.toBe(localRejectionTrailers);
    const rejection = other.localRejectionTrailers();
    rejection.set('grpc-retry-pushback-ms', '-1');
    expect(isLocalRejection({ code: Status.UNAVAILABLE, metadata: rejection })).toBe(true);

    const gate = new RetryThrottle({ maxTokens: 10, tokenRatio: 0.1 });
    const h = engineCall(retryPolicy({ initialBackoff: '0.01s', maxBackoff: '0.01s' }), {
      interceptor: { gate },
    });
    h.attempt(0).status(Status.UNAVAILABLE, 'db shard 7 down');
    h.clock.runNext();
    h.attempt(1).status(Status.UNAVAILABLE, REJECTED, rejection);
    expect(h.status.details).toBe('db shard 7 down');
    expect(eventsOfType(h.events, 'call-end')[0]).toMatchObject({ reason: 'throttled', attempts: 2 });
    expect(gate.tokens).toBe(9);
  });
});
