/**
 * The server process is killed (kill -9) while calls are in flight and restarted on the same port.
 * Every call must end exactly once; calls whose policy spans the restart succeed on the new process (answered
 * once); calls whose attempts run out while the server is down end with UNAVAILABLE; calls that had already
 * committed (response headers) are not retried.
 */
import { status } from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import {
  bidi,
  type CallOutcome,
  clientStream,
  eventsOf,
  retryConfig,
  serverStream,
  unary,
} from '../helpers/harness.js';
import { ChildServer, callEnds, type RetryClient, retryClient, waitUntil, within } from './helpers.js';

const children: ChildServer[] = [];
const clients: RetryClient[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  await Promise.all(children.map((c) => c.stop()));
});

/** Backoff long enough to span the restart: retries at about 0.3, 0.9, 1.9 and 2.9 s. */
const SPANNING = retryConfig({
  maxAttempts: 5,
  initialBackoff: '0.3s',
  maxBackoff: '1s',
  backoffMultiplier: 2,
});
/** Both attempts fall while the server is down. */
const SHORT = retryConfig({ maxAttempts: 2, initialBackoff: '0.01s', maxBackoff: '0.01s' });

interface Planned {
  id: string;
  kind: 'unary' | 'serverStream' | 'clientStream' | 'bidi';
  client: 'spanning' | 'short';
  /** The interceptor's call number on its client (calls are created in order). */
  callNumber: number;
  outcome: Promise<CallOutcome>;
}

describe('server killed mid-call and restarted on the same port', () => {
  it('ends every call exactly once, retried per policy', async () => {
    const [first, second] = await Promise.all([ChildServer.spawn(), ChildServer.spawn()]);
    children.push(first!, second!);
    const port = await first!.bind(0, 'hang');
    const address = `127.0.0.1:${port}`;
    const spanning = retryClient(address, SPANNING);
    const short = retryClient(address, SHORT);
    clients.push(spanning, short);

    const planned: Planned[] = [];
    const counters = { spanning: 0, short: 0 };
    const plan = (id: string, kind: Planned['kind'], which: Planned['client']): void => {
      const { client } = which === 'spanning' ? spanning : short;
      counters[which] += 1;
      const abc = [{ payload: 'a' }, { payload: 'b' }, { payload: 'c' }];
      const outcome =
        kind === 'unary'
          ? unary(client, id)
          : kind === 'serverStream'
            ? serverStream(client, id)
            : kind === 'clientStream'
              ? clientStream(client, id, abc)
              : bidi(client, id, abc);
      planned.push({ id, kind, client: which, callNumber: counters[which], outcome });
    };
    for (let i = 0; i < 8; i++) plan(`span-unary-${i}`, 'unary', 'spanning');
    for (let i = 0; i < 4; i++) plan(`span-server-${i}`, 'serverStream', 'spanning');
    for (let i = 0; i < 4; i++) plan(`span-client-${i}`, 'clientStream', 'spanning');
    for (let i = 0; i < 4; i++) plan(`span-bidi-${i}`, 'bidi', 'spanning');
    // The child sends these response headers at once: committed before the kill.
    for (let i = 0; i < 4; i++) plan(`committed-${i}`, 'unary', 'spanning');
    for (let i = 0; i < 6; i++) plan(`short-${i}`, 'unary', 'short');

    // Every call is in flight on the first process (its attempt arrived, and hangs there).
    await waitUntil(() => first!.attempts.length >= planned.length, 10_000, 'every first attempt');
    await waitUntil(() => eventsOf(spanning.events, 'committed').length >= 4, 5000, 'the committed calls');

    await first!.kill9();
    // While nothing listens on the port, the short policy runs out of attempts.
    const shortOutcomes = await within(
      Promise.all(planned.filter((p) => p.client === 'short').map((p) => p.outcome)),
      10_000,
      'the short-policy calls',
    );
    expect(shortOutcomes.map((o) => o.code)).toEqual(shortOutcomes.map(() => status.UNAVAILABLE));

    expect(await second!.bind(port, 'ok')).toBe(port);
    const outcomes = await within(Promise.all(planned.map((p) => p.outcome)), 15_000, 'every call');

    const ends = { spanning: callEnds(spanning.events), short: callEnds(short.events) };
    expect([...ends.spanning.keys()].length).toBe(counters.spanning);
    expect([...ends.short.keys()].length).toBe(counters.short);
    for (const [index, p] of planned.entries()) {
      const outcome = outcomes[index]!;
      const callEnd = ends[p.client].get(p.callNumber) ?? [];
      const context = `${p.id}: ${JSON.stringify({ code: outcome.code, error: outcome.error?.details, callEnd })}`;
      // Exactly one end, seen by the application and by the interceptor.
      expect(outcome.statusEvents, context).toBe(1);
      expect(callEnd, context).toHaveLength(1);
      expect(callEnd[0]!.code, context).toBe(outcome.code);
      // The first process saw exactly one attempt of every call.
      expect(first!.attemptsOf(p.id), context).toHaveLength(1);
      const attempts = callEnd[0]!.attempts;
      if (p.id.startsWith('committed-')) {
        // Committed on headers: the drop is the result, never retried.
        expect(outcome.code, context).toBe(status.UNAVAILABLE);
        expect(attempts, context).toBe(1);
        expect(second!.attemptsOf(p.id), context).toHaveLength(0);
      } else if (p.client === 'short') {
        expect(outcome.code, context).toBe(status.UNAVAILABLE);
        expect(attempts, context).toBe(2);
        expect(second!.attemptsOf(p.id), context).toHaveLength(0);
      } else {
        expect(outcome.code, context).toBe(status.OK);
        expect(attempts, context).toBeGreaterThanOrEqual(2);
        expect(attempts, context).toBeLessThanOrEqual(5);
        // Answered once, by the new process.
        expect(second!.attemptsOf(p.id), context).toHaveLength(1);
        if (p.kind === 'unary') {
          expect(outcome.responses.map((r) => r.payload)).toEqual(['hello']);
        } else if (p.kind === 'serverStream') {
          expect(outcome.responses).toHaveLength(1);
        } else if (p.kind === 'clientStream') {
          expect(outcome.responses.map((r) => [r.payload, r.messagesReceived])).toEqual([['a,b,c', 3]]);
        } else {
          expect(outcome.responses.map((r) => r.payload)).toEqual(['a', 'b', 'c']);
        }
      }
    }
  }, 60_000);
});
