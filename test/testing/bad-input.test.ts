/**
 * Bad input to the `/testing` entry, as plain JS can give it: a clear error naming the method and argument, never
 * a hang, a crash later on, or a silent fallback (bad-input audit of the testing entry).
 */
import type * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createFlakyTestClient,
  FakeClock,
  FlakyCluster,
  FlakyServer,
  flakyMethodPath,
  seededRandom,
  validateAttemptScript,
  validateAttemptScripts,
} from '../../src/testing/index.js';
import { captureWarnings } from '../helpers/warnings.js';

// biome-ignore lint/suspicious/noExplicitAny: plain-JS callers pass anything
const js = (value: unknown): any => value;
const UNARY = 'grpc_retry_hedging.testing.v1.FlakyTest/Unary';

let server: FlakyServer;
beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(() => server.stop());
afterEach(() => {
  vi.restoreAllMocks();
  server.reset();
});

/** Settles within `ms`, or fails the test saying it hung. */
function settlesWithin<T>(promise: Promise<T>, ms = 1000): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms)),
  ]);
}

describe('FlakyServer.waitFor and waitForAttempts', () => {
  it.each<[unknown, ErrorConstructor, string]>([
    [Number.NaN, TypeError, 'got NaN'],
    ['50', TypeError, 'got "50"; did you mean 50 (a number, not a string)?'],
    [null, TypeError, 'got null'],
    [-5, RangeError, 'got -5'],
    [Number.POSITIVE_INFINITY, RangeError, 'got Infinity'],
  ])('waitFor refuses the timeout %o at once, naming the method and argument', async (timeout, kind, got) => {
    const waiting = settlesWithin(server.waitFor(() => false, js(timeout)));
    await expect(waiting).rejects.toThrow(kind);
    await expect(waiting).rejects.toThrow(
      `FlakyServer.waitFor: timeoutMs must be a finite number of ms >= 0, ${got}`,
    );
  });

  it('waitForAttempts refuses a bad timeout at once', async () => {
    const waiting = settlesWithin(server.waitForAttempts('a', 1, js(Number.NaN)));
    await expect(waiting).rejects.toThrow(
      'FlakyServer.waitForAttempts: timeoutMs must be a finite number of ms >= 0, got NaN',
    );
    await expect(settlesWithin(server.waitForAttempts('a', 1, js('50')))).rejects.toThrow(TypeError);
  });

  it('waitFor names itself when the predicate is not a function', async () => {
    await expect(server.waitFor(js('notfn'))).rejects.toThrow(
      'FlakyServer.waitFor: predicate must be a function returning a boolean, got "notfn"',
    );
  });

  it.each<[unknown, string]>([
    ['x', 'got "x"'],
    ['2', 'got "2"; did you mean 2 (a number, not a string)?'],
    [0, 'got 0'],
    [-1, 'got -1'],
    [1.5, 'got 1.5'],
    [Number.NaN, 'got NaN'],
  ])('waitForAttempts refuses the count %o before waiting', async (count, got) => {
    const started = Date.now();
    await expect(server.waitForAttempts('a', js(count), 300)).rejects.toThrow(
      `FlakyServer.waitForAttempts: count must be an integer >= 1, ${got}`,
    );
    expect(Date.now() - started).toBeLessThan(250);
  });

  it('waitForAttempts refuses a call id that is not a string', async () => {
    await expect(server.waitForAttempts(js(5), 1, 300)).rejects.toThrow(
      'FlakyServer.waitForAttempts: callId must be a string ("" for attempts sent without one), got 5',
    );
  });

  it('waitFor refuses a predicate that gives no boolean: an async one would end the wait at once', async () => {
    await expect(
      settlesWithin(
        server.waitFor(
          js(async () => false),
          300,
        ),
      ),
    ).rejects.toThrow(
      'FlakyServer.waitFor: predicate must return true or false, got a Promise (an async function is not waited on',
    );
    await expect(
      settlesWithin(
        server.waitFor(
          js(() => 1),
          300,
        ),
      ),
    ).rejects.toThrow('FlakyServer.waitFor: predicate must return true or false, got 1');
  });

  it('attempts refuses a call id that is not a string, as script does', () => {
    expect(() => server.attempts(js(5))).toThrow(
      'FlakyServer.attempts: callId must be a string ("" for attempts sent without one), got 5',
    );
  });

  it('still waits with a good timeout, and 0 checks once', async () => {
    await expect(server.waitFor(() => true, 0)).resolves.toBeUndefined();
    await expect(server.waitFor(() => false, 0)).rejects.toThrow('condition not met within 0 ms');
  });
});

