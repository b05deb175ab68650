/**
 * The core A6 rules, once per call type: unary, server streaming, client streaming and bidi.
 */
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlakyServer } from '../../src/testing/index.js';
import {
  bidi,
  type CallOpts,
  type CallOutcome,
  cancelDuringBackoff,
  clientStream,
  type FlakyClient,
  hedgingConfig,
  retryConfig,
  serverStream,
  startHarness,
  testClient,
  unary,
} from '../helpers/harness.js';

const UNAVAILABLE = status.UNAVAILABLE;
let server: FlakyServer;
let n = 0;
const id = () => `types-${++n}`;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

type Runner = (client: FlakyClient, callId: string, opts?: CallOpts) => Promise<CallOutcome>;
const callTypes: Array<[string, Runner]> = [
  ['unary', (c, callId, opts) => unary(c, callId, { payload: 'p' }, opts)],
  ['server streaming', (c, callId, opts) => serverStream(c, callId, { payload: 'p' }, opts)],
  [
    'client streaming',
    (c, callId, opts) => clientStream(c, callId, [{ payload: 'p' }, { payload: 'q' }], opts),
  ],
  ['bidi', (c, callId, opts) => bidi(c, callId, [{ payload: 'p' }, { payload: 'q' }], opts)],
];

describe.each(callTypes)('%s', (_name, run) => {
  it('retries twice, with grpc-previous-rpc-attempts 1 and 2, then succeeds', async () => {
    const h = await startHarness(retryConfig(), {}, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, { status: UNAVAILABLE }, {}]);
      const out = await run(h.client, c);
      expect(out.code).toBe(status.OK);
      expect(out.statusEvents).toBe(1);
      expect(out.responses.length).toBeGreaterThan(0);
      expect(out.responses.every((r) => r.attempt === 3)).toBe(true);
      expect(server.attempts(c).map((a) => a.previousRpcAttempts)).toEqual([undefined, 1, 2]);
      expect(out.trailers?.get('grpc-previous-rpc-attempts')).toEqual(['2']);
      expect(out.headers?.get('grpc-previous-rpc-attempts')).toEqual(['2']);
    } finally {
      await h.close();
    }
  });

  it("a retried call's response headers carry grpc-previous-rpc-attempts, as with grpc-js's own retries", async () => {
    const config = retryConfig();
    const builtIn = testClient(server.address, [], {
      'grpc.enable_retries': 1,
      'grpc.service_config': JSON.stringify(config),
    });
    const h = await startHarness(config, {}, server);
    try {
      const outcomes: CallOutcome[] = [];
      for (const client of [builtIn, h.client]) {
        const c = id();
        server.script(c, [{ status: UNAVAILABLE }, {}]);
        outcomes.push(await run(client, c));
      }
      const [bare, intercepted] = outcomes.map((o) => ({
        code: o.code,
        headers: o.headers?.get('grpc-previous-rpc-attempts'),
      }));
      expect(bare).toEqual({ code: status.OK, headers: ['1'] });
      expect(intercepted).toEqual(bare);
    } finally {
      builtIn.close();
      await h.close();
    }
  });

  it('a do-not-retry pushback ends the call after one attempt', async () => {
    const h = await startHarness(retryConfig(), {}, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE, pushback: '-1' }, {}]);
      const out = await run(h.client, c);
      expect(out.code).toBe(UNAVAILABLE);
      expect(server.attempts(c)).toHaveLength(1);
    } finally {
      await h.close();
    }
  });

  it('the deadline passing during the backoff ends the call with DEADLINE_EXCEEDED', async () => {
    const h = await startHarness(retryConfig({ initialBackoff: '5s', maxBackoff: '5s' }), {}, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      const out = await run(h.client, c, { deadlineMs: 300 });
      expect(out.code).toBe(status.DEADLINE_EXCEEDED);
      expect(out.statusEvents).toBe(1);
      expect(server.attempts(c)).toHaveLength(1);
    } finally {
      await h.close();
    }
  });

  it('cancel during the backoff ends the call once with CANCELLED', async () => {
    const h = await startHarness(retryConfig({ initialBackoff: '5s', maxBackoff: '5s' }), {}, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      const out = await run(h.client, c, cancelDuringBackoff());
      expect(out.code).toBe(status.CANCELLED);
      expect(out.statusEvents).toBe(1);
      expect(server.attempts(c)).toHaveLength(1);
    } finally {
      await h.close();
    }
  });

  it('response headers commit the call: a later failure is the result', async () => {
    const h = await startHarness(retryConfig(), {}, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE, sendHeaders: true, delayMs: 20 }, {}]);
      const out = await run(h.client, c);
      expect(out.code).toBe(UNAVAILABLE);
      expect(out.headers?.get('x-flaky-attempt')).toEqual(['1']);
      expect(server.attempts(c)).toHaveLength(1);
    } finally {
      await h.close();
    }
  });

  it('hedging: a slow first attempt is overtaken, cancelled on the server, and the hedge saw every message', async () => {
    const h = await startHarness(hedgingConfig({ hedgingDelay: '0.05s', maxAttempts: 2 }), {}, server);
    try {
      const c = id();
      server.script(c, [{ delayMs: 3000 }, {}]);
      const out = await run(h.client, c);
      expect(out.code).toBe(status.OK);
      expect(out.responses.every((r) => r.attempt === 2)).toBe(true);
      const [first, second] = server.attempts(c);
      expect(second?.messages).toEqual(first?.messages);
      await server.waitFor(() => server.attempts(c)[0]?.cancelled === true);
    } finally {
      await h.close();
    }
  });
});
