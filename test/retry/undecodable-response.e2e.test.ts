/**
 * A response message grpc-js cannot decode (the compressed flag with no `grpc-encoding`, a `grpc-encoding` it does
 * not support): grpc-js 1.14 ends the call with a status made of its decompression error, an `Error` that is no
 * status, so the status has neither `code` nor `details`. The interceptor must end the call as grpc-js does, once,
 * with no exception out of grpc-js's status callback. Served by a server written on node:http2, which can send what
 * a grpc-js server never does.
 */
import http2 from 'node:http2';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { bufferClientConstructor, bufferMethod } from '../helpers/buffer-service.js';
import { collectUncaught, sleep } from '../property/signal.js';

const SERVICE = {
  Unary: bufferMethod('undecodable.S', 'Unary', false, false),
  Down: bufferMethod('undecodable.S', 'Down', false, true),
};
type Callback = (e: grpc.ServiceError | null, v?: Buffer) => void;
type Client = grpc.Client & {
  Unary(
    request: Buffer,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    cb: Callback,
  ): grpc.ClientUnaryCall;
  Down(
    request: Buffer,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
  ): grpc.ClientReadableStream<Buffer>;
};
const ClientCtor = bufferClientConstructor<Client>(SERVICE);
/** The minor version of the grpc-js the tests run on (CI also runs them on the peer range's oldest, 1.10.10). */
const GRPC_JS_MINOR = Number(
  (createRequire(import.meta.url)('@grpc/grpc-js/package.json') as { version: string }).version.split('.')[1],
);

const POLICIES = {
  retry: {
    retryPolicy: {
      maxAttempts: 3,
      initialBackoff: '0.01s',
      maxBackoff: '0.1s',
      backoffMultiplier: 2,
      retryableStatusCodes: ['UNAVAILABLE'],
    },
  },
  hedging: { hedgingPolicy: { maxAttempts: 3, hedgingDelay: '10s', nonFatalStatusCodes: ['UNAVAILABLE'] } },
};

/** One gRPC message frame of `body`, with the compressed flag as given. */
function frame(body: Buffer, compressed: boolean): Buffer {
  const header = Buffer.alloc(5);
  header[0] = compressed ? 1 : 0;
  header.writeUInt32BE(body.length, 1);
  return Buffer.concat([header, body]);
}

/** How the server answers: headers, one undecodable message, then an OK status. */
const RESPONSES = {
  'the compressed flag with no grpc-encoding': { encoding: undefined, body: Buffer.from('abc') },
  'an encoding grpc-js does not know (zstd)': { encoding: 'zstd', body: Buffer.from('abc') },
  // grpc-js words this one as a status of its own: the interceptor passes it on too.
  'gzip that does not inflate': { encoding: 'gzip', body: Buffer.from('not gzip at all') },
};
type ResponseName = keyof typeof RESPONSES;

let server: http2.Http2Server;
let address = '';

beforeAll(async () => {
  server = http2.createServer();
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    stream.resume();
    const response = RESPONSES[String(headers['x-response']) as ResponseName];
    stream.respond(
      {
        ':status': 200,
        'content-type': 'application/grpc',
        ...(response.encoding === undefined ? {} : { 'grpc-encoding': response.encoding }),
      },
      { waitForTrailers: true },
    );
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(frame(response.body, true));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

interface Seen {
  readonly events: string[];
  readonly uncaught: string[];
}

/** Makes one call of `type` and records how it ends (code and details as given, whatever their type). */
async function observe(
  interceptors: grpc.Interceptor[],
  type: 'unary' | 'server-stream',
  response: ResponseName,
): Promise<Seen> {
  const client = new ClientCtor(address, grpc.credentials.createInsecure(), {
    interceptors,
    'grpc.enable_retries': 0,
  });
  const events: string[] = [];
  // A deadline's details (older grpc-js ends such a call at its deadline) list timings that differ from run to run.
  const show = (value: unknown): string =>
    `${typeof value} ${String(value).replace(/^Deadline exceeded after .*/s, 'Deadline exceeded after ...')}`;
  try {
    const { uncaught } = await collectUncaught(async () => {
      const metadata = new grpc.Metadata();
      metadata.set('x-response', response);
      const options = { deadline: Date.now() + 2000 };
      const call =
        type === 'unary'
          ? client.Unary(Buffer.from('q'), metadata, options, (error) =>
              events.push(`callback ${show(error?.code)} / ${show(error?.details)}`),
            )
          : client.Down(Buffer.from('q'), metadata, options);
      if (type === 'server-stream') {
        call.on('data', () => events.push('data'));
        call.on('error', (error: grpc.ServiceError) => events.push(`error ${show(error.code)}`));
      }
      call.on('status', (status: grpc.StatusObject) =>
        events.push(`status ${show(status.code)} / ${show(status.details)}`),
      );
      // The call ends at once (bare); a call that does not end by its deadline shows as a different record.
      for (let waited = 0; waited < 2500 && !events.some((e) => e.startsWith('status')); waited += 20) {
        await sleep(20);
      }
      await sleep(20);
    });
    return { events, uncaught };
  } finally {
    client.close();
  }
}

describe('a response grpc-js cannot decode', () => {
  for (const response of Object.keys(RESPONSES) as ResponseName[]) {
    for (const type of ['unary', 'server-stream'] as const) {
      it(`${response}, ${type}: the call ends as without the interceptor, once, with nothing thrown`, async () => {
        const bare = await observe([], type, response);
        if (GRPC_JS_MINOR >= 14 || bare.uncaught.length === 0) {
          expect(bare.uncaught).toEqual([]);
          expect(bare.events.filter((e) => e.startsWith('status'))).toHaveLength(1);
        } else {
          // Older grpc-js (1.10) throws a bad gzip's inflate error out of its own stream handler, with no
          // interceptor: the interceptor must then change nothing either.
          expect(bare.uncaught).toEqual(['incorrect header check']);
        }
        for (const [name, policy] of Object.entries(POLICIES)) {
          const config = { methodConfig: [{ name: [{ service: 'undecodable.S' }], ...policy }] };
          const seen = await observe([createRetryInterceptor(config)], type, response);
          expect(seen, name).toEqual(bare);
        }
      });
    }
  }
});
