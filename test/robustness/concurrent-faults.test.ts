/**
 * 1,000 concurrent calls of all four types, under a retry or a hedging policy, each with a random (seeded) fault
 * script: every call ends exactly once with the status its script and policy call for, and the server saw as many
 * attempts as the policy allows.
 */
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AttemptScript, FlakyServer } from '../../src/testing/index.js';
import {
  bidi,
  type CallOutcome,
  clientStream,
  type Harness,
  hedgingConfig,
  retryConfig,
  serverStream,
  startHarness,
  unary,
} from '../helpers/harness.js';
import { callEnds, pick, randomInt, seededRandom, within } from './helpers.js';

const CALLS = 1000;
const SEED = 0x5eed_a6;
const RETRY_ATTEMPTS = 4;
const HEDGE_ATTEMPTS = 3;

type Kind = 'unary' | 'serverStream' | 'clientStream' | 'bidi';

interface Expected {
  code: number;
  /** Exact number of attempts (retry), or a range (hedging: depends on timing). */
  attempts: number | [number, number];
  /** For an OK call: the response payloads; for a call committed by a message: the one it got. */
  payloads?: string[];
  /** Minimum attempt number of the attempt that answered. */
  answeredBy?: number;
}

interface Case {
  id: string;
  kind: Kind;
  mode: 'retry' | 'hedging';
  script: AttemptScript[];
  messages: string[];
  expected: Expected;
  callNumber: number;
  outcome?: CallOutcome;
}

let server: FlakyServer;
let retry: Harness;
let hedge: Harness;
beforeAll(async () => {
  server = await FlakyServer.start();
  retry = await startHarness(
    retryConfig({ maxAttempts: RETRY_ATTEMPTS, initialBackoff: '0.005s', maxBackoff: '0.02s' }),
    {},
    server,
  );
  hedge = await startHarness(
    hedgingConfig({
      maxAttempts: HEDGE_ATTEMPTS,
      hedgingDelay: '0.05s',
      nonFatalStatusCodes: ['UNAVAILABLE'],
    }),
    {},
    server,
  );
});
afterAll(async () => {
  await retry?.close();
  await hedge?.close();
  await server?.stop();
});

/** What an OK attempt answers, given the call's messages. */
function okPayloads(kind: Kind, messages: string[], script: AttemptScript): string[] {
  switch (kind) {
    case 'unary':
      return [messages[0]!];
    case 'serverStream':
      return Array.from({ length: script.responses ?? 1 }, () => messages[0]!);
    case 'clientStream':
      return [messages.join(',')];
    case 'bidi':
      return messages;
  }
}

function retryCase(random: () => number, kind: Kind, messages: string[]): Pick<Case, 'script' | 'expected'> {
  const delay = () => randomInt(random, 0, 4);
  const streaming = kind === 'clientStream' || kind === 'bidi';
  const retryable = (): AttemptScript => {
    const r = random();
    if (r < 0.15) return { status: status.UNAVAILABLE, pushback: String(randomInt(random, 0, 3)) };
    if (streaming && r < 0.35) return { status: status.UNAVAILABLE, failOnFirstMessage: true };
    return { status: status.UNAVAILABLE, delayMs: delay() };
  };
  const finals: Array<() => AttemptScript> = [
    () => ({ delayMs: delay(), ...(kind === 'serverStream' ? { responses: randomInt(random, 1, 3) } : {}) }),
    () => ({ delayMs: delay() }),
    () => ({}),
    () => ({ status: status.INVALID_ARGUMENT }), // not retryable
    () => ({ status: status.UNAVAILABLE, pushback: '-1' }), // do not retry
    () => ({ status: status.UNAVAILABLE }), // retried until the attempts run out
    () => ({ sendHeaders: true, status: status.UNAVAILABLE, delayMs: delay() }), // committed, then failed
    () =>
      kind === 'serverStream'
        ? { responses: 1, status: status.UNAVAILABLE } // committed by a message, then failed
        : { status: status.RESOURCE_EXHAUSTED },
  ];
  const script = [...Array.from({ length: randomInt(random, 0, 5) }, retryable), pick(random, finals)()];
  for (let j = 1; j <= RETRY_ATTEMPTS; j++) {
    const entry = script[Math.min(j, script.length) - 1]!;
    const code = entry.status ?? status.OK;
    if (code === status.OK) {
      return {
        script,
        expected: { code, attempts: j, payloads: okPayloads(kind, messages, entry), answeredBy: j },
      };
    }
    const committedByMessage = kind === 'serverStream' && (entry.responses ?? 0) > 0;
    if (committedByMessage) {
      return { script, expected: { code, attempts: j, payloads: [messages[0]!], answeredBy: j } };
    }
    const stops = code !== status.UNAVAILABLE || entry.pushback === '-1' || entry.sendHeaders === true;
    if (stops || j === RETRY_ATTEMPTS) return { script, expected: { code, attempts: j, payloads: [] } };
  }
  throw new Error('unreachable');
}

