import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlakyServer } from '../../src/testing/index.js';
import { eventsOf, hedgingConfig, retryConfig, startHarness, unary } from '../helpers/harness.js';

const UNAVAILABLE = status.UNAVAILABLE;
const METHOD = '/grpc_retry_hedging.testing.v1.FlakyTest/Unary';
let server: FlakyServer;
let n = 0;
const id = () => `ev-${++n}`;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

describe('events', () => {
  it('a retried call: every event, in order, with its content', async () => {
    const h = await startHarness(retryConfig(), { random: () => 0.5 }, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE, details: 'down' }, { status: UNAVAILABLE }, {}]);
      await unary(h.client, c);
      const summary = h.events.map((e) => {
        switch (e.type) {
          case 'attempt-start':
            return [e.type, e.attempt, e.kind];
          case 'attempt-end':
            return [e.type, e.attempt, e.code];
          case 'retry-scheduled':
            return [e.type, e.attempt, e.delayMs, e.reason];
          case 'committed':
            return [e.type, e.attempt, e.reason];
          case 'call-end':
            return [e.type, e.code, e.attempts];
          default:
            return [e.type];
        }
      });
      expect(summary).toEqual([
        ['call-start'],
        ['attempt-start', 1, 'original'],
        ['attempt-end', 1, UNAVAILABLE],
        ['retry-scheduled', 2, 10, 'backoff'],
        ['attempt-start', 2, 'retry'],
        ['attempt-end', 2, UNAVAILABLE],
        ['retry-scheduled', 3, 20, 'backoff'],
        ['attempt-start', 3, 'retry'],
        ['committed', 3, 'headers'],
        ['attempt-end', 3, status.OK],
        ['call-end', status.OK, 3],
      ]);
      const callId = h.events[0]!.callId;
      expect(h.events.every((e) => e.method === METHOD && e.callId === callId)).toBe(true);
      const [end] = eventsOf(h.events, 'call-end');
      // Its exact value (the sum of the backoffs) is proved under fake time in test/engine.
      expect(end!.retryDelayMs).toBeGreaterThan(0);
      expect(end!.durationMs).toBeGreaterThanOrEqual(end!.retryDelayMs);
      expect(eventsOf(h.events, 'attempt-end')[0]!.details).toBe('down');
    } finally {
      await h.close();
    }
  });

  it('a hedged call: hedge start, commit of the winner, the loser ends CANCELLED, no retry delay', async () => {
    const h = await startHarness(hedgingConfig({ hedgingDelay: '0.03s', maxAttempts: 2 }), {}, server);
    try {
      const c = id();
      server.script(c, [{ delayMs: 2000 }, {}]);
      await unary(h.client, c);
      await server.waitFor(() => eventsOf(h.events, 'attempt-end').length === 2);
      expect(eventsOf(h.events, 'attempt-start').map((e) => e.kind)).toEqual(['original', 'hedge']);
      expect(eventsOf(h.events, 'hedge-scheduled')).toEqual([
        expect.objectContaining({ attempt: 2, delayMs: 30, reason: 'hedging-delay' }),
      ]);
      expect(eventsOf(h.events, 'committed')).toEqual([expect.objectContaining({ attempt: 2 })]);
      const ends = Object.fromEntries(eventsOf(h.events, 'attempt-end').map((e) => [e.attempt, e.code]));
      expect(ends).toEqual({ 1: status.CANCELLED, 2: status.OK });
      const [end] = eventsOf(h.events, 'call-end');
      expect(end).toMatchObject({ code: status.OK, attempts: 2, retryDelayMs: 0 });
    } finally {
      await h.close();
    }
  });

  it('a cancelled call: one call-end with CANCELLED', async () => {
    const h = await startHarness(retryConfig({ initialBackoff: '5s', maxBackoff: '5s' }), {}, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      await unary(h.client, c, undefined, {
        onCall: (call) =>
          void server
            .waitFor(() => eventsOf(h.events, 'retry-scheduled').length === 1)
            .then(() => call.cancel()),
      });
      expect(eventsOf(h.events, 'call-end')).toEqual([
        expect.objectContaining({ code: status.CANCELLED, attempts: 1 }),
      ]);
      expect(eventsOf(h.events, 'retry-scheduled')).toHaveLength(1);
    } finally {
      await h.close();
    }
  });

  it('a throttled call: the throttled event names the attempt not sent', async () => {
    const h = await startHarness(
      retryConfig({}, { retryThrottling: { maxTokens: 3, tokenRatio: 1 } }),
      {},
      server,
    );
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }]);
      await unary(h.client, c);
      // 3 → 2 (> 1.5) retry, 2 → 1 throttled
      expect(eventsOf(h.events, 'throttled')).toEqual([expect.objectContaining({ attempt: 3, tokens: 1 })]);
      expect(eventsOf(h.events, 'call-end')).toEqual([
        expect.objectContaining({ code: UNAVAILABLE, attempts: 2 }),
      ]);
    } finally {
      await h.close();
    }
  });

  it('a listener that throws never breaks the call, and is reported once', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    const h = await startHarness(
      retryConfig(),
      {
        onEvent: () => {
          throw new Error('listener bug');
        },
      },
      server,
    );
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      const out = await unary(h.client, c);
      expect(out.code).toBe(status.OK);
      expect(server.attempts(c)).toHaveLength(2);
      await new Promise((r) => setTimeout(r, 20));
      const ours = warnings.filter((w) => w.message.includes('listener bug'));
      expect(ours).toHaveLength(1);
    } finally {
      process.off('warning', onWarning);
      await h.close();
    }
  });
});