describe('FlakyServer and FlakyCluster made or stopped wrongly', () => {
  it('new FlakyServer() and new FlakyCluster() say to use start()', () => {
    const Server = FlakyServer as unknown as new () => unknown;
    const Cluster = FlakyCluster as unknown as new () => unknown;
    expect(() => new Server()).toThrow(
      'FlakyServer: start one with `await FlakyServer.start(options)`; the constructor is not public',
    );
    expect(() => new Cluster()).toThrow(
      'FlakyCluster: start one with `await FlakyCluster.start(scripts, options)`; the constructor is not public',
    );
  });

  it.each<[unknown, string]>([
    [Number.POSITIVE_INFINITY, 'RangeError'],
    [Number.NaN, 'TypeError'],
    [-1, 'RangeError'],
    ['5000', 'TypeError'],
    [{ graceMs: 50 }, 'TypeError'],
  ])('stop refuses the grace %o and leaves the server running', async (grace, kind) => {
    const own = await FlakyServer.start();
    try {
      const error = await own.stop(js(grace)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(kind === 'RangeError' ? RangeError : TypeError);
      expect(String(error)).toContain(
        'FlakyServer.stop: graceMs must be a number of ms from 0 to 2147483647',
      );
      // Still serving: a good stop afterwards works.
      expect(own.activeAttempts()).toBe(0);
    } finally {
      await own.stop();
    }
  });

  it('waitForAttempts on a stopped server says it was stopped', async () => {
    const own = await FlakyServer.start();
    await own.stop();
    await expect(own.waitForAttempts('c', 1, 20)).rejects.toThrow(
      'FlakyServer.waitForAttempts: call id "c" has 0 of 1 attempts after 20 ms (the server was stopped)',
    );
  });
});

describe('FlakyServer call ids', () => {
  it.each<[unknown, string]>([
    [undefined, 'got nothing'],
    [5, 'got 5; did you mean "5" (a string)?'],
    ['', 'got ""'],
    [null, 'got null'],
  ])('script refuses the call id %j', (callId, got) => {
    expect(() => server.script(js(callId), [{}])).toThrow(TypeError);
    expect(() => server.script(js(callId), [{}])).toThrow(
      `FlakyServer.script: callId must be a non-empty string (the x-flaky-call-id metadata your client sends), ${got}`,
    );
  });

  it('the scripts option refuses the call id ""', async () => {
    await expect(FlakyServer.start({ scripts: { '': [{}] } })).rejects.toThrow(
      'FlakyServer: option "scripts" has a script under the call id "": a call id must be non-empty',
    );
  });
});

describe('sparse scripts', () => {
  // biome-ignore lint/suspicious/noSparseArray: the hole is the point
  const holey = (): unknown[] => [, { status: 14 }];

  it('validateAttemptScripts names the hole', () => {
    expect(() => validateAttemptScripts(holey())).toThrow(
      'script[0]: missing (a hole in the array, as in `[, {...}]`); write {} for a prompt success',
    );
    expect(() => validateAttemptScripts(new Array(2))).toThrow(/^script\[0\]: missing/);
    const late: unknown[] = [{}, {}];
    late[3] = {};
    expect(() => validateAttemptScripts(late)).toThrow(/^script\[2\]: missing/);
  });

  it('script, scriptMethod and the options refuse one', async () => {
    expect(() => server.script('cid', js(holey()))).toThrow(/^script\("cid"\)\[0\]: missing/);
    expect(() => server.scriptMethod(UNARY, js(holey()))).toThrow(
      /^scriptMethod\("grpc_retry_hedging\.testing\.v1\.FlakyTest\/Unary"\)\[0\]: missing/,
    );
    await expect(FlakyServer.start({ scripts: { a: js(holey()) } })).rejects.toThrow(
      /^scripts\["a"\]\[0\]: missing/,
    );
    await expect(FlakyServer.start({ methodScripts: { [UNARY]: js(holey()) } })).rejects.toThrow(
      /^methodScripts\[".*Unary"\]\[0\]: missing/,
    );
  });

  it('an explicit undefined entry is named as such', () => {
    expect(() => validateAttemptScripts([undefined, {}])).toThrow(
      'script[0]: must be an object, got undefined',
    );
  });
});

describe('FakeClock', () => {
  it.each<[unknown, ErrorConstructor, string]>([
    ['1000', TypeError, 'got "1000"'],
    [Number.NaN, TypeError, 'got NaN'],
    [null, TypeError, 'got null'],
    [Number.POSITIVE_INFINITY, RangeError, 'got Infinity'],
  ])('refuses the start time %o', (start, kind, got) => {
    expect(() => new FakeClock(js(start))).toThrow(kind);
    expect(() => new FakeClock(js(start))).toThrow(
      `FakeClock: startMs must be a finite number of ms since the epoch, ${got}`,
    );
  });

  it('still defaults the start time to now', () => {
    const before = Date.now();
    expect(new FakeClock().now()).toBeGreaterThanOrEqual(before);
  });

  it.each<[unknown, ErrorConstructor, string]>([
    ['10', TypeError, 'got "10"'],
    [Number.NaN, TypeError, 'got NaN'],
    [Number.POSITIVE_INFINITY, RangeError, 'got Infinity'],
    [-1, RangeError, 'got -1'],
  ])('advance refuses %o and leaves the time as it was', (ms, kind, got) => {
    const clock = new FakeClock(1000);
    expect(() => clock.advance(js(ms))).toThrow(kind);
    expect(() => clock.advance(js(ms))).toThrow(`FakeClock.advance: ms must be a finite number >= 0, ${got}`);
    expect(clock.now()).toBe(1000);
  });

  it('setTimer refuses a callback that is not a function, at once', () => {
    const clock = new FakeClock(0);
    expect(() => clock.setTimer(js('x'), 5)).toThrow(
      'FakeClock.setTimer: callback must be a function, got "x"',
    );
    expect(clock.pendingTimers).toBe(0);
  });

  it.each<[unknown, string]>([
    [Number.NaN, 'got NaN'],
    ['5', 'got "5"'],
    [undefined, 'got nothing'],
  ])('setTimer refuses the delay %o, at once', (delay, got) => {
    const clock = new FakeClock(0);
    expect(() => clock.setTimer(() => {}, js(delay))).toThrow(TypeError);
    expect(() => clock.setTimer(() => {}, js(delay))).toThrow(
      `FakeClock.setTimer: delayMs must be a number of ms (negative counts as 0, Infinity never fires), ${got}`,
    );
    expect(clock.pendingTimers).toBe(0);
  });

  it('reads delays as the real clock does: negative is 0, Infinity never fires', () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    clock.setTimer(() => fired.push('never'), Number.POSITIVE_INFINITY);
    clock.setTimer(() => fired.push('now'), -5);
    expect(clock.nextDueInMs()).toBe(0);
    expect(clock.runNext()).toBe(true);
    expect(fired).toEqual(['now']);
    expect(clock.pendingTimers).toBe(1);
    expect(clock.nextDueInMs()).toBe(Number.POSITIVE_INFINITY);
    expect(clock.runNext()).toBe(false);
    clock.advance(1e15);
    expect(fired).toEqual(['now']);
    expect(clock.now()).toBe(1e15);
    expect(clock.pendingTimers).toBe(1);
  });
});