function hedgingCase(
  random: () => number,
  kind: Kind,
  messages: string[],
): Pick<Case, 'script' | 'expected'> {
  const shape = randomInt(random, 0, 3);
  if (shape === 0) {
    // Every attempt fails with a non-fatal status at once: each failure sends the next hedge.
    return {
      script: [{ status: status.UNAVAILABLE }],
      expected: { code: status.UNAVAILABLE, attempts: HEDGE_ATTEMPTS, payloads: [] },
    };
  }
  if (shape === 1) {
    // k non-fatal failures, then success.
    const k = randomInt(random, 0, HEDGE_ATTEMPTS - 1);
    const ok: AttemptScript = kind === 'serverStream' ? { responses: 2 } : {};
    return {
      script: [...Array.from({ length: k }, () => ({ status: status.UNAVAILABLE })), ok],
      expected: {
        code: status.OK,
        attempts: [k + 1, HEDGE_ATTEMPTS],
        payloads: okPayloads(kind, messages, ok),
        answeredBy: k + 1,
      },
    };
  }
  if (shape === 2) {
    // A fatal status ends the call, whichever attempt gets it.
    return {
      script: [{ status: status.INVALID_ARGUMENT, delayMs: randomInt(random, 0, 3) }],
      expected: { code: status.INVALID_ARGUMENT, attempts: [1, HEDGE_ATTEMPTS], payloads: [] },
    };
  }
  // A slow first attempt: a hedge overtakes it (or, on a slow machine, it wins).
  return {
    script: [{ delayMs: 300 }, {}],
    expected: { code: status.OK, attempts: [1, HEDGE_ATTEMPTS], payloads: okPayloads(kind, messages, {}) },
  };
}

