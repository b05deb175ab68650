import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FlakyServer } from '../../src/testing/index.js';
import {
  bidi,
  clientStream,
  eventsOf,
  type Harness,
  retryConfig,
  serverStream,
  startHarness,
} from '../helpers/harness.js';

const UNAVAILABLE = status.UNAVAILABLE;
let server: FlakyServer;
let h: Harness;
let n = 0;
const id = () => `stream-${++n}`;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});
beforeEach(async () => {
  h = await startHarness(retryConfig(), {}, server);
  return () => h.close();
});

describe('server streaming', () => {
  it('retries a failure that came before any message', async () => {
    const c = id();
    server.script(c, [{ status: UNAVAILABLE }, { responses: 3 }]);
    const out = await serverStream(h.client, c);
    expect(out.error).toBeUndefined();
    expect(out.responses.map((r) => [r.attempt, r.index])).toEqual([
      [2, 0],
      [2, 1],
      [2, 2],
    ]);
    expect(server.attempts(c)).toHaveLength(2);
  });

  it('the first streamed message commits: a later failure is the result, nothing is replayed', async () => {
    const c = id();
    server.script(c, [{ status: UNAVAILABLE, responses: 2 }, { responses: 3 }]);
    const out = await serverStream(h.client, c);
    expect(out.code).toBe(UNAVAILABLE);
    expect(out.responses.map((r) => r.attempt)).toEqual([1, 1]);
    expect(server.attempts(c)).toHaveLength(1);
    expect(eventsOf(h.events, 'committed')).toEqual([
      expect.objectContaining({ reason: expect.stringMatching(/headers|message/) }),
    ]);
    expect(out.statusEvents).toBe(1);
  });

  it('an OK stream with no messages ends OK', async () => {
    const c = id();
    server.script(c, [{ status: UNAVAILABLE }, { responses: 0 }]);
    const out = await serverStream(h.client, c);
    expect(out.code).toBe(status.OK);
    expect(out.responses).toEqual([]);
    expect(server.attempts(c)).toHaveLength(2);
  });
});

describe('client streaming', () => {
  it('replays every message and the half-close, in order, on each attempt', async () => {
    const c = id();
    server.script(c, [{ status: UNAVAILABLE, failOnFirstMessage: true }, { status: UNAVAILABLE }, {}]);
    const out = await clientStream(h.client, c, [{ payload: 'a' }, { payload: 'b' }, { payload: 'c' }]);
    expect(out.error).toBeUndefined();
    expect(out.responses[0]).toMatchObject({ payload: 'a,b,c', attempt: 3, messagesReceived: 3 });
    const attempts = server.attempts(c);
    expect(attempts).toHaveLength(3);
    expect(attempts[1]?.messages).toEqual(['a', 'b', 'c']);
    expect(attempts[1]?.halfClosed).toBe(true);
    expect(attempts[2]?.messages).toEqual(['a', 'b', 'c']);
  });

  it('replays messages written while an attempt was failing and during the backoff', async () => {
    const slow = await startHarness(retryConfig({ initialBackoff: '0.3s', maxBackoff: '0.3s' }), {}, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE, failOnFirstMessage: true }, {}]);
      const out = await clientStream(
        slow.client,
        c,
        [{ payload: 'm1' }, { payload: 'm2' }, { payload: 'm3' }],
        {
          between: async (i) => {
            if (i === 0) {
              // wait until the first attempt has failed: the next writes land in the backoff
              await server.waitFor(() => server.attempts(c)[0]?.endedWith !== undefined);
            }
          },
        },
      );
      expect(out.error).toBeUndefined();
      expect(out.responses[0]?.payload).toBe('m1,m2,m3');
      expect(server.attempts(c)).toHaveLength(2);
      expect(server.attempts(c)[1]?.messages).toEqual(['m1', 'm2', 'm3']);
    } finally {
      await slow.close();
    }
  });

  it('commits when the replay buffer overflows: the call is still sent, once', async () => {
    const small = await startHarness(retryConfig(), { perRpcBufferBytes: 100 }, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      const out = await clientStream(small.client, c, [
        { payload: 'a' },
        { payload: 'b', blob: Buffer.alloc(200) },
      ]);
      expect(out.code).toBe(UNAVAILABLE);
      const attempts = server.attempts(c);
      expect(attempts).toHaveLength(1);
      expect(attempts[0]?.messages).toEqual(['a', 'b']);
      expect(attempts[0]?.blobBytes).toBe(200);
      expect(eventsOf(small.events, 'committed')).toEqual([
        expect.objectContaining({ reason: 'replay-buffer' }),
      ]);
    } finally {
      await small.close();
    }
  });

  it('a call within the buffer limit is retried', async () => {
    const small = await startHarness(retryConfig(), { perRpcBufferBytes: 1000 }, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      const out = await clientStream(small.client, c, [{ payload: 'a', blob: Buffer.alloc(200) }]);
      expect(out.code).toBe(status.OK);
      expect(server.attempts(c)).toHaveLength(2);
      expect(server.attempts(c)[1]?.blobBytes).toBe(200);
    } finally {
      await small.close();
    }
  });

  it('the total buffer is shared by the calls of one interceptor', async () => {
    const shared = await startHarness(
      retryConfig(),
      { perRpcBufferBytes: 1000, totalBufferBytes: 300 },
      server,
    );
    try {
      const c1 = id();
      const c2 = id();
      server.script(c1, [{ delayMs: 300 }]);
      server.script(c2, [{ status: UNAVAILABLE }, {}]);
      // c1 holds 200 bytes while it waits; c2's 200 bytes no longer fit in the 300-byte total
      const first = clientStream(shared.client, c1, [{ payload: 'x', blob: Buffer.alloc(200) }], {
        between: async () => {
          await server.waitForAttempts(c1, 1);
        },
      });
      await server.waitForAttempts(c1, 1);
      const second = await clientStream(shared.client, c2, [{ payload: 'y', blob: Buffer.alloc(200) }]);
      expect(second.code).toBe(UNAVAILABLE);
      expect(server.attempts(c2)).toHaveLength(1);
      expect((await first).code).toBe(status.OK);
    } finally {
      await shared.close();
    }
  });
});

