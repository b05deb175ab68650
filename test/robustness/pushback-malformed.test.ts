/**
 * Every malformed `grpc-retry-pushback-ms` value, end to end: the server's trailer says "do not retry", so a call
 * under a retry policy makes exactly one attempt, and a hedged call sends no further hedge. "0" and "5" are valid
 * and retried after that many ms.
 *
 * Some values cannot arrive as sent: HTTP/2 (Node's nghttp2) drops a field value with leading or trailing
 * whitespace, and grpc-js drops a non-ASCII value. For those the client sees no pushback at all; the tests pin
 * that down and check that the interceptor then behaves exactly as without pushback (parsePushbackValues itself
 * refuses them; see the unit table at the end).
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePushbackValues } from '../../src/retry/pushback.js';
import { FlakyServer } from '../../src/testing/index.js';
import {
  eventsOf,
  type Harness,
  hedgingConfig,
  retryConfig,
  startHarness,
  testClient,
  unary,
} from '../helpers/harness.js';
import { type RawGrpcServer, retryClient, startRawGrpcServer } from './helpers.js';

const { UNAVAILABLE, OK } = grpc.status;
const MALFORMED = ['-1', 'abc', '10abc', '', '1e3', '0x10', '+5', '007', '2147483648', '-0', '1.5'];
/** Sent fine, but dropped by the transport before the client sees it. */
const DROPPED_BY_HTTP2 = [' 5', '5 '];

let server: FlakyServer;
let retry: Harness;
let hedge: Harness;
let raw: RawGrpcServer;
beforeAll(async () => {
  server = await FlakyServer.start();
  retry = await startHarness(
    retryConfig({ maxAttempts: 3, initialBackoff: '0.01s', maxBackoff: '0.01s' }),
    {},
    server,
  );
  // A long hedging delay: only a failure's pushback (or its absence) can send the second hedge early.
  hedge = await startHarness(hedgingConfig({ maxAttempts: 3, hedgingDelay: '10s' }), {}, server);
  raw = await startRawGrpcServer();
});
afterAll(async () => {
  await retry.close();
  await hedge.close();
  await server.stop();
  await raw.close();
});

let seq = 0;
const nextId = (what: string) => `pb-${what}-${++seq}`;

/** The pushback values a plain client (no interceptor) receives for a trailer sent as `value`. */
async function received(value: string): Promise<string[]> {
  const id = nextId('plain');
  server.script(id, [{ status: UNAVAILABLE, pushback: value }]);
  const plain = testClient(server.address);
  try {
    const outcome = await unary(plain, id);
    return (outcome.trailers?.get('grpc-retry-pushback-ms') ?? []).map(String);
  } finally {
    plain.close();
  }
}