describe('1,000 concurrent calls with scripted faults', () => {
  it('ends every call exactly once, with the expected status and attempts', async () => {
    const random = seededRandom(SEED);
    const kinds: Kind[] = ['unary', 'serverStream', 'clientStream', 'bidi'];
    const cases: Case[] = [];
    const numbers = { retry: 0, hedging: 0 };
    for (let i = 0; i < CALLS; i++) {
      const kind = pick(random, kinds);
      const mode = random() < 0.65 ? 'retry' : 'hedging';
      const count = kind === 'clientStream' || kind === 'bidi' ? randomInt(random, 1, 4) : 1;
      const messages = Array.from({ length: count }, (_, m) => `c${i}m${m}`);
      const built =
        mode === 'retry' ? retryCase(random, kind, messages) : hedgingCase(random, kind, messages);
      numbers[mode] += 1;
      const id = `c${i}`;
      server.script(id, built.script);
      cases.push({ id, kind, mode, messages, ...built, callNumber: numbers[mode] });
    }

    const started = Date.now();
    const outcomes = cases.map((c) => {
      const { client } = c.mode === 'retry' ? retry : hedge;
      const requests = c.messages.map((payload) => ({ payload }));
      switch (c.kind) {
        case 'unary':
          return unary(client, c.id, requests[0]);
        case 'serverStream':
          return serverStream(client, c.id, requests[0]);
        case 'clientStream':
          return clientStream(client, c.id, requests);
        default:
          return bidi(client, c.id, requests);
      }
    });
    const results = await within(Promise.all(outcomes), 90_000, '1,000 calls');
    const elapsed = Date.now() - started;

    const ends = { retry: callEnds(retry.events), hedging: callEnds(hedge.events) };
    expect(ends.retry.size).toBe(numbers.retry);
    expect(ends.hedging.size).toBe(numbers.hedging);
    const problems: string[] = [];
    const check = (ok: boolean, c: Case, what: string) => {
      if (!ok && problems.length < 20) {
        problems.push(`${c.id} ${c.mode} ${c.kind} ${JSON.stringify(c.script)}: ${what}`);
      }
    };
    for (const [i, c] of cases.entries()) {
      const o = results[i]!;
      const end = ends[c.mode].get(c.callNumber) ?? [];
      const serverAttempts = server.attempts(c.id);
      check(o.statusEvents === 1, c, `${o.statusEvents} status events`);
      check(end.length === 1, c, `${end.length} call-end events`);
      check(
        o.code === c.expected.code,
        c,
        `status ${o.code}, expected ${c.expected.code} (${o.error?.details})`,
      );
      const clientAttempts = end[0]?.attempts ?? -1;
      const [min, max] = Array.isArray(c.expected.attempts)
        ? c.expected.attempts
        : [c.expected.attempts, c.expected.attempts];
      check(
        clientAttempts >= min && clientAttempts <= max,
        c,
        `${clientAttempts} attempts, expected ${min}..${max}`,
      );
      if (c.mode === 'retry') {
        // Every retry reaches the server, in order, with its grpc-previous-rpc-attempts header.
        check(serverAttempts.length === clientAttempts, c, `server saw ${serverAttempts.length} attempts`);
        check(
          serverAttempts.every((a, n) =>
            n === 0 ? a.previousRpcAttempts === undefined : a.previousRpcAttempts === n,
          ),
          c,
          'grpc-previous-rpc-attempts out of order',
        );
      } else {
        // A hedge cancelled before it was sent never reaches the server.
        check(
          serverAttempts.length >= Math.min(min, clientAttempts) && serverAttempts.length <= clientAttempts,
          c,
          `server saw ${serverAttempts.length} attempts, client sent ${clientAttempts}`,
        );
      }
      if (c.expected.payloads) {
        const payloads = o.responses.map((r) => r.payload);
        check(
          JSON.stringify(payloads) === JSON.stringify(c.expected.payloads),
          c,
          `responses ${JSON.stringify(payloads)}`,
        );
      }
      if (c.expected.answeredBy !== undefined && o.responses.length > 0) {
        // Every response comes from one attempt, the one that answered.
        const from = new Set(o.responses.map((r) => r.attempt));
        check(from.size === 1, c, `responses from attempts ${[...from].join(',')}`);
        const by = o.responses[0]!.attempt;
        check(
          c.mode === 'retry' ? by === c.expected.answeredBy : by >= c.expected.answeredBy,
          c,
          `answered by attempt ${by}`,
        );
      }
    }
    expect(problems, `took ${elapsed} ms`).toEqual([]);
    // The mix really covered what it claims.
    const codes = new Set(results.map((r) => r.code));
    expect([...codes].sort((a, b) => a - b)).toEqual(
      [status.OK, status.INVALID_ARGUMENT, status.RESOURCE_EXHAUSTED, status.UNAVAILABLE].sort(
        (a, b) => a - b,
      ),
    );
  }, 120_000);
});