describe('FlakyCluster', () => {
  it('refuses an unknown option, naming the one meant', async () => {
    await expect(FlakyCluster.start([{}], js({ rando: 1 }))).rejects.toThrow(
      'FlakyCluster.start: options.rando is not an option; did you mean "random"? (known: random, maxRecordedAttempts, maxTrackedCallIds)',
    );
  });

  it('refuses null options with its own message', async () => {
    await expect(FlakyCluster.start([{}], js(null))).rejects.toThrow(
      'FlakyCluster.start: options must be an object, got null',
    );
  });

  it('setScript says the index must be a number when given a string', async () => {
    const cluster = await FlakyCluster.start([{}]);
    try {
      await expect(cluster.setScript(js('0'), {})).rejects.toThrow(TypeError);
      await expect(cluster.setScript(js('0'), {})).rejects.toThrow(
        'FlakyCluster.setScript: index must be a number (0 to 0), got "0"; did you mean 0 (a number, not a string)?',
      );
      await expect(cluster.setScript(5, {})).rejects.toThrow('FlakyCluster: no replica 5 (there are 1)');
    } finally {
      await cluster.stop();
    }
  });
});

describe('seededRandom', () => {
  it.each([[Number.NaN], ['abc'], [{}], [undefined], [Number.POSITIVE_INFINITY], ['7']])(
    'refuses the seed %o rather than playing seed 0',
    (seed) => {
      expect(() => seededRandom(js(seed))).toThrow(TypeError);
      expect(() => seededRandom(js(seed))).toThrow(/^seededRandom: seed must be a finite number, got /);
    },
  );

  it('takes any finite number, as before', () => {
    expect(seededRandom(-1)()).toBe(seededRandom(2 ** 32 - 1)());
    expect(typeof seededRandom(1.5)()).toBe('number');
  });
});

