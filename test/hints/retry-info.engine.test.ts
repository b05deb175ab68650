/**
 * RetryInfo through the call engine, under fake time (the rules of issue 11), and once over grpc-js.
 */
import * as grpc from '@grpc/grpc-js';
import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { encodeRetryInfoStatus, STATUS_DETAILS_METADATA_KEY } from '../../src/retry/retry-info.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { bindLocal } from '../helpers/bind-local.js';
import {
  type EngineCall,
  engineCall,
  eventsOfType,
  type FakeAttempt,
  hedgingPolicy,
  retryPolicy,
  Status,
} from '../helpers/engine.js';

const UNAVAILABLE = Status.UNAVAILABLE;

/** Ends an attempt with `code` and trailers holding a RetryInfo (and a pushback, when given). */
function failWith(
  attempt: FakeAttempt,
  code: number,
  hints: { retryDelay?: number | { seconds: number; nanos: number }; pushback?: string; raw?: Buffer },
): void {
  const metadata = new Metadata();
  if (hints.retryDelay !== undefined) {
    metadata.set(STATUS_DETAILS_METADATA_KEY, encodeRetryInfoStatus({ code, retryDelay: hints.retryDelay }));
  }
  if (hints.raw !== undefined) metadata.set(STATUS_DETAILS_METADATA_KEY, hints.raw);
  if (hints.pushback !== undefined) metadata.set('grpc-retry-pushback-ms', hints.pushback);
  attempt.ended = true;
  attempt.listener?.onReceiveStatus?.({ code, details: `attempt ${attempt.index + 1} failed`, metadata });
}

const scheduled = (h: EngineCall) =>
  eventsOfType(h.events, 'retry-scheduled').map((e) => [e.delayMs, e.reason] as const);

describe('RetryInfo in the engine: retries', () => {
  it('seconds and nanos give the delay, rounded up to the ms, with the reason retry-info', () => {
    const h = engineCall(retryPolicy());
    failWith(h.attempt(0), UNAVAILABLE, { retryDelay: { seconds: 1, nanos: 500_000_001 } });
    h.clock.advance(1500);
    expect(h.attempts).toHaveLength(1);
    h.clock.advance(1);
    expect(h.attempts).toHaveLength(2);
    expect(scheduled(h)).toEqual([[1501, 'retry-info']]);
  });

  it('the backoff restarts from initialBackoff after a RetryInfo delay', () => {
    const h = engineCall(retryPolicy({ maxAttempts: 5 }));
    h.attempt(0).fail();
    h.clock.runNext();
    h.attempt(1).fail();
    h.clock.runNext();
    failWith(h.attempt(2), UNAVAILABLE, { retryDelay: 50 });
    h.clock.runNext();
    h.attempt(3).fail();
    expect(scheduled(h)).toEqual([
      [100, 'backoff'],
      [200, 'backoff'],
      [50, 'retry-info'],
      [100, 'backoff'],
    ]);
  });

  it("A6's pushback trailer wins when both are present", () => {
    const h = engineCall(retryPolicy());
    failWith(h.attempt(0), UNAVAILABLE, { retryDelay: 5000, pushback: '20' });
    expect(scheduled(h)).toEqual([[20, 'pushback']]);
    const stop = engineCall(retryPolicy());
    failWith(stop.attempt(0), UNAVAILABLE, { retryDelay: 10, pushback: '-1' });
    expect(stop.attempts).toHaveLength(1);
    expect(stop.status.code).toBe(UNAVAILABLE);
  });

  it('a delay above the cap (default 60 s) ends the call with its status at once', () => {
    const h = engineCall(retryPolicy());
    failWith(h.attempt(0), UNAVAILABLE, { retryDelay: 60_001 });
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(UNAVAILABLE);
    expect(h.status.details).toBe('attempt 1 failed');
    expect(h.clock.pendingTimers).toBe(0);

    const atCap = engineCall(retryPolicy());
    failWith(atCap.attempt(0), UNAVAILABLE, { retryDelay: 60_000 });
    expect(scheduled(atCap)).toEqual([[60_000, 'retry-info']]);

    const raised = engineCall(retryPolicy(), {
      interceptor: { retryInfo: { maxDelayMs: 120_000 } },
    });
    failWith(raised.attempt(0), UNAVAILABLE, { retryDelay: 90_000 });
    expect(scheduled(raised)).toEqual([[90_000, 'retry-info']]);

    const lowered = engineCall(retryPolicy(), { interceptor: { retryInfo: { maxDelayMs: 100 } } });
    failWith(lowered.attempt(0), UNAVAILABLE, { retryDelay: 101 });
    expect(lowered.status.code).toBe(UNAVAILABLE);
  });

  it('the off switch ignores RetryInfo: the normal backoff applies', () => {
    const h = engineCall(retryPolicy(), { interceptor: { retryInfo: false } });
    failWith(h.attempt(0), UNAVAILABLE, { retryDelay: 5000 });
    expect(scheduled(h)).toEqual([[100, 'backoff']]);
    const over = engineCall(retryPolicy(), { interceptor: { retryInfo: false } });
    failWith(over.attempt(0), UNAVAILABLE, { retryDelay: 600_000 });
    expect(scheduled(over)).toEqual([[100, 'backoff']]);
  });

  it('never makes a non-retryable code retryable; attempts still run out', () => {
    const h = engineCall(retryPolicy());
    failWith(h.attempt(0), Status.INVALID_ARGUMENT, { retryDelay: 10 });
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.INVALID_ARGUMENT);

    const last = engineCall(retryPolicy({ maxAttempts: 2 }));
    last.attempt(0).fail();
    last.clock.runNext();
    failWith(last.attempt(1), UNAVAILABLE, { retryDelay: 10 });
    expect(last.attempts).toHaveLength(2);
    expect(last.status.code).toBe(UNAVAILABLE);
  });

  it('a malformed RetryInfo is ignored: the normal backoff applies', () => {
    const h = engineCall(retryPolicy());
    failWith(h.attempt(0), UNAVAILABLE, { raw: Buffer.from([0x1a, 0x10, 0x01]) });
    expect(scheduled(h)).toEqual([[100, 'backoff']]);
  });
});

