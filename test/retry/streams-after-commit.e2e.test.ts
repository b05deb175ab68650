/**
 * Everyday streaming patterns end through the interceptor exactly as they end on a bare client (end to end, on
 * 127.0.0.1): a chat that ends after the reply, an upload that awaits each write, an upload past the replay
 * limit, and a listener that cancels the call from inside an event. Each ran into its deadline (or threw out of a
 * grpc-js callback) before the fixes these tests pin down.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetryInterceptor } from '../../src/index.js';
import type { RetryInterceptorOptions } from '../../src/retry/interceptor-options.js';
import { bindLocal } from '../helpers/bind-local.js';
import { bufferClientConstructor, bufferMethod } from '../helpers/buffer-service.js';

const method = (name: string, requestStream: boolean, responseStream: boolean) =>
  bufferMethod('smoke.S', name, requestStream, responseStream);
const SERVICE = {
  Up: method('Up', true, false),
  Echo: method('Echo', true, true),
  HeadersFirst: method('HeadersFirst', true, true),
  FailFirst: method('FailFirst', false, false),
  Collect: method('Collect', true, false),
};
type Client = grpc.Client & {
  Up(
    options: grpc.CallOptions,
    cb: (e: grpc.ServiceError | null, v?: Buffer) => void,
  ): grpc.ClientWritableStream<Buffer>;
  Echo(options: grpc.CallOptions): grpc.ClientDuplexStream<Buffer, Buffer>;
  HeadersFirst(options: grpc.CallOptions): grpc.ClientDuplexStream<Buffer, Buffer>;
  Collect(
    options: grpc.CallOptions,
    cb: (e: grpc.ServiceError | null, v?: Buffer) => void,
  ): grpc.ClientWritableStream<Buffer>;
  FailFirst(
    request: Buffer,
    options: grpc.CallOptions,
    cb: (e: grpc.ServiceError | null, v?: Buffer) => void,
  ): grpc.ClientUnaryCall;
};
const ClientCtor = bufferClientConstructor<Client>(SERVICE);

const RETRY = {
  methodConfig: [
    {
      name: [{}],
      retryPolicy: {
        maxAttempts: 3,
        initialBackoff: '0.01s',
        maxBackoff: '0.1s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
};
const HEDGE = {
  methodConfig: [
    {
      name: [{}],
      hedgingPolicy: { maxAttempts: 2, hedgingDelay: '1s', nonFatalStatusCodes: ['UNAVAILABLE'] },
    },
  ],
};
const DEADLINE_MS = 5000;
const failed = new Set<string>();

let server: grpc.Server;
let address: string;
beforeAll(async () => {
  server = new grpc.Server();
  server.addService(SERVICE as never, {
    Up(call: grpc.ServerReadableStream<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) {
      let bytes = 0;
      call.on('data', (m: Buffer) => {
        bytes += m.length;
      });
      call.on('end', () => cb(null, Buffer.from(String(bytes))));
      call.on('error', () => {});
    },
    Echo(call: grpc.ServerDuplexStream<Buffer, Buffer>) {
      call.on('data', (m: Buffer) => call.write(m));
      call.on('end', () => call.end());
      call.on('error', () => {});
    },
    HeadersFirst(call: grpc.ServerDuplexStream<Buffer, Buffer>) {
      call.sendMetadata(new grpc.Metadata());
      call.on('data', () => {});
      call.on('end', () => call.end());
      call.on('error', () => {});
    },
    // The first byte of each message, in order; a call whose metadata says `fail-first` fails its first attempt
    // once it has read everything.
    Collect(call: grpc.ServerReadableStream<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) {
      const seen: number[] = [];
      call.on('data', (m: Buffer) => seen.push(m[0] ?? -1));
      call.on('end', () => {
        const key = call.metadata.get('fail-first')[0];
        if (key !== undefined && !failed.has(String(key))) {
          failed.add(String(key));
          cb({ code: grpc.status.UNAVAILABLE, details: 'first attempt fails' });
          return;
        }
        cb(null, Buffer.from(seen.join(',')));
      });
      call.on('error', () => {});
    },
    FailFirst(call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) {
      const key = call.request.toString();
      if (!failed.has(key)) {
        failed.add(key);
        cb({ code: grpc.status.UNAVAILABLE, details: 'first attempt fails' });
        return;
      }
      cb(null, Buffer.from('ok'));
    },
  });
  const port = await bindLocal(server);
  address = `127.0.0.1:${port}`;
});
afterAll(() => server.forceShutdown());

function client(config: object | undefined, options: RetryInterceptorOptions = {}): Client {
  const interceptors = config ? [createRetryInterceptor(config, options)] : [];
  return new ClientCtor(address, grpc.credentials.createInsecure(), { interceptors });
}
const deadline = () => ({ deadline: Date.now() + DEADLINE_MS });

function chat(c: Client): Promise<{ code: number; echoes: number }> {
  return new Promise((resolve) => {
    let echoes = 0;
    const call = c.Echo(deadline());
    call.on('data', () => {
      echoes += 1;
      call.end();
    });
    call.on('error', () => {});
    call.on('status', (s) => resolve({ code: s.code, echoes }));
    call.write(Buffer.from('hello'));
  });
}

function headersFirst(c: Client): Promise<number> {
  return new Promise((resolve) => {
    const call = c.HeadersFirst(deadline());
    call.on('data', () => {});
    call.on('error', () => {});
    call.on('status', (s) => resolve(s.code));
    call.on('metadata', () => setTimeout(() => call.end(), 50));
    call.write(Buffer.from('x'));
  });
}

async function upload(c: Client, chunks: number, chunkBytes: number, pauseMs = 0): Promise<string> {
  let result: Promise<string> = Promise.resolve('');
  const call = await new Promise<grpc.ClientWritableStream<Buffer>>((resolveCall) => {
    result = new Promise((resolve) => {
      const stream = c.Up(deadline(), (e, v) => resolve(e ? `error ${e.code}` : String(v)));
      resolveCall(stream);
    });
  });
  for (let i = 0; i < chunks; i++) {
    await new Promise<void>((r) => call.write(Buffer.alloc(chunkBytes), () => r()));
  }
  if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
  call.end();
  return result;
}

/**
 * Writes 0, 1, ... n-1 as the first byte of each message, awaiting each write callback; `reuse`: one Buffer
 * refilled after each callback, as the Node stream contract allows.
 */
