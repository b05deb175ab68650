/**
 * Graceful shutdown (grpc-js Server.tryShutdown) while calls are in flight: the calls in flight complete, new calls
 * fail or are retried per their policy (succeeding once a new server is up on the same port), and every call ends
 * exactly once.
 */
import { status } from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import { FlakyServer } from '../../src/testing/index.js';
import {
  bidi,
  type CallOutcome,
  clientStream,
  retryConfig,
  serverStream,
  sleep,
  unary,
} from '../helpers/harness.js';
import { callEnds, type RetryClient, retryClient, waitUntil, within } from './helpers.js';

const servers: FlakyServer[] = [];
const clients: RetryClient[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  for (const s of servers) s.forceStop();
});

/** Retries at about 0.3, 0.9, 1.9 and 2.9 s: spans the shutdown and the restart. */
const SPANNING = retryConfig({
  maxAttempts: 5,
  initialBackoff: '0.3s',
  maxBackoff: '1s',
  backoffMultiplier: 2,
});
const SHORT = retryConfig({ maxAttempts: 2, initialBackoff: '0.01s', maxBackoff: '0.01s' });
const IN_FLIGHT_MS = 500;

describe('graceful shutdown mid-call', () => {
  it('completes calls in flight; new calls fail or retry per policy; every call ends once', async () => {
    const first = await FlakyServer.start();
    servers.push(first);
    const address = first.address;
    const spanning = retryClient(address, SPANNING);
    const short = retryClient(address, SHORT);
    clients.push(spanning, short);
    const abc = [{ payload: 'a' }, { payload: 'b' }, { payload: 'c' }];

    // In flight: every kind of call, each taking IN_FLIGHT_MS on the first server.
    const inFlight: Array<{ id: string; kind: string; outcome: Promise<CallOutcome> }> = [];
    const kinds = ['unary', 'serverStream', 'clientStream', 'bidi'] as const;
    for (let i = 0; i < 12; i++) {
      const kind = kinds[i % 4]!;
      const id = `inflight-${i}`;
      first.script(id, [{ delayMs: IN_FLIGHT_MS, ...(kind === 'serverStream' ? { responses: 2 } : {}) }]);
      const outcome =
        kind === 'unary'
          ? unary(spanning.client, id)
          : kind === 'serverStream'
            ? serverStream(spanning.client, id)
            : kind === 'clientStream'
              ? clientStream(spanning.client, id, abc)
              : bidi(spanning.client, id, abc);
      inFlight.push({ id, kind, outcome });
    }
    await waitUntil(() => first.activeAttempts() === inFlight.length, 5000, 'every call in flight');
    // The client-streaming and bidi attempts have all their messages and the half-close.
    await waitUntil(
      () => inFlight.every((c) => first.attempts(c.id)[0]?.halfClosed === true),
      5000,
      'every half-close',
    );

    const shutdown = first.stop(10_000); // tryShutdown; forceShutdown only after 10 s
    await sleep(100); // the clients have had the GOAWAY
    const newShort = Array.from({ length: 5 }, (_, i) => unary(short.client, `new-short-${i}`));
    const newSpanning = Array.from({ length: 5 }, (_, i) => unary(spanning.client, `new-span-${i}`));

    // Nothing listens any more: the short policy runs out of attempts while the first server drains.
    const shortOutcomes = await within(Promise.all(newShort), 5000, 'the new short-policy calls');
    for (const o of shortOutcomes) {
      expect(o.code, o.error?.details).toBe(status.UNAVAILABLE);
      expect(o.statusEvents).toBe(1);
    }

    // The calls in flight complete, on their only attempt.
    const inFlightOutcomes = await within(
      Promise.all(inFlight.map((c) => c.outcome)),
      5000,
      'calls in flight',
    );
    for (const [index, o] of inFlightOutcomes.entries()) {
      const { id, kind } = inFlight[index]!;
      expect(o.code, `${id}: ${o.error?.details}`).toBe(status.OK);
      expect(o.statusEvents).toBe(1);
      expect(first.attempts(id)).toHaveLength(1);
      if (kind === 'serverStream') expect(o.responses).toHaveLength(2);
      if (kind === 'clientStream') expect(o.responses[0]?.payload).toBe('a,b,c');
      if (kind === 'bidi') expect(o.responses.map((r) => r.payload)).toEqual(['a', 'b', 'c']);
    }
    await within(shutdown, 5000, 'the graceful shutdown');
    // The draining server took no new call.
    for (const a of first.allAttempts()) expect(a.callId).toMatch(/^inflight-/);

    // A new server on the same port: the spanning policy's retries reach it.
    const second = await FlakyServer.start({ port: first.port });
    servers.push(second);
    const spanningOutcomes = await within(Promise.all(newSpanning), 10_000, 'the new spanning calls');
    for (const [i, o] of spanningOutcomes.entries()) {
      expect(o.code, o.error?.details).toBe(status.OK);
      expect(o.statusEvents).toBe(1);
      expect(second.attempts(`new-span-${i}`)).toHaveLength(1); // answered once
    }

    // The interceptor's view: one end per call, attempts within the policy.
    const spanningEnds = callEnds(spanning.events);
    expect(spanningEnds.size).toBe(inFlight.length + newSpanning.length);
    for (const [callNumber, list] of spanningEnds) {
      expect(list).toHaveLength(1);
      const attempts = list[0]!.attempts;
      if (callNumber <= inFlight.length) expect(attempts).toBe(1);
      else {
        expect(attempts).toBeGreaterThanOrEqual(2);
        expect(attempts).toBeLessThanOrEqual(5);
      }
    }
    const shortEnds = callEnds(short.events);
    expect(shortEnds.size).toBe(newShort.length);
    for (const list of shortEnds.values()) {
      expect(list).toHaveLength(1);
      expect(list[0]!.attempts).toBe(2);
    }
  }, 40_000);
});