describe('flakyMethodPath', () => {
  it('refuses a method FlakyTest does not have, listing its methods', () => {
    expect(() => flakyMethodPath(js('Nope'))).toThrow(
      'flakyMethodPath: grpc_retry_hedging.testing.v1.FlakyTest has no method "Nope" (its methods: Unary, ServerStream, ClientStream, Bidi)',
    );
    expect(() => flakyMethodPath(js('unary'))).toThrow(/has no method "unary"; did you mean "Unary"\?/);
    expect(() => flakyMethodPath(js(undefined))).toThrow(TypeError);
    expect(flakyMethodPath('Bidi')).toBe('/grpc_retry_hedging.testing.v1.FlakyTest/Bidi');
  });
});

describe('messages', () => {
  it('validateAttemptScript says null', () => {
    expect(() => validateAttemptScript(null)).toThrow('attempt script: must be an object, got null');
  });

  it.each<[unknown, string, typeof TypeError]>([
    ['10', 'got "10"; did you mean 10 (a number, not a string)?', TypeError],
    [null, 'got null', TypeError],
    [-1, 'got -1', RangeError],
  ])('a bound option shows the value %j as given', async (value, got, kind) => {
    const started = FlakyServer.start({ maxRecordedAttempts: js(value) });
    await expect(started).rejects.toThrow(kind);
    await expect(started).rejects.toThrow(
      `FlakyServer: option "maxRecordedAttempts" must be an integer >= 0 or Infinity; ${got}`,
    );
  });
});

describe('a bigint, symbol or function where a script or option wants a value', () => {
  it.each<[unknown, string]>([
    [14n, 'got 14n'],
    [Symbol('s'), 'got a symbol'],
    [() => 14, 'got a function'],
  ])('a script status of %s is named in the message, not a JSON.stringify error', (status, got) => {
    expect(() => validateAttemptScript({ status })).toThrow(
      `attempt script: "status" must be a grpc status code 0..16 or a status name such as "UNAVAILABLE", ${got}`,
    );
  });

  it.each<[string, unknown, string]>([
    ['keepCase', 1n, 'option "keepCase" must be a boolean; got 1n'],
    ['keepCase', () => true, 'option "keepCase" must be a boolean; got a function'],
    ['serveFlakyTest', Symbol('no'), 'option "serveFlakyTest" must be a boolean; got a symbol'],
    [
      'requestIdHeader',
      5n,
      'option "requestIdHeader" must be a lowercase metadata key not ending in -bin, or false; got 5n',
    ],
    [
      'requestIdHeader',
      () => 'x-id',
      'option "requestIdHeader" must be a lowercase metadata key not ending in -bin, or false; got a function',
    ],
    [
      'requestIdField',
      5n,
      'option "requestIdField" must name a string field of TestRequest (payload, request_id), or be false; got 5n',
    ],
  ])('FlakyServer.start({ %s: %s }) names the option and the value', async (option, value, message) => {
    const started = FlakyServer.start({ [option]: value } as never);
    await expect(started).rejects.toThrow(TypeError);
    await expect(started).rejects.toThrow(`FlakyServer: ${message}`);
  });
});