describe('bidi streaming', () => {
  it('retries before the first response and replays the messages', async () => {
    const c = id();
    server.script(c, [{ status: UNAVAILABLE, failOnFirstMessage: true }, { echo: true }]);
    const out = await bidi(h.client, c, [{ payload: 'p' }, { payload: 'q' }]);
    expect(out.error).toBeUndefined();
    expect(out.responses.map((r) => [r.payload, r.attempt])).toEqual([
      ['p', 2],
      ['q', 2],
    ]);
    expect(server.attempts(c)[1]?.messages).toEqual(['p', 'q']);
  });

  it('after an echoed response the call is committed: later messages go straight through', async () => {
    const c = id();
    server.script(c, [{ echo: true, status: UNAVAILABLE }, {}]);
    const out = await bidi(h.client, c, [{ payload: 'one' }, { payload: 'two' }], {
      between: async (i) => {
        if (i === 0) await server.waitFor(() => (server.attempts(c)[0]?.responsesSent ?? 0) >= 1);
      },
    });
    expect(out.code).toBe(UNAVAILABLE);
    expect(out.responses.map((r) => r.payload)).toEqual(['one', 'two']);
    expect(server.attempts(c)).toHaveLength(1);
  });

  it('retries a server-first stream that failed before the client wrote or half-closed (endBeforeHalfClose)', async () => {
    const c = id();
    server.script(c, [
      { status: UNAVAILABLE, endBeforeHalfClose: true },
      { endBeforeHalfClose: true, responses: 1 },
    ]);
    // The client writes nothing and keeps its side open until the server speaks.
    const out = await bidi(h.client, c, [], { noEnd: true });
    expect(out.error).toBeUndefined();
    expect(out.responses.map((r) => r.attempt)).toEqual([2]);
    expect(server.attempts(c).map((a) => [a.endedWith, a.halfClosed])).toEqual([
      [UNAVAILABLE, false],
      [status.OK, false],
    ]);
  });

  it('headers commit a bidi call', async () => {
    const c = id();
    server.script(c, [{ sendHeaders: true, status: UNAVAILABLE, delayMs: 50 }, {}]);
    const out = await bidi(h.client, c, [{ payload: 'z' }]);
    expect(out.code).toBe(UNAVAILABLE);
    expect(server.attempts(c)).toHaveLength(1);
  });
});
