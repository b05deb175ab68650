/**
 * The cancel-rate limit is kept per connection (the peer of the attempt being cancelled), as the server's
 * rapid-reset guard counts: interceptors with the same settings share a connection's limit, since grpc-js puts the
 * clients of one target on one connection; attempts on different connections do not spend each other's; a
 * `CancelRateLimiter` passed in is one limit for every connection.
 */
import { describe, expect, it } from 'vitest';
import { CancelRateLimiter } from '../../src/hedging/cancel-rate-limiter.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import { type EngineCall, engineCall, eventsOfType, hedgingPolicy, Status, T0 } from '../helpers/engine.js';

const twoHedges = hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 });
/** One cancel, then none for 1,000 s. */
const oneCancel = { burst: 1, ratePerSecond: 0.001, loserCapMs: 5000 };

/** A hedged call (its own interceptor) whose second attempt wins, so that its first is the loser. */
function hedgeWonBySecond(
  clock: FakeClock,
  cancelRateLimit: typeof oneCancel | CancelRateLimiter | undefined,
  peer: string,
): EngineCall {
  const h = engineCall(twoHedges, { clock, peer: () => peer, interceptor: { cancelRateLimit } });
  h.attempt(1).succeed('winner');
  return h;
}

const leftRunning = (h: EngineCall) => eventsOfType(h.events, 'attempt-left-running').map((e) => e.attempt);

describe('engine: the cancel-rate limit per connection', () => {
  it('two interceptors with the same settings share the limit of a connection both reach', async () => {
    const clock = new FakeClock(T0);
    const first = hedgeWonBySecond(clock, { ...oneCancel }, '127.0.0.1:50051');
    const second = hedgeWonBySecond(clock, { ...oneCancel }, '127.0.0.1:50051');
    await first.settle();
    expect(first.attempt(0).cancelled).toEqual({
      code: Status.CANCELLED,
      details: 'another attempt committed',
    });
    expect(leftRunning(first)).toEqual([]);
    expect(second.attempt(0).cancelled).toBeUndefined();
    expect(leftRunning(second)).toEqual([1]);
    expect(second.status.code).toBe(Status.OK);
  });

  it("attempts on another connection do not spend the first one's limit", async () => {
    const clock = new FakeClock(T0);
    const first = hedgeWonBySecond(clock, { ...oneCancel }, '127.0.0.1:50051');
    const second = hedgeWonBySecond(clock, { ...oneCancel }, '127.0.0.1:50052');
    await second.settle();
    expect(first.attempt(0).cancelled).toBeDefined();
    expect(second.attempt(0).cancelled).toEqual({
      code: Status.CANCELLED,
      details: 'another attempt committed',
    });
    expect([...leftRunning(first), ...leftRunning(second)]).toEqual([]);
  });

  it('the default limit is shared the same way (250 at once, then 25/s, per connection)', async () => {
    const clock = new FakeClock(T0);
    const calls: EngineCall[] = [];
    for (let i = 0; i < 251; i++) calls.push(hedgeWonBySecond(clock, undefined, i % 2 === 0 ? 'a:1' : 'b:1'));
    await calls[0]?.settle();
    // 126 losers on a:1 and 125 on b:1, each call through an interceptor of its own: neither is over 250.
    expect(calls.flatMap(leftRunning)).toEqual([]);
    for (let i = 0; i < 250; i++) calls.push(hedgeWonBySecond(clock, undefined, 'a:1'));
    // a:1 had 126 cancels: 124 more fit its burst, the other 126 wait for the rate.
    expect(calls.slice(251).filter((h) => leftRunning(h).length > 0)).toHaveLength(126);
  });

  it('settings of their own are a limit of their own, even on the same connection', async () => {
    const clock = new FakeClock(T0);
    const first = hedgeWonBySecond(clock, { ...oneCancel }, 'a:1');
    const second = hedgeWonBySecond(clock, { ...oneCancel, loserCapMs: 6000 }, 'a:1');
    await first.settle();
    expect(first.attempt(0).cancelled).toBeDefined();
    expect(second.attempt(0).cancelled).toBeDefined();
  });

  it('a CancelRateLimiter passed in is one limit for every connection', async () => {
    const clock = new FakeClock(T0);
    const limiter = new CancelRateLimiter({ ...oneCancel, clock });
    const first = hedgeWonBySecond(clock, limiter, 'a:1');
    const second = hedgeWonBySecond(clock, limiter, 'b:1');
    await first.settle();
    expect(first.attempt(0).cancelled).toBeDefined();
    expect(leftRunning(second)).toEqual([1]);
    expect(limiter.queued).toBe(1);
  });

  it('an application cancel counts against the limit of the connection its attempts are on', async () => {
    const clock = new FakeClock(T0);
    const cancelled = engineCall(twoHedges, {
      clock,
      peer: () => 'a:1',
      interceptor: { cancelRateLimit: { ...oneCancel } },
    });
    cancelled.call.cancelWithStatus(Status.CANCELLED, 'stop');
    const onA = hedgeWonBySecond(clock, { ...oneCancel }, 'a:1');
    const onB = hedgeWonBySecond(clock, { ...oneCancel }, 'b:1');
    await cancelled.settle();
    expect(leftRunning(onA)).toEqual([1]);
    expect(leftRunning(onB)).toEqual([]);
  });
});