describe('FlakyServer.start options that said what they want but not what they got', () => {
  it.each<[string, unknown, string]>([
    ['respond', 5, 'option "respond" must be a function, got 5'],
    ['onAttempt', 'log', 'option "onAttempt" must be a function, got "log"'],
    ['onAttemptEnd', {}, 'option "onAttemptEnd" must be a function, got {}'],
    ['host', 5, 'option "host" must be a non-empty string, got 5'],
    ['host', '', 'option "host" must be a non-empty string, got ""'],
    ['scripts', 5, 'option "scripts" must be an object of scripts by call id, got 5'],
    // an array was taken as scripts under the call ids "0", "1"
    [
      'scripts',
      [{ status: 'OK' }],
      'option "scripts" must be an object of scripts by call id, got [{"status":"OK"}]',
    ],
    [
      'port',
      '5000',
      'option "port" must be an integer 0..65535, got "5000"; did you mean 5000 (a number, not a string)?',
    ],
    [
      'maxTrackedCallIds',
      '5',
      'option "maxTrackedCallIds" must be an integer >= 1 or Infinity; got "5"; did you mean 5 (a number, not a string)?',
    ],
    [
      'maxRecordedAttempts',
      null,
      'option "maxRecordedAttempts" must be an integer >= 0 or Infinity; got null',
    ],
    [
      'methodScripts',
      [{ status: 'OK' }],
      'option "methodScripts" must be an object of scripts by method name, got [{"status":"OK"}]',
    ],
    [
      'maxRecordedBytes',
      Number.NaN,
      'option "maxRecordedBytes" must be an integer >= 0 or Infinity; got NaN',
    ],
  ])(
    'FlakyServer.start({ %s: %j }) is a TypeError naming the option and the value',
    async (option, value, message) => {
      const started = FlakyServer.start({ [option]: value } as never);
      await expect(started).rejects.toThrow(TypeError);
      await expect(started).rejects.toThrow(`FlakyServer: ${message}`);
    },
  );

  it('keeps a RangeError for a number out of range', async () => {
    const started = FlakyServer.start({ maxTrackedCallIds: 0, port: 70000 });
    await expect(started).rejects.toThrow(RangeError);
    await expect(FlakyServer.start({ maxTrackedCallIds: 0 })).rejects.toThrow(RangeError);
  });

  it('FlakyCluster.start({ maxTrackedCallIds: "5" }) is a TypeError with the number hint', async () => {
    const started = FlakyCluster.start([{}], { maxTrackedCallIds: '5' as never });
    await expect(started).rejects.toThrow(TypeError);
    await expect(started).rejects.toThrow(
      'FlakyCluster.start: option "maxTrackedCallIds" must be an integer >= 1 or Infinity; got "5"; did you mean 5 (a number, not a string)?',
    );
  });
});

describe('FlakyServer.start host', () => {
  it.each<[string, string]>([
    ['127.0.0.1:50051', ' (port: 50051)'],
    ['[::1]:50051', ' (port: 50051)'],
    ['localhost:', ''],
  ])('refuses %j, a host with a port, naming the option to give the port with', async (host, port) => {
    const started = FlakyServer.start({ host });
    await expect(started).rejects.toThrow(TypeError);
    await expect(started).rejects.toThrow(
      `FlakyServer: option "host" is a host name or address without a port, got ${JSON.stringify(host)}: give the port as option "port"${port}`,
    );
  });

  it('still takes a bare IPv6 address, whose last group is no port', async () => {
    const v6 = await FlakyServer.start({ host: '::1' }).catch((error: unknown) => error);
    if (v6 instanceof FlakyServer) {
      expect(v6.address).toMatch(/^\[::1\]:\d+$/);
      await v6.stop();
    } else {
      // a machine without IPv6 loopback cannot bind it: the error is the bind's, not the host check's
      expect(String(v6)).toContain('cannot bind [::1]:0');
    }
  });
});