describe('RetryInfo in the engine: hedging', () => {
  it('a non-fatal status with RetryInfo sends the next hedge after that delay instead of at once', () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '1s' }));
    failWith(h.attempt(0), UNAVAILABLE, { retryDelay: 250 });
    h.clock.advance(249);
    expect(h.attempts).toHaveLength(1);
    h.clock.advance(1);
    expect(h.attempts).toHaveLength(2);
    expect(
      eventsOfType(h.events, 'hedge-scheduled')
        .filter((e) => e.reason === 'retry-info')
        .map((e) => e.delayMs),
    ).toEqual([250]);
  });

  it('above the cap it stops new hedges; the call ends with the last failure', () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.1s' }));
    h.clock.advance(100);
    expect(h.attempts).toHaveLength(2);
    failWith(h.attempt(0), UNAVAILABLE, { retryDelay: 61_000 });
    h.clock.advance(10_000);
    expect(h.attempts).toHaveLength(2);
    h.attempt(1).fail(UNAVAILABLE);
    expect(h.status.code).toBe(UNAVAILABLE);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('a fatal status stays fatal whatever its RetryInfo says', async () => {
    const h = engineCall(hedgingPolicy());
    failWith(h.attempt(0), Status.INVALID_ARGUMENT, { retryDelay: 10 });
    await h.settle();
    expect(h.status.code).toBe(Status.INVALID_ARGUMENT);
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(1);
  });
});

describe('RetryInfo end to end over grpc-js', () => {
  /** A server whose every attempt fails UNAVAILABLE with the RetryInfo delay the request asks for (ms, as text). */
  async function startServer(): Promise<{ address: string; arrivals: number[]; stop(): void }> {
    const arrivals: number[] = [];
    const server = new grpc.Server();
    const identity = (b: Buffer) => b;
    server.addService(
      {
        Do: {
          path: '/test.Svc/Do',
          requestStream: false,
          responseStream: false,
          requestSerialize: identity,
          requestDeserialize: identity,
          responseSerialize: identity,
          responseDeserialize: identity,
        },
      },
      {
        Do: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
          arrivals.push(Date.now());
          const metadata = new Metadata();
          const retryDelay = Number(call.request.toString());
          metadata.set(STATUS_DETAILS_METADATA_KEY, encodeRetryInfoStatus({ code: UNAVAILABLE, retryDelay }));
          callback({ code: UNAVAILABLE, details: 'busy', metadata });
        },
      },
    );
    const port = await bindLocal(server);
    return { address: `127.0.0.1:${port}`, arrivals, stop: () => server.forceShutdown() };
  }

  it('retries after the server-sent delay, and ends at once on a delay above the cap', async () => {
    const server = await startServer();
    const config = retryPolicy({ maxAttempts: 3, initialBackoff: '0.001s', maxBackoff: '0.001s' });
    const client = new grpc.Client(server.address, grpc.credentials.createInsecure(), {
      interceptors: [createRetryInterceptor(config, { retryInfo: { maxDelayMs: 1000 } })],
      'grpc.enable_retries': 0,
    });
    const call = (delay: string) =>
      new Promise<grpc.StatusObject>((resolve) => {
        const c = client.makeUnaryRequest(
          '/test.Svc/Do',
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.from(delay),
          () => {},
        );
        c.on('status', resolve);
      });
    try {
      const retried = await call('150');
      expect(retried.code).toBe(UNAVAILABLE);
      expect(server.arrivals).toHaveLength(3);
      // 150 ms apart, not the 1 ms backoff (timers never fire early; the upper bound is loose for a loaded machine)
      expect(server.arrivals[1]! - server.arrivals[0]!).toBeGreaterThanOrEqual(145);
      expect(server.arrivals[2]! - server.arrivals[1]!).toBeGreaterThanOrEqual(145);

      server.arrivals.length = 0;
      const capped = await call('5000');
      expect(capped.code).toBe(UNAVAILABLE);
      expect(server.arrivals).toHaveLength(1);
    } finally {
      client.close();
      server.stop();
    }
  });
});
