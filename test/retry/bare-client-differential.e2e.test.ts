/**
 * Differential runs (end to end, on 127.0.0.1): the same user code against a bare grpc-js client and against
 * clients with a retry and a hedging policy, where nothing the policy acts on happens; what the code sees must be
 * the same. Each case is one a transparency audit found different: the order of a write callback and the status
 * after a cancel from a write callback, `getPeer()` before a deferred start, the options an interceptor listed
 * after the retry interceptor is given, and the trailers of the caller's cancel once a hedge answered.
 */
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetryInterceptor } from '../../src/index.js';
import { bindLocal } from '../helpers/bind-local.js';
import { bufferClientConstructor, bufferMethod } from '../helpers/buffer-service.js';

const require = createRequire(import.meta.url);
const method = (name: string, requestStream: boolean, responseStream: boolean) =>
  bufferMethod('diff.S', name, requestStream, responseStream);
const SERVICE = {
  Echo: method('Echo', true, true),
  Up: method('Up', true, false),
  /** Answers after the delay (ms) in its request; a request of `first-slow:<key>` is slow only on its first attempt. */
  Unary: method('Unary', false, false),
  /** Calls Unary downstream with its own call as the parent, through the client of the mode in its request. */
  Relay: method('Relay', false, false),
};
type Callback = (e: grpc.ServiceError | null, v?: Buffer) => void;
type Client = grpc.Client & {
  Echo(options?: grpc.CallOptions): grpc.ClientDuplexStream<Buffer, Buffer>;
  Up(options: grpc.CallOptions, cb: Callback): grpc.ClientWritableStream<Buffer>;
  Unary(request: Buffer, options: grpc.CallOptions, cb: Callback): grpc.ClientUnaryCall;
  Relay(request: Buffer, options: grpc.CallOptions, cb: Callback): grpc.ClientUnaryCall;
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
      hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.05s', nonFatalStatusCodes: ['UNAVAILABLE'] },
    },
  ],
};
const MODES = { bare: undefined, retry: RETRY, hedging: HEDGE } as const;
type Mode = keyof typeof MODES;

const slowFirst = new Set<string>();
/** What the interceptor listed after the retry interceptor was given, per mode, for the Relay's downstream call. */
const innerSaw = new Map<string, string>();
const clients: Client[] = [];

let server: grpc.Server;
let address: string;
beforeAll(async () => {
  server = new grpc.Server();
  server.addService(SERVICE as never, {
    Echo(call: grpc.ServerDuplexStream<Buffer, Buffer>) {
      call.on('data', (m: Buffer) => call.write(m));
      call.on('end', () => call.end());
      call.on('error', () => {});
    },
    Up(call: grpc.ServerReadableStream<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) {
      call.on('data', () => {});
      call.on('end', () => cb(null, Buffer.from('done')));
      call.on('error', () => {});
    },
    Unary(call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) {
      const request = call.request.toString();
      const slow = request.startsWith('first-slow:') && !slowFirst.has(request);
      slowFirst.add(request);
      const timer = setTimeout(
        () => {
          call.sendMetadata(new grpc.Metadata());
          cb(null, Buffer.from('ok'));
        },
        slow ? 300 : 0,
      );
      call.on('cancelled', () => clearTimeout(timer));
    },
    Relay(call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) {
      const mode = call.request.toString() as Mode;
      const downstream = client(mode, [
        (options, next) => {
          const deadline = options.deadline;
          innerSaw.set(
            mode,
            `deadline:${deadline instanceof Date ? 'Date' : typeof deadline} parent:${options.parent === call}`,
          );
          return new grpc.InterceptingCall(next(options));
        },
      ]);
      downstream.Unary(Buffer.from('x'), { parent: call, deadline: new Date(Date.now() + 5_000) }, (e) =>
        cb(e, Buffer.from('relayed')),
      );
    },
  });
  address = `127.0.0.1:${await bindLocal(server)}`;
});
afterAll(() => {
  for (const c of clients) c.close();
  server.forceShutdown();
});

/** A client of `mode`, with interceptors listed after the retry interceptor (`inner`) and before it (`outer`). */
function client(mode: Mode, inner: grpc.Interceptor[] = [], outer: grpc.Interceptor[] = []): Client {
  const config = MODES[mode];
  const own = config ? [createRetryInterceptor(config)] : [];
  const c = new ClientCtor(address, grpc.credentials.createInsecure(), {
    interceptors: [...outer, ...own, ...inner],
  });
  clients.push(c);
  return c;
}

/** Runs `scenario` on each mode and returns what it logged, by mode. */
async function differential(scenario: (c: Client, log: string[], mode: Mode) => Promise<void>) {
  const logs = {} as Record<Mode, string[]>;
  for (const mode of Object.keys(MODES) as Mode[]) {
    const log: string[] = [];
    await scenario(client(mode), log, mode);
    logs[mode] = log;
  }
  return logs;
}