describe('onAttemptEnd that throws', () => {
  it('is reported once per server as a warning, and the attempts go on', async () => {
    const warnings = captureWarnings();
    let calls = 0;
    const hooked = await FlakyServer.start({
      onAttemptEnd: () => {
        calls++;
        throw new Error('onAttemptEnd boom');
      },
    });
    const client = createFlakyTestClient(hooked.address);
    const unary = (): Promise<grpc.ServiceError | null> =>
      new Promise((resolve) => client.Unary({ payload: 'x' }, (error) => resolve(error)));
    try {
      expect(await unary()).toBeNull();
      expect(await unary()).toBeNull();
      await hooked.waitFor(() => calls === 2);
      const ours = warnings.filter((w) => w.code === 'GRPC_RETRY_HEDGING_LISTENER_ERROR');
      expect(ours).toHaveLength(1);
      expect(ours[0]?.message).toMatch(/FlakyServer: the onAttemptEnd option threw \(onAttemptEnd boom\)/);
    } finally {
      client.close();
      await hooked.stop();
    }
  });
});

describe('FlakyServer options that name files or take objects', () => {
  it('say what they got, at which index, and what to do with a file URL', async () => {
    const refused = (options: object) => FlakyServer.start(options as never);
    await expect(refused({ proto: 5 })).rejects.toThrow(
      new TypeError('FlakyServer: option "proto" must be a .proto file path or an array of them, got 5'),
    );
    await expect(refused({ proto: ['a.proto', ''] })).rejects.toThrow(
      new TypeError('FlakyServer: option "proto"[1] must be a .proto file path, got ""'),
    );
    await expect(refused({ proto: new URL('file:///protos/a.proto') })).rejects.toThrow(
      new TypeError(
        'FlakyServer: option "proto" must be a .proto file path or an array of them, got a URL (file:///protos/a.proto): pass fileURLToPath(url) from node:url',
      ),
    );
    await expect(refused({ includeDirs: 'protos' })).rejects.toThrow(
      new TypeError('FlakyServer: option "includeDirs" must be an array of directory paths, got "protos"'),
    );
    await expect(refused({ includeDirs: ['protos', 7] })).rejects.toThrow(
      new TypeError('FlakyServer: option "includeDirs"[1] must be a directory path, got 7'),
    );
    await expect(refused({ methodScripts: 5 })).rejects.toThrow(
      new TypeError('FlakyServer: option "methodScripts" must be an object of scripts by method name, got 5'),
    );
    await expect(refused({ serverOptions: 'x' })).rejects.toThrow(
      new TypeError('FlakyServer: option "serverOptions" must be an object, got "x"'),
    );
  });
});

describe('the other options refused without saying what they got', () => {
  it('FlakyCluster.start scripts and createFlakyTestClient options name the value', async () => {
    await expect(FlakyCluster.start({} as never)).rejects.toThrow(
      new TypeError('FlakyCluster.start: scripts must be a non-empty array, one script per replica, got {}'),
    );
    expect(() => createFlakyTestClient('127.0.0.1:1', { credentials: 'insecure' as never })).toThrow(
      'createFlakyTestClient: option "credentials" must be grpc.ChannelCredentials, got "insecure"',
    );
    expect(() => createFlakyTestClient('127.0.0.1:1', { interceptors: ['retry'] as never })).toThrow(
      'createFlakyTestClient: option "interceptors" must be an array of interceptor functions, got ["retry"]',
    );
    expect(() => createFlakyTestClient('127.0.0.1:1', { channelOptions: 5 as never })).toThrow(
      'createFlakyTestClient: option "channelOptions" must be an object, got 5',
    );
  });
});
