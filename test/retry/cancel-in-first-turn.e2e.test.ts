/**
 * An attempt cancelled in the event-loop turn it was made in. grpc-js makes the call under a started one a few
 * microtasks later, and a cancel before that is lost: the stream is opened all the same and never reset, so the
 * server holds it until the deadline (for good without one). The engine cancels such an attempt on the next turn
 * (src/retry/event-loop-turn.ts). A raw node:http2 server counts the streams it sees open and closed.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';

interface Streams {
  opened: number;
  closed: number;
}

let server: http2.Http2Server;
let address: string;
const seen = new Map<string, Streams>();

beforeAll(async () => {
  server = http2.createServer();
  server.on('stream', (stream, headers) => {
    const tag = String(headers['x-tag'] ?? '');
    const streams = seen.get(tag) ?? { opened: 0, closed: 0 };
    seen.set(tag, streams);
    streams.opened += 1;
    stream.on('close', () => {
      streams.closed += 1;
    });
    stream.on('error', () => {});
    // Read the request; answer each stream OK with an empty message once it has all of it.
    stream.on('data', () => {});
    stream.on('end', () => {
      if (stream.closed) return;
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const SERVICE = 't.Streams';
const PATH = `/${SERVICE}/Call`;
const id = (b: Buffer) => b;

function client(config: object, options: object = {}): grpc.Client {
  return new grpc.Client(address, grpc.credentials.createInsecure(), {
    interceptors: [createRetryInterceptor(config, options)],
    'grpc.enable_retries': 0,
  });
}

/** A bidi call that writes one message and is cancelled at once, in the turn it was made in. */
function cancelledBidi(c: grpc.Client, tag: string): Promise<grpc.status> {
  const metadata = new grpc.Metadata();
  metadata.set('x-tag', tag);
  return new Promise((resolve) => {
    const call = c.makeBidiStreamRequest(PATH, id, id, metadata, { deadline: Date.now() + 60_000 });
    call.on('data', () => {});
    call.on('error', (error: grpc.ServiceError) => resolve(error.code));
    call.write(Buffer.alloc(10));
    call.cancel();
  });
}

function unary(
  c: grpc.Client,
  tag: string,
  size: number,
  cancelAtOnce = false,
): Promise<grpc.ServiceError | null> {
  const metadata = new grpc.Metadata();
  metadata.set('x-tag', tag);
  return new Promise((resolve) => {
    const call = c.makeUnaryRequest(PATH, id, id, Buffer.alloc(size), metadata, (error) => resolve(error));
    if (cancelAtOnce) {
      call.cancel();
    }
  });
}

/** Resolves once every stream tagged `tag` the server saw has closed, or after `ms` (the test then fails). */
async function allClosed(tag: string, ms: number): Promise<Streams> {
  const until = Date.now() + ms;
  for (;;) {
    const streams = seen.get(tag) ?? { opened: 0, closed: 0 };
    if (streams.closed === streams.opened || Date.now() > until) return { ...streams };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('an attempt cancelled in the turn it was made in', () => {
  it('hedging delay 0 and a request over the replay limit: the hedges made with it are reset, not left open', async () => {
    const config = {
      methodConfig: [
        {
          name: [{ service: SERVICE }],
          hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0s', nonFatalStatusCodes: ['UNAVAILABLE'] },
        },
      ],
    };
    const c = client(config, { perRpcBufferBytes: 64 * 1024 });
    try {
      for (let i = 0; i < 3; i++) {
        // No deadline: a stream the client never resets would stay open for good.
        expect(await unary(c, `big-${i}`, 100 * 1024)).toBeNull();
        const streams = await allClosed(`big-${i}`, 2_000);
        // The request went out once; the two hedges made in the same turn reached the server only as far as
        // their headers, if at all, and were reset.
        expect(streams.opened).toBeGreaterThanOrEqual(1);
        expect(streams.closed).toBe(streams.opened);
      }
    } finally {
      c.close();
    }
  });

  it("the application's cancel right after the call is made: no stream is left open", async () => {
    const config = {
      methodConfig: [
        {
          name: [{ service: SERVICE }],
          retryPolicy: {
            maxAttempts: 3,
            initialBackoff: '0.01s',
            maxBackoff: '0.05s',
            backoffMultiplier: 2,
            retryableStatusCodes: ['UNAVAILABLE'],
          },
        },
      ],
    };
    const c = client(config);
    try {
      // A first call, so that the channel is connected and the cancelled ones' streams would open at once.
      expect(await unary(c, 'warm', 10)).toBeNull();
      for (let i = 0; i < 5; i++) {
        expect((await unary(c, `cancelled-${i}`, 10, true))?.code).toBe(grpc.status.CANCELLED);
        expect(await cancelledBidi(c, `cancelled-bidi-${i}`)).toBe(grpc.status.CANCELLED);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (let i = 0; i < 5; i++) {
        for (const tag of [`cancelled-${i}`, `cancelled-bidi-${i}`]) {
          const streams = await allClosed(tag, 2_000);
          expect(streams.closed).toBe(streams.opened);
        }
      }
    } finally {
      c.close();
    }
  });
});