describe('malformed pushback, end to end', () => {
  it.each(MALFORMED)('retry policy, pushback %j: exactly one attempt', async (value) => {
    expect(await received(value)).toEqual([value]); // arrives as sent
    const id = nextId('retry');
    server.script(id, [{ status: UNAVAILABLE, pushback: value }, {}]);
    const before = retry.events.length;
    const outcome = await unary(retry.client, id);
    expect(outcome.code).toBe(UNAVAILABLE);
    expect(outcome.statusEvents).toBe(1);
    expect(server.attempts(id)).toHaveLength(1);
    const events = retry.events.slice(before);
    expect(eventsOf(events, 'retry-scheduled')).toEqual([]);
    expect(eventsOf(events, 'call-end').map((e) => e.attempts)).toEqual([1]);
  });

  it.each(MALFORMED)('hedging policy, pushback %j: no further hedge', async (value) => {
    const id = nextId('hedge');
    server.script(id, [{ status: UNAVAILABLE, pushback: value }, {}]);
    const before = hedge.events.length;
    const outcome = await unary(hedge.client, id);
    expect(outcome.code).toBe(UNAVAILABLE);
    expect(server.attempts(id)).toHaveLength(1);
    expect(eventsOf(hedge.events.slice(before), 'call-end').map((e) => e.attempts)).toEqual([1]);
  });

  it.each(['0', '5'])('pushback %j: retried after that many ms', async (value) => {
    const id = nextId('valid');
    server.script(id, [{ status: UNAVAILABLE, pushback: value }, {}]);
    const before = retry.events.length;
    const outcome = await unary(retry.client, id);
    expect(outcome.code).toBe(OK);
    expect(server.attempts(id)).toHaveLength(2);
    const scheduled = eventsOf(retry.events.slice(before), 'retry-scheduled');
    expect(scheduled.map((e) => [e.reason, e.delayMs])).toEqual([['pushback', Number(value)]]);
    // Hedging: the next hedge goes after that many ms instead of the 10 s hedging delay.
    const hid = nextId('valid-hedge');
    server.script(hid, [{ status: UNAVAILABLE, pushback: value }, {}]);
    const hedgeBefore = hedge.events.length;
    const hedged = await unary(hedge.client, hid);
    expect(hedged.code).toBe(OK);
    expect(server.attempts(hid)).toHaveLength(2);
    const hedges = eventsOf(hedge.events.slice(hedgeBefore), 'hedge-scheduled').filter(
      (e) => e.attempt === 2,
    );
    expect(hedges.map((e) => e.reason)).toContain('pushback');
  });

  it.each(DROPPED_BY_HTTP2)(
    'pushback %j never reaches the client: retried by backoff, as with none',
    async (value) => {
      expect(await received(value)).toEqual([]);
      const id = nextId('ws');
      server.script(id, [{ status: UNAVAILABLE, pushback: value }, {}]);
      const before = retry.events.length;
      const outcome = await unary(retry.client, id);
      expect(outcome.code).toBe(OK);
      expect(server.attempts(id)).toHaveLength(2);
      expect(eventsOf(retry.events.slice(before), 'retry-scheduled').map((e) => e.reason)).toEqual([
        'backoff',
      ]);
    },
  );

  describe('values a grpc-js server cannot send (bare HTTP/2 server)', () => {
    const run = async (headers: Record<string, string | string[]>) => {
      raw.answer([{ status: UNAVAILABLE, headers }, { status: OK }]);
      const client = retryClient(
        raw.address,
        retryConfig({ maxAttempts: 3, initialBackoff: '0.01s', maxBackoff: '0.01s' }),
      );
      try {
        const outcome = await unary(client.client, 'raw');
        return { outcome, requests: raw.requests, events: client.events };
      } finally {
        client.close();
      }
    };

    it('"٣" written as a JS string: Node sends its low byte ("c"), unparseable: exactly one attempt', async () => {
      const { outcome, requests, events } = await run({ 'grpc-retry-pushback-ms': '٣' });
      expect(outcome.code).toBe(UNAVAILABLE);
      expect(requests).toBe(1);
      expect(eventsOf(events, 'call-end').map((e) => e.attempts)).toEqual([1]);
    });

    it('"٣" as UTF-8 bytes: grpc-js drops the non-ASCII value, so the call is retried by backoff', async () => {
      const { outcome, requests, events } = await run({
        'grpc-retry-pushback-ms': Buffer.from('٣', 'utf8').toString('latin1'),
      });
      expect(outcome.code).toBe(OK);
      expect(requests).toBe(2);
      expect(eventsOf(events, 'retry-scheduled').map((e) => e.reason)).toEqual(['backoff']);
    });

    it('a repeated pushback ("5", "5"): exactly one attempt', async () => {
      const { outcome, requests } = await run({ 'grpc-retry-pushback-ms': ['5', '5'] });
      expect(outcome.code).toBe(UNAVAILABLE);
      expect(requests).toBe(1);
    });

    it('a well-formed "5" from the bare server is retried (the bare server itself is sound)', async () => {
      const { outcome, requests, events } = await run({ 'grpc-retry-pushback-ms': '5' });
      expect(outcome.code).toBe(OK);
      expect(requests).toBe(2);
      expect(eventsOf(events, 'retry-scheduled').map((e) => [e.reason, e.delayMs])).toEqual([
        ['pushback', 5],
      ]);
    });
  });

  it('the parser refuses every malformed value, including those the transport drops', () => {
    for (const value of [...MALFORMED, ...DROPPED_BY_HTTP2, '٣', 'c']) {
      expect(parsePushbackValues([value]).kind, JSON.stringify(value)).toBe('do-not-retry');
    }
    expect(parsePushbackValues(['0'])).toEqual({ kind: 'retry-after', delayMs: 0 });
    expect(parsePushbackValues(['5'])).toEqual({ kind: 'retry-after', delayMs: 5 });
    expect(parsePushbackValues(['5', '5']).kind).toBe('do-not-retry');
  });
});