async function collect(c: Client, n: number, reuse: boolean, failFirst?: string): Promise<string> {
  const metadata = new grpc.Metadata();
  if (failFirst) metadata.set('fail-first', failFirst);
  let result: Promise<string> = Promise.resolve('');
  const call = await new Promise<grpc.ClientWritableStream<Buffer>>((resolveCall) => {
    result = new Promise((resolve) => {
      const stream = (c.Collect as unknown as (...a: unknown[]) => grpc.ClientWritableStream<Buffer>)(
        metadata,
        deadline(),
        (e: grpc.ServiceError | null, v?: Buffer) => resolve(e ? `error ${e.code}` : String(v)),
      );
      resolveCall(stream);
    });
  });
  const shared = Buffer.alloc(16);
  for (let i = 0; i < n; i++) {
    const message = reuse ? shared : Buffer.alloc(16);
    message.fill(i);
    await new Promise<void>((r) => call.write(message, () => r()));
  }
  call.end();
  return result;
}

const MODES: Record<string, { config: object | undefined; options?: RetryInterceptorOptions }> = {
  bare: { config: undefined },
  retry: { config: RETRY },
  hedging: { config: HEDGE },
};

describe.each(Object.entries(MODES))('streams end as on a bare client: %s', (_mode, { config }) => {
  it('a bidi chat that ends after the reply ends OK with one echo', async () => {
    const c = client(config);
    expect(await chat(c)).toEqual({ code: grpc.status.OK, echoes: 1 });
    c.close();
  });

  it('server headers first, end() 50 ms after the headers: OK', async () => {
    const c = client(config);
    expect(await headersFirst(c)).toBe(grpc.status.OK);
    c.close();
  });

  it('an upload of 2 MiB in 64 KiB chunks, awaiting each write, past the 1 MiB replay limit: all bytes counted', async () => {
    const c = client(config);
    expect(await upload(c, 32, 65536)).toBe(String(2 * 1048576));
    c.close();
  });

  it('an upload that refills one Buffer after each write callback, on a client not yet connected: every value arrives', async () => {
    const c = client(config);
    expect(await collect(c, 20, true)).toBe(Array.from({ length: 20 }, (_, i) => i).join(','));
    c.close();
  });

  it('300 × 1 KiB past a 64 KiB replay limit, end() 20 ms later: all bytes counted', async () => {
    const c = config
      ? new ClientCtor(address, grpc.credentials.createInsecure(), {
          interceptors: [createRetryInterceptor(config, { perRpcBufferBytes: 65536 })],
        })
      : client(undefined);
    expect(await upload(c, 300, 1024, 20)).toBe(String(300 * 1024));
    c.close();
  });
});

describe('a cancel from an event listener', () => {
  it('inside retry-scheduled: the call ends CANCELLED, nothing is thrown out of grpc-js', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    let call: grpc.ClientUnaryCall | undefined;
    const c = client(RETRY, {
      onEvent: (e) => {
        if (e.type === 'retry-scheduled') call?.cancel();
      },
    });
    const outcomes: number[] = [];
    for (let i = 0; i < 10; i++) {
      outcomes.push(
        await new Promise<number>((resolve) => {
          call = c.FailFirst(Buffer.from(`cancel-${i}`), deadline(), (e) => resolve(e ? e.code : 0));
        }),
      );
    }
    await new Promise((r) => setTimeout(r, 50));
    process.off('uncaughtException', onUncaught);
    c.close();
    expect(outcomes).toEqual(new Array(10).fill(grpc.status.CANCELLED));
    expect(uncaught).toEqual([]);
  });
});

describe('a retry after the first attempt read every message', () => {
  const values = Array.from({ length: 10 }, (_, i) => i).join(',');

  it('resends what was written when each write was a new Buffer', async () => {
    const c = client(RETRY);
    expect(await collect(c, 10, false, 'fresh')).toBe(values);
    c.close();
  });

  it('is not sent when the Buffer was refilled after its callbacks: the call fails rather than send other data', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => warnings.push(w.code ?? '');
    process.on('warning', onWarning);
    const c = client(RETRY);
    expect(await collect(c, 10, true, 'reused')).toBe(`error ${grpc.status.UNAVAILABLE}`);
    c.close();
    await new Promise((r) => setImmediate(r));
    process.off('warning', onWarning);
    expect(warnings).toContain('GRPC_RETRY_HEDGING_REQUEST_CHANGED');
  });
});