/** Whether the grpc-js the tests run on is at least `major.minor`. */
function grpcJsAtLeast(major: number, minor: number, patch: number): boolean {
  const [own = 0, ownMinor = 0, ownPatch = 0] = (
    require('@grpc/grpc-js/package.json') as { version: string }
  ).version
    .split('.')
    .map(Number);
  return own !== major ? own > major : ownMinor !== minor ? ownMinor > minor : ownPatch >= patch;
}

/** Writes two messages, cancels in the first one's callback, and logs the status and the callbacks in order. */
async function cancelInFirstWriteCallback(
  call: grpc.ClientWritableStream<Buffer> | grpc.ClientDuplexStream<Buffer, Buffer>,
  name: string,
  log: string[],
): Promise<void> {
  const ended = new Promise<void>((resolve) =>
    call.on('status', (s: grpc.StatusObject) => {
      log.push(`${name} status ${s.code}`);
      setTimeout(resolve, 50);
    }),
  );
  call.write(Buffer.from('1'), () => {
    log.push(`${name} write 1`);
    call.cancel();
  });
  call.write(Buffer.from('2'), () => log.push(`${name} write 2`));
  await ended;
}

describe('the same user code, bare and through the interceptor', () => {
  it('cancel() in a write callback: the status comes before the next write callback, on bidi and client streams', async () => {
    const logs = await differential(async (c, log) => {
      const bidi = c.Echo();
      bidi.on('data', () => {});
      bidi.on('error', (e: grpc.ServiceError) => log.push(`bidi error ${e.code}`));
      await cancelInFirstWriteCallback(bidi, 'bidi', log);
      await cancelInFirstWriteCallback(
        c.Up({}, (e) => log.push(`up callback ${e?.code}`)),
        'up',
        log,
      );
    });
    // grpc-js 1.14.3's order. grpc-js 1.10 to 1.14.2 run the queued write's callback before the status; the
    // interceptor keeps 1.14.3's order on every version.
    const expected = [
      'bidi write 1',
      'bidi error 1',
      'bidi status 1',
      'bidi write 2',
      'up write 1',
      'up callback 1',
      'up status 1',
      'up write 2',
    ];
    if (grpcJsAtLeast(1, 14, 3)) {
      expect(logs.bare).toEqual(expected);
    }
    expect(logs.retry).toEqual(expected);
    expect(logs.hedging).toEqual(expected);
  });

  it('getPeer() while an interceptor above holds the start back: the channel target, then the server', async () => {
    const logs = {} as Record<Mode, string[]>;
    for (const mode of Object.keys(MODES) as Mode[]) {
      const log: string[] = [];
      const deferStart: grpc.Interceptor = (options, next) =>
        new grpc.InterceptingCall(next(options), {
          start: (metadata, listener, start) => setTimeout(() => start(metadata, listener), 30),
        });
      const c = client(mode, [], [deferStart]);
      await new Promise<void>((resolve) => {
        const call = c.Unary(Buffer.from('quick'), {}, () => {
          log.push(`after: ${call.getPeer()}`);
          resolve();
        });
        log.push(`before: ${call.getPeer()}`);
      });
      logs[mode] = log;
    }
    // grpc-js names the channel's target before the call has a connection (`dns:` and the address)
    expect(logs.bare).toEqual([
      expect.stringMatching(new RegExp(`^before: .+${address}$`)),
      `after: ${address}`,
    ]);
    expect(logs.retry).toEqual(logs.bare);
    expect(logs.hedging).toEqual(logs.bare);
  });

  it("an interceptor listed after the retry interceptor gets the caller's Date deadline and the parent call", async () => {
    for (const mode of Object.keys(MODES) as Mode[]) {
      await new Promise<void>((resolve, reject) =>
        client('bare').Relay(Buffer.from(mode), {}, (e) => (e ? reject(e) : resolve())),
      );
    }
    expect(innerSaw.get('bare')).toBe('deadline:Date parent:true');
    expect(innerSaw.get('retry')).toBe(innerSaw.get('bare'));
    expect(innerSaw.get('hedging')).toBe(innerSaw.get('bare'));
  });

  it('the caller cancels once a hedge answered: CANCELLED with no trailers, as on a bare client', async () => {
    const logs = await differential(async (c, log, mode) => {
      await new Promise<void>((resolve) => {
        const call = c.Unary(Buffer.from(`first-slow:${mode}`), {}, (e) => log.push(`callback ${e?.code}`));
        call.on('metadata', () => call.cancel());
        call.on('status', (s) => {
          log.push(`status ${s.code} ${s.details} ${JSON.stringify(s.metadata.toJSON())}`);
          setTimeout(resolve, 20);
        });
      });
    });
    expect(logs.bare).toEqual(['callback 1', 'status 1 Cancelled on client {}']);
    expect(logs.retry).toEqual(logs.bare);
    expect(logs.hedging).toEqual(logs.bare);
  });
});
