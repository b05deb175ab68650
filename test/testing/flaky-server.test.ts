import { existsSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PUSHBACK_METADATA_KEY } from '../../src/shared/headers.js';
import {
  ATTEMPT_METADATA_KEY,
  type AttemptScript,
  CALL_ID_METADATA_KEY,
  FLAKY_TEST_SERVICE,
  FlakyServer,
  flakyMethodPath,
  flakyTestProtoPath,
  loadFlakyTestService,
  type RecordedAttempt,
  SCRIPT_METADATA_KEY,
  validateAttemptScripts,
} from '../../src/testing/index.js';

interface TestRequest {
  payload?: string;
  blob?: Buffer;
}
interface TestResponse {
  payload: string;
  attempt: number;
  messagesReceived: number;
  index: number;
}
type UnaryCallback = (err: grpc.ServiceError | null, res?: TestResponse) => void;
/** The dynamic methods a proto-loader client has, typed for this test. */
interface FlakyClient extends grpc.Client {
  Unary(req: TestRequest, md: grpc.Metadata, opts: grpc.CallOptions, cb: UnaryCallback): grpc.ClientUnaryCall;
  ServerStream(
    req: TestRequest,
    md: grpc.Metadata,
    opts?: grpc.CallOptions,
  ): grpc.ClientReadableStream<TestResponse>;
  ClientStream(
    md: grpc.Metadata,
    opts: grpc.CallOptions,
    cb: UnaryCallback,
  ): grpc.ClientWritableStream<TestRequest>;
  Bidi(md: grpc.Metadata, opts?: grpc.CallOptions): grpc.ClientDuplexStream<TestRequest, TestResponse>;
}

const Service = loadFlakyTestService();

function newClient(address: string): FlakyClient {
  return new Service(address, grpc.credentials.createInsecure(), {
    'grpc.enable_retries': 0,
  }) as unknown as FlakyClient;
}

function md(callId?: string, extra: Record<string, string | Buffer> = {}): grpc.Metadata {
  const metadata = new grpc.Metadata();
  if (callId !== undefined) metadata.set(CALL_ID_METADATA_KEY, callId);
  for (const [key, value] of Object.entries(extra)) metadata.add(key, value);
  return metadata;
}

/** Everything a unary caller can observe, in order. */
interface UnaryOutcome {
  error: grpc.ServiceError | null;
  response: TestResponse | undefined;
  headers: grpc.Metadata | undefined;
  status: grpc.StatusObject | undefined;
  /** Order of 'metadata', 'status' and 'callback' events. */
  order: string[];
}

function unary(client: FlakyClient, metadata: grpc.Metadata, req: TestRequest = { payload: 'p' }, opts = {}) {
  const outcome: UnaryOutcome = {
    error: null,
    response: undefined,
    headers: undefined,
    status: undefined,
    order: [],
  };
  let call!: grpc.ClientUnaryCall;
  const done = new Promise<UnaryOutcome>((resolve) => {
    call = client.Unary(req, metadata, opts, (err, res) => {
      outcome.error = err;
      outcome.response = res;
      outcome.order.push('callback');
      // 'status' is emitted after the callback; give it a turn
      setImmediate(() => resolve(outcome));
    });
    call.on('metadata', (headers: grpc.Metadata) => {
      outcome.headers = headers;
      outcome.order.push('metadata');
    });
    call.on('status', (status: grpc.StatusObject) => {
      outcome.status = status;
      outcome.order.push('status');
    });
  });
  return { call, done };
}

interface StreamOutcome {
  responses: TestResponse[];
  error: grpc.ServiceError | undefined;
  status: grpc.StatusObject | undefined;
  headers: grpc.Metadata | undefined;
}

function collect(
  stream: grpc.ClientReadableStream<TestResponse> | grpc.ClientDuplexStream<TestRequest, TestResponse>,
) {
  const outcome: StreamOutcome = { responses: [], error: undefined, status: undefined, headers: undefined };
  return new Promise<StreamOutcome>((resolve) => {
    stream.on('metadata', (headers: grpc.Metadata) => {
      outcome.headers = headers;
    });
    stream.on('data', (res: TestResponse) => outcome.responses.push(res));
    stream.on('error', (err: grpc.ServiceError) => {
      outcome.error = err;
    });
    stream.on('status', (status: grpc.StatusObject) => {
      outcome.status = status;
      setImmediate(() => resolve(outcome));
    });
  });
}

function clientStream(client: FlakyClient, metadata: grpc.Metadata) {
  let call!: grpc.ClientWritableStream<TestRequest>;
  const done = new Promise<{ error: grpc.ServiceError | null; response: TestResponse | undefined }>(
    (resolve) => {
      call = client.ClientStream(metadata, {}, (error, response) => resolve({ error, response }));
    },
  );
  return { call, done };
}

let server: FlakyServer;
let client: FlakyClient;

beforeAll(async () => {
  server = await FlakyServer.start();
  client = newClient(server.address);
});

afterEach(() => {
  server.reset();
});

afterAll(async () => {
  client.close();
  await server.stop();
});

describe('service and proto helpers', () => {
  it('names the service and its methods', () => {
    expect(FLAKY_TEST_SERVICE).toBe('grpc_retry_hedging.testing.v1.FlakyTest');
    expect(flakyMethodPath('Bidi')).toBe('/grpc_retry_hedging.testing.v1.FlakyTest/Bidi');
    expect(existsSync(flakyTestProtoPath())).toBe(true);
    expect(loadFlakyTestService()).toBe(Service);
    expect(Object.keys(Service.service).sort()).toEqual(['Bidi', 'ClientStream', 'ServerStream', 'Unary']);
    expect(Service.service.Unary!.path).toBe(flakyMethodPath('Unary'));
  });

  it('binds 127.0.0.1 on an ephemeral port', () => {
    expect(server.port).toBeGreaterThan(0);
    expect(server.address).toBe(`127.0.0.1:${server.port}`);
  });
});

describe('unary', () => {
  it('answers a call without script promptly and records it', async () => {
    const before = Date.now();
    const { done } = unary(client, md(), { payload: 'hello' });
    const out = await done;
    expect(out.error).toBeNull();
    expect(out.response).toMatchObject({ payload: 'hello', attempt: 1 });
    const [rec] = server.allAttempts();
    expect(rec).toMatchObject({
      callId: '',
      attempt: 1,
      method: flakyMethodPath('Unary'),
      previousRpcAttempts: undefined,
      messages: ['hello'],
      blobBytes: 0,
      halfClosed: true,
      cancelled: false,
      endedWith: grpc.status.OK,
      responsesSent: 1,
    } satisfies Partial<RecordedAttempt>);
    expect(rec!.arrivedAt).toBeGreaterThanOrEqual(before);
    expect(rec!.endedAt).toBeGreaterThanOrEqual(rec!.arrivedAt);
    expect(server.activeAttempts()).toBe(0);
  });

  it('ends with the scripted status and details (default details name the attempt)', async () => {
    server.script('s', [
      { status: grpc.status.UNAVAILABLE, details: 'boom' },
      { status: grpc.status.INTERNAL },
    ]);
    const first = await unary(client, md('s')).done;
    expect(first.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(first.error?.details).toBe('boom');
    const second = await unary(client, md('s')).done;
    expect(second.error?.code).toBe(grpc.status.INTERNAL);
    expect(second.error?.details).toBe('scripted failure (attempt 2)');
    expect(server.attempts('s').map((a) => [a.attempt, a.endedWith, a.endedDetails])).toEqual([
      [1, grpc.status.UNAVAILABLE, 'boom'],
      [2, grpc.status.INTERNAL, 'scripted failure (attempt 2)'],
    ]);
    expect(server.attempts('s').map((a) => a.responsesSent)).toEqual([0, 0]);
  });

  it('counts attempts per call id and repeats the last entry', async () => {
    server.script('a', [{ status: grpc.status.UNAVAILABLE }, {}]);
    server.script('b', [{ status: grpc.status.ABORTED }]);
    const codes: Array<number | undefined> = [];
    for (const id of ['a', 'b', 'a', 'a', 'b']) {
      const out = await unary(client, md(id)).done;
      codes.push(out.error?.code ?? out.response?.attempt);
    }
    // a#1 fails, b#1 fails, a#2 ok (attempt 2), a#3 repeats the last entry (ok, attempt 3), b#2 repeats ABORTED
    expect(codes).toEqual([grpc.status.UNAVAILABLE, grpc.status.ABORTED, 2, 3, grpc.status.ABORTED]);
    expect(server.attempts('a').map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(server.attempts('b').map((r) => r.attempt)).toEqual([1, 2]);
    // without a call id, an attempt's number is its grpc-previous-rpc-attempts + 1: each call starts at 1
    await unary(client, md()).done;
    const third = await unary(client, md()).done;
    expect(third.response?.attempt).toBe(1);
    const retried = md();
    retried.set('grpc-previous-rpc-attempts', '2');
    expect((await unary(client, retried).done).response?.attempt).toBe(3);
    expect(server.attempts('').map((r) => r.attempt)).toEqual([1, 1, 3]);
  });

  it('refuses a status outside 0..16 (or not an integer) when it is scripted', () => {
    for (const status of [99, 1.5, -3]) {
      expect(() => server.script('weird', [{ status }])).toThrow(/must be a grpc status code 0\.\.16/);
    }
  });

  it('waits delayMs before answering', async () => {
    server.script('slow', [{ delayMs: 120 }]);
    const start = Date.now();
    const slow = unary(client, md('slow')).done.then((o) => ({ o, at: Date.now() }));
    await server.waitForAttempts('slow', 1);
    expect(server.activeAttempts()).toBe(1);
    const fast = await unary(client, md('fast')).done;
    const fastAt = Date.now();
    const { o, at } = await slow;
    expect(fast.error).toBeNull();
    expect(o.error).toBeNull();
    expect(fastAt).toBeLessThan(at); // started later, finished first
    expect(at - start).toBeGreaterThanOrEqual(115);
    expect(server.activeAttempts()).toBe(0);
  });

  it.each(['250', 'abc', '10abc', '', '-1'])(
    'sends pushback %j verbatim in the trailers',
    async (pushback) => {
      server.script('pb', [{ status: grpc.status.UNAVAILABLE, pushback }]);
      const out = await unary(client, md('pb')).done;
      expect(out.error?.code).toBe(grpc.status.UNAVAILABLE);
      expect(out.error?.metadata.get(PUSHBACK_METADATA_KEY)).toEqual([pushback]);
      expect(out.status?.metadata.get(PUSHBACK_METADATA_KEY)).toEqual([pushback]);
    },
  );

  it('sends no pushback trailer unless scripted', async () => {
    server.script('nopb', [{ status: grpc.status.UNAVAILABLE }]);
    const out = await unary(client, md('nopb')).done;
    expect(out.error?.metadata.get(PUSHBACK_METADATA_KEY)).toEqual([]);
  });

  it('sends extra trailers with failures and successes', async () => {
    const trailers = { 'x-reason': 'maintenance', 'x-blob-bin': 'bytes' };
    server.script('tr', [{ status: grpc.status.RESOURCE_EXHAUSTED, trailers, pushback: '5' }, { trailers }]);
    const failed = await unary(client, md('tr')).done;
    expect(failed.error?.metadata.get('x-reason')).toEqual(['maintenance']);
    expect(failed.error?.metadata.get('x-blob-bin')).toEqual([Buffer.from('bytes')]);
    expect(failed.error?.metadata.get(PUSHBACK_METADATA_KEY)).toEqual(['5']);
    const ok = await unary(client, md('tr')).done;
    expect(ok.error).toBeNull();
    expect(ok.status?.metadata.get('x-reason')).toEqual(['maintenance']);
  });

  it.each([0, 20])(
    'sends response headers before the status when sendHeaders is set (delay %i)',
    async (delayMs) => {
      server.script('h', [{ sendHeaders: true, status: grpc.status.UNAVAILABLE, delayMs }]);
      const out = await unary(client, md('h')).done;
      expect(out.error?.code).toBe(grpc.status.UNAVAILABLE);
      expect(out.headers?.get(ATTEMPT_METADATA_KEY)).toEqual(['1']);
      expect(out.order.indexOf('metadata')).toBeLessThan(out.order.indexOf('callback'));
      // the attempt header is a response header, not a trailer
      expect(out.error?.metadata.get(ATTEMPT_METADATA_KEY)).toEqual([]);
    },
  );

  it('sends headers at once, before the delay', async () => {
    server.script('h2', [{ sendHeaders: true, delayMs: 300 }]);
    const { call, done } = unary(client, md('h2'));
    const headers = await new Promise<grpc.Metadata>((resolve) => call.on('metadata', resolve));
    expect(headers.get(ATTEMPT_METADATA_KEY)).toEqual(['1']);
    expect(server.attempts('h2')[0]!.endedWith).toBeUndefined();
    call.cancel();
    await done;
  });

  it('answers a failing attempt without sendHeaders Trailers-Only: the client sees no headers', async () => {
    server.script('to', [{ status: grpc.status.UNAVAILABLE }]);
    const out = await unary(client, md('to')).done;
    expect(out.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(out.order).not.toContain('metadata');
    expect(out.headers).toBeUndefined();
    // a successful attempt always has real headers (sent with the response message)
    const ok = await unary(client, md('ok')).done;
    expect(ok.order).toContain('metadata');
    expect(ok.headers?.get(ATTEMPT_METADATA_KEY)).toEqual([]);
  });

  it('records grpc-previous-rpc-attempts set by the client', async () => {
    await unary(client, md('prev', { 'grpc-previous-rpc-attempts': '2' })).done;
    await unary(client, md('prev', { 'grpc-previous-rpc-attempts': 'x1' })).done;
    await unary(client, md('prev')).done;
    const recorded = server.attempts('prev').map((a) => a.previousRpcAttempts);
    expect(recorded[0]).toBe(2);
    expect(recorded[1]).toBeNaN();
    expect(recorded[2]).toBeUndefined();
  });

  it('records request metadata, binary values and repeated keys', async () => {
    const metadata = md('meta', { 'x-user': 'alice', 'x-trace-bin': Buffer.from([1, 2, 3]) });
    metadata.add('x-multi', 'one');
    metadata.add('x-multi', 'two');
    await unary(client, metadata).done;
    const rec = server.attempts('meta')[0]!;
    expect(rec.metadata[CALL_ID_METADATA_KEY]).toBe('meta');
    expect(rec.metadata['x-user']).toBe('alice');
    expect(rec.metadata['x-trace-bin']).toEqual(Buffer.from([1, 2, 3]));
    // HTTP/2 may deliver repeated headers as one comma-joined value; either way both values are there
    expect([rec.metadata['x-multi']].flat().join(', ')).toBe('one, two');
  });

  it('records the bytes of the blob field', async () => {
    await unary(client, md('blob'), { payload: 'b', blob: Buffer.alloc(1000, 7) }).done;
    expect(server.attempts('blob')[0]!.blobBytes).toBe(1000);
  });

  it('records a client cancellation during the delay and sends nothing afterwards', async () => {
    server.script('cx', [{ delayMs: 150 }]);
    const { call, done } = unary(client, md('cx'));
    await server.waitForAttempts('cx', 1);
    call.cancel();
    const out = await done;
    expect(out.error?.code).toBe(grpc.status.CANCELLED);
    await server.waitFor(() => server.attempts('cx')[0]!.cancelled);
    const rec = server.attempts('cx')[0]!;
    expect(rec.endedWith).toBeUndefined();
    expect(server.activeAttempts()).toBe(0);
    await new Promise((r) => setTimeout(r, 200)); // past the scripted delay
    expect(rec.endedWith).toBeUndefined();
    expect(rec.responsesSent).toBe(0);
  });

  it('records an attempt the client deadline cut short as cancelled', async () => {
    server.script('dl', [{ delayMs: 400 }]);
    const out = await unary(client, md('dl'), { payload: 'x' }, { deadline: Date.now() + 60 }).done;
    expect(out.error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    await server.waitFor(() => server.attempts('dl')[0]?.cancelled === true);
    expect(server.attempts('dl')[0]!.endedWith).toBeUndefined();
  });
});

describe('scripts shipped in metadata', () => {
  it('registers the script from the first attempt that carries it', async () => {
    const script: AttemptScript[] = [{ status: grpc.status.UNAVAILABLE, pushback: '1' }, {}];
    const metadata = () => md('shipped', { [SCRIPT_METADATA_KEY]: JSON.stringify(script) });
    const first = await unary(client, metadata()).done;
    expect(first.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(first.error?.metadata.get(PUSHBACK_METADATA_KEY)).toEqual(['1']);
    const second = await unary(client, metadata()).done;
    expect(second.response?.attempt).toBe(2);
    // later attempts need not carry it
    const third = await unary(client, md('shipped')).done;
    expect(third.response?.attempt).toBe(3);
  });

  it('does not replace a script registered on the server: a different one is refused', async () => {
    server.script('both', [{ status: grpc.status.ABORTED }]);
    const out = await unary(client, md('both', { [SCRIPT_METADATA_KEY]: '[{}]' })).done;
    expect(out.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(out.error?.details).toMatch(/call id "both" already has a different script/);
    const same = await unary(client, md('both', { [SCRIPT_METADATA_KEY]: '[{"status": "ABORTED"}]' })).done;
    expect(same.error?.code).toBe(grpc.status.ABORTED);
  });

  it.each([
    ['not json', /x-flaky-script metadata: not valid JSON/],
    ['{"status": 14}', /must be an array/],
    ['[]', /at least one/],
    ['[{"delay": 5}]', /x-flaky-script metadata\[0\]: unknown field "delay"/],
    ['[{}, {"status": "14"}]', /\[1\]: "status" must be a grpc status code 0\.\.16/],
  ])('fails the attempt with INVALID_ARGUMENT for %j', async (text, message) => {
    const out = await unary(client, md('bad', { [SCRIPT_METADATA_KEY]: text })).done;
    expect(out.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(out.error?.details).toMatch(message);
    expect(server.attempts('bad')[0]!.endedWith).toBe(grpc.status.INVALID_ARGUMENT);
  });
});

describe('server streaming', () => {
  it('sends one response by default', async () => {
    const out = await collect(client.ServerStream({ payload: 'one' }, md('ss1')));
    expect(out.error).toBeUndefined();
    expect(out.responses).toEqual([{ payload: 'one', attempt: 1, index: 0, messagesReceived: 0 }]);
    expect(server.attempts('ss1')[0]!.responsesSent).toBe(1);
  });

  it('sends `responses` messages and then fails', async () => {
    server.script('ss', [{ status: grpc.status.UNAVAILABLE, responses: 3, pushback: '7' }]);
    const out = await collect(client.ServerStream({ payload: 'x' }, md('ss')));
    expect(out.responses.map((r) => [r.payload, r.attempt, r.index])).toEqual([
      ['x', 1, 0],
      ['x', 1, 1],
      ['x', 1, 2],
    ]);
    expect(out.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(out.error?.metadata.get(PUSHBACK_METADATA_KEY)).toEqual(['7']);
    expect(server.attempts('ss')[0]).toMatchObject({ responsesSent: 3, endedWith: grpc.status.UNAVAILABLE });
  });

  it('sends headers before the responses and the failure with sendHeaders', async () => {
    server.script('ssh', [{ sendHeaders: true, status: grpc.status.UNAVAILABLE }, { sendHeaders: true }]);
    const failed = await collect(client.ServerStream({ payload: 'x' }, md('ssh')));
    expect(failed.headers?.get(ATTEMPT_METADATA_KEY)).toEqual(['1']);
    expect(failed.error?.code).toBe(grpc.status.UNAVAILABLE);
    const ok = await collect(client.ServerStream({ payload: 'x' }, md('ssh')));
    expect(ok.headers?.get(ATTEMPT_METADATA_KEY)).toEqual(['2']);
    expect(ok.responses).toHaveLength(1);
  });

  it('sends nothing on a failing attempt by default', async () => {
    server.script('ss0', [{ status: grpc.status.INTERNAL }]);
    const out = await collect(client.ServerStream({ payload: 'x' }, md('ss0')));
    expect(out.responses).toEqual([]);
    expect(out.headers).toBeUndefined();
    expect(out.error?.code).toBe(grpc.status.INTERNAL);
  });
});

describe('client streaming', () => {
  it('joins the payloads after the half-close', async () => {
    const { call, done } = clientStream(client, md('cs'));
    for (const payload of ['a', 'b', 'c']) call.write({ payload, blob: Buffer.alloc(100) });
    call.end();
    const out = await done;
    expect(out.error).toBeNull();
    expect(out.response).toMatchObject({ payload: 'a,b,c', attempt: 1, messagesReceived: 3 });
    expect(server.attempts('cs')[0]).toMatchObject({
      messages: ['a', 'b', 'c'],
      blobBytes: 300,
      halfClosed: true,
      responsesSent: 1,
    });
  });

  it('fails on the first message without waiting for the half-close', async () => {
    server.script('cf', [{ failOnFirstMessage: true, status: grpc.status.UNAVAILABLE }]);
    const { call, done } = clientStream(client, md('cf'));
    call.write({ payload: 'first' });
    const out = await done; // no end() needed
    expect(out.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(server.attempts('cf')[0]).toMatchObject({ messages: ['first'], halfClosed: false });
    call.end();
  });

  it('fails right after the delay when the first message arrived during it', async () => {
    server.script('cfd', [{ failOnFirstMessage: true, status: grpc.status.ABORTED, delayMs: 100 }]);
    const start = Date.now();
    const { call, done } = clientStream(client, md('cfd'));
    call.write({ payload: 'early' });
    const out = await done;
    expect(Date.now() - start).toBeGreaterThanOrEqual(95);
    expect(out.error?.code).toBe(grpc.status.ABORTED);
    call.end();
  });

  it('with endBeforeHalfClose, fails after the delay on a stream the client keeps open', async () => {
    server.script('ceb', [{ endBeforeHalfClose: true, status: grpc.status.UNAVAILABLE, delayMs: 50 }]);
    const { call, done } = clientStream(client, md('ceb'));
    call.write({ payload: 'a' });
    const out = await done; // no end()
    expect(out.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(server.attempts('ceb')[0]).toMatchObject({ messages: ['a'], halfClosed: false, endedWith: 14 });
    call.end();
  });

  it('fails after the half-close without failOnFirstMessage', async () => {
    server.script('cs14', [{ status: grpc.status.UNAVAILABLE }]);
    const { call, done } = clientStream(client, md('cs14'));
    call.write({ payload: 'a' });
    await server.waitFor(() => server.attempts('cs14')[0]?.messages.length === 1);
    expect(server.attempts('cs14')[0]!.endedWith).toBeUndefined();
    call.end();
    const out = await done;
    expect(out.error?.code).toBe(grpc.status.UNAVAILABLE);
  });
});

describe('bidi streaming', () => {
  it('echoes each message as it arrives, then ends with the status at half-close', async () => {
    server.script('echo', [{ echo: true, status: grpc.status.UNAVAILABLE, pushback: '3' }]);
    const call = client.Bidi(md('echo'));
    const outcome = collect(call);
    const next = () => new Promise<TestResponse>((resolve) => call.once('data', resolve));
    call.write({ payload: 'a' });
    expect(await next()).toMatchObject({ payload: 'a', attempt: 1, messagesReceived: 1 });
    call.write({ payload: 'b' });
    expect(await next()).toMatchObject({ payload: 'b', attempt: 1, messagesReceived: 2 });
    expect(server.attempts('echo')[0]!.endedWith).toBeUndefined();
    call.end();
    const out = await outcome;
    expect(out.responses.map((r) => r.payload)).toEqual(['a', 'b']);
    expect(out.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(out.error?.metadata.get(PUSHBACK_METADATA_KEY)).toEqual(['3']);
  });

  it('answers messages that arrived during the delay right after it', async () => {
    server.script('echod', [{ echo: true, delayMs: 80 }]);
    const start = Date.now();
    const call = client.Bidi(md('echod'));
    const outcome = collect(call);
    call.write({ payload: 'a' });
    call.write({ payload: 'b' });
    const first = await new Promise<TestResponse>((resolve) => call.once('data', resolve));
    expect(Date.now() - start).toBeGreaterThanOrEqual(75);
    expect(first.payload).toBe('a');
    call.end();
    const out = await outcome;
    expect(out.error).toBeUndefined();
    expect(out.responses.map((r) => r.payload)).toEqual(['a', 'b']);
  });

  it('without echo answers after the half-close, one response per message by default', async () => {
    const call = client.Bidi(md('bidi'));
    const outcome = collect(call);
    call.write({ payload: 'x' });
    call.write({ payload: 'y' });
    await server.waitFor(() => server.attempts('bidi')[0]?.messages.length === 2);
    expect(server.attempts('bidi')[0]!.responsesSent).toBe(0);
    call.end();
    const out = await outcome;
    expect(out.error).toBeUndefined();
    expect(out.responses.map((r) => [r.payload, r.messagesReceived, r.index])).toEqual([
      ['x', 2, 0],
      ['y', 2, 1],
    ]);
  });

  it('without echo sends `responses` messages and then the failure', async () => {
    server.script('bidi3', [{ responses: 3, status: grpc.status.UNAVAILABLE }]);
    const call = client.Bidi(md('bidi3'));
    const outcome = collect(call);
    call.write({ payload: 'x' });
    call.write({ payload: 'y' });
    call.end();
    const out = await outcome;
    expect(out.responses.map((r) => r.payload)).toEqual(['x', 'y', 'x']);
    expect(out.error?.code).toBe(grpc.status.UNAVAILABLE);
  });

  it('fails on the first message with failOnFirstMessage', async () => {
    server.script('bf', [{ failOnFirstMessage: true, echo: true, status: grpc.status.RESOURCE_EXHAUSTED }]);
    const call = client.Bidi(md('bf'));
    const outcome = collect(call);
    call.write({ payload: 'a' });
    const out = await outcome;
    expect(out.responses).toEqual([]);
    expect(out.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(server.attempts('bf')[0]).toMatchObject({ messages: ['a'], halfClosed: false });
  });

  it('with endBeforeHalfClose, fails a stream the client neither writes to nor half-closes', async () => {
    // A client that waits for the server before it writes: without endBeforeHalfClose no status would come.
    server.script('beb', [{ endBeforeHalfClose: true, status: grpc.status.UNAVAILABLE }]);
    const call = client.Bidi(md('beb'));
    const out = await collect(call);
    expect(out.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(server.attempts('beb')[0]).toMatchObject({ messages: [], halfClosed: false, endedWith: 14 });
  });

  it('with endBeforeHalfClose, sends the responses echoing what arrived, then the status', async () => {
    server.script('ber', [{ endBeforeHalfClose: true, responses: 2, delayMs: 100 }]);
    const call = client.Bidi(md('ber'));
    const outcome = collect(call);
    call.write({ payload: 'x' });
    const out = await outcome;
    expect(out.error).toBeUndefined();
    expect(out.responses.map((r) => r.payload)).toEqual(['x', 'x']);
    expect(server.attempts('ber')[0]).toMatchObject({ halfClosed: false, responsesSent: 2, endedWith: 0 });
  });

  it('records a bidi attempt cancelled during the delay', async () => {
    // Note: a grpc-js client that cancels first ends its side of the HTTP/2 stream (END_STREAM) and then resets
    // it, so the server may see a half-close just before the cancellation. Without a delay the attempt would
    // already have ended at that half-close; during a delay the cancellation is what the server records.
    server.script('bcx', [{ echo: true, delayMs: 300 }]);
    const call = client.Bidi(md('bcx'));
    const outcome = collect(call);
    call.write({ payload: 'a' });
    await server.waitFor(() => server.attempts('bcx')[0]?.messages.length === 1);
    call.cancel();
    expect((await outcome).error?.code).toBe(grpc.status.CANCELLED);
    await server.waitFor(() => server.attempts('bcx')[0]!.cancelled);
    expect(server.attempts('bcx')[0]).toMatchObject({ responsesSent: 0, endedWith: undefined });
    expect(server.activeAttempts()).toBe(0);
  });
});

describe('bookkeeping', () => {
  it('script() replaces a script and resets the counter and records of that call id only', async () => {
    server.script('r', [{ status: grpc.status.UNAVAILABLE }]);
    await unary(client, md('r')).done;
    await unary(client, md('other')).done;
    server.script('r', [{}]);
    expect(server.attempts('r')).toEqual([]);
    expect(server.attempts('other')).toHaveLength(1);
    const out = await unary(client, md('r')).done;
    expect(out.response?.attempt).toBe(1);
  });

  it('script() rejects an invalid script', () => {
    expect(() => server.script('x', [])).toThrow(/at least one/);
    expect(() => server.script('x', [{ delayMs: -1 }])).toThrow(/"delayMs"/);
    expect(() => server.script('x', [{ trailers: { 'Bad Key': 'v' } }])).toThrow(/trailers.Bad Key/);
    expect(() => server.script('x', [{ trailers: { connection: 'close' } }])).toThrow(/reserved/);
  });

  it('reset() forgets scripts, counters and records', async () => {
    server.script('z', [{ status: grpc.status.UNAVAILABLE }]);
    await unary(client, md('z')).done;
    server.reset();
    expect(server.allAttempts()).toEqual([]);
    const out = await unary(client, md('z')).done;
    expect(out.error).toBeNull();
    expect(out.response?.attempt).toBe(1);
  });

  it('allAttempts() lists attempts of every call id in arrival order', async () => {
    await unary(client, md('p')).done;
    await unary(client, md('q')).done;
    await unary(client, md('p')).done;
    expect(server.allAttempts().map((a) => `${a.callId}${a.attempt}`)).toEqual(['p1', 'q1', 'p2']);
  });

  it('waitForAttempts() and waitFor() reject with a clear error on timeout', async () => {
    await expect(server.waitForAttempts('never', 1, 30)).rejects.toThrow(
      'call id "never" has 0 of 1 attempts after 30 ms',
    );
    await expect(server.waitFor(() => false, 20)).rejects.toThrow(/not met within 20 ms/);
  });

  it('validateAttemptScripts() returns a checked copy', () => {
    const input = [{ status: 14, trailers: { 'x-a': 'b' } }];
    const copy = validateAttemptScripts(input);
    expect(copy).toEqual(input);
    expect(copy[0]).not.toBe(input[0]);
    expect(() => validateAttemptScripts([{ details: '\ud800' }])).toThrow(/"details"/);
    expect(() => validateAttemptScripts([{ pushback: 'é' }])).toThrow(/"pushback"/);
    expect(() => validateAttemptScripts([{ responses: 1.5 }])).toThrow(/"responses"/);
    expect(() => validateAttemptScripts([{ echo: 'yes' }])).toThrow(/"echo" must be a boolean/);
  });
});

describe('hooks and lifecycle', () => {
  it('asks onAttempt for call ids without a script and tells onAttemptEnd about every attempt', async () => {
    const seen: Array<{ callId: string; attempt: number; method: string; user: unknown }> = [];
    const ended: RecordedAttempt[] = [];
    const hooked = await FlakyServer.start({
      scripts: { scripted: [{ status: grpc.status.ABORTED }] },
      onAttempt: ({ callId, attempt, method, metadata }) => {
        seen.push({ callId, attempt, method, user: metadata.get('x-user')[0] });
        if (callId === 'throw') throw new Error('hook exploded');
        return attempt === 1 ? { status: grpc.status.UNAVAILABLE } : undefined;
      },
      onAttemptEnd: (attempt) => ended.push(attempt),
    });
    const c = newClient(hooked.address);
    try {
      expect((await unary(c, md('h', { 'x-user': 'u' })).done).error?.code).toBe(grpc.status.UNAVAILABLE);
      expect((await unary(c, md('h')).done).response?.attempt).toBe(2);
      expect((await unary(c, md('scripted')).done).error?.code).toBe(grpc.status.ABORTED);
      const thrown = await unary(c, md('throw')).done;
      expect(thrown.error?.code).toBe(grpc.status.INTERNAL);
      expect(thrown.error?.details).toMatch(/hook exploded/);
      expect(seen).toEqual([
        { callId: 'h', attempt: 1, method: flakyMethodPath('Unary'), user: 'u' },
        { callId: 'h', attempt: 2, method: flakyMethodPath('Unary'), user: undefined },
        { callId: 'throw', attempt: 1, method: flakyMethodPath('Unary'), user: undefined },
      ]);
      expect(ended.map((a) => [a.callId, a.endedWith])).toEqual([
        ['h', grpc.status.UNAVAILABLE],
        ['h', grpc.status.OK],
        ['scripted', grpc.status.ABORTED],
        ['throw', grpc.status.INTERNAL],
      ]);
    } finally {
      c.close();
      await hooked.stop();
    }
  });

  it('ends an attempt INTERNAL when an async onAttempt returns a Promise, which would read as "succeed"', async () => {
    const hooked = await FlakyServer.start({
      onAttempt: (async () => ({ status: grpc.status.UNAVAILABLE })) as never,
    });
    const c = newClient(hooked.address);
    try {
      const result = await unary(c, md('async')).done;
      expect(result.error?.code).toBe(grpc.status.INTERNAL);
      expect(result.error?.details).toBe(
        'flaky server onAttempt hook: returned a Promise; it must return the attempt script itself (or undefined), synchronously: script ahead with script() or scriptMethod() for what needs awaiting',
      );
    } finally {
      c.close();
      await hooked.stop();
    }
  });

  it('refuses a served method given as a call id, which no client sends, naming the option that scripts it', async () => {
    const method = flakyMethodPath('Unary').slice(1);
    const unqualified = method.slice(method.lastIndexOf('.', method.indexOf('/')) + 1);
    for (const key of [method, `/${method}`, unqualified]) {
      expect(() => server.script(key, [{ status: grpc.status.UNAVAILABLE }])).toThrow(
        `FlakyServer.script("${key}"): "${method}" is a method this server serves, not a call id (the value a client sends in x-flaky-call-id); script the method with scriptMethod("${method}", attempts)`,
      );
    }
    await expect(FlakyServer.start({ scripts: { [method]: [{}] } })).rejects.toThrow(
      `FlakyServer.start: scripts["${method}"]: "${method}" is a method this server serves, not a call id (the value a client sends in x-flaky-call-id); script the method with methodScripts: { "${method}": [...] }`,
    );
    // Call ids that only look like paths, or name a method no server serves, are call ids as before.
    expect(() => server.script('user/42', [{}])).not.toThrow();
    expect(() => server.script('Unary', [{}])).not.toThrow();
  });

  it('stop() is idempotent and cuts calls in progress short', async () => {
    const own = await FlakyServer.start({ scripts: { long: [{ delayMs: 10_000 }] } });
    const c = newClient(own.address);
    try {
      const pending = unary(c, md('long')).done;
      await own.waitForAttempts('long', 1);
      const start = Date.now();
      const first = own.stop(50);
      expect(own.stop()).toBe(first);
      await first;
      expect(Date.now() - start).toBeLessThan(1000);
      const out = await pending;
      expect(out.error).not.toBeNull();
      await own.waitFor(() => own.attempts('long')[0]!.cancelled);
      own.forceStop(); // harmless after stop
    } finally {
      c.close();
    }
  });

  it('forceStop() stops at once and stop() afterwards resolves', async () => {
    const own = await FlakyServer.start();
    own.forceStop();
    own.forceStop();
    await own.stop();
    const c = newClient(own.address);
    const out = await unary(c, md('gone'), { payload: 'x' }, { deadline: Date.now() + 500 }).done;
    expect(out.error?.code).toBe(grpc.status.UNAVAILABLE);
    c.close();
  });

  it('rejects an invalid port and invalid initial scripts', async () => {
    await expect(FlakyServer.start({ port: 70000 })).rejects.toThrow(
      'FlakyServer: option "port" must be an integer 0..65535, got 70000',
    );
    // A port read from the environment is text: the error says so.
    await expect(FlakyServer.start({ port: '50051' as never })).rejects.toThrow(
      'FlakyServer: option "port" must be an integer 0..65535, got "50051"; did you mean 50051 (a number, not a string)?',
    );
    await expect(
      FlakyServer.start({ scripts: { x: [{ status: 'no' as unknown as number }] } }),
    ).rejects.toThrow(/scripts\["x"\]\[0\]: "status"/);
  });
});

describe('FlakyServer: maxRecordedAttempts', () => {
  async function callsOn(server: FlakyServer, ids: string[]): Promise<void> {
    const client = newClient(server.address);
    try {
      for (const id of ids) {
        await new Promise<void>((resolve, reject) =>
          client.Unary({ payload: id }, md(id), {}, (err) => (err ? reject(err) : resolve())),
        );
      }
    } finally {
      client.close();
    }
  }

  it('keeps the latest attempts and forgets the oldest beyond the limit', async () => {
    const server = await FlakyServer.start({ maxRecordedAttempts: 3 });
    try {
      await callsOn(server, ['a', 'b', 'c', 'd', 'e']);
      expect(server.allAttempts().map((r) => r.callId)).toEqual(['c', 'd', 'e']);
      expect(server.attempts('a')).toEqual([]);
      expect(server.attempts('e')).toHaveLength(1);
      expect(server.attemptsOf(flakyMethodPath('Unary')).map((r) => r.callId)).toEqual(['c', 'd', 'e']);
    } finally {
      await server.stop();
    }
  });

  it('with 0 keeps none, and onAttemptEnd still sees every attempt', async () => {
    const ended: string[] = [];
    const server = await FlakyServer.start({
      maxRecordedAttempts: 0,
      onAttemptEnd: (attempt) => ended.push(attempt.callId),
    });
    try {
      await callsOn(server, ['a', 'b']);
      expect(server.allAttempts()).toEqual([]);
      await server.waitFor(() => ended.length === 2);
      expect(ended).toEqual(['a', 'b']);
    } finally {
      await server.stop();
    }
  });

  it('keeps numbering the attempts of a call id whose earlier attempts were forgotten', async () => {
    const server = await FlakyServer.start({ maxRecordedAttempts: 1 });
    try {
      await callsOn(server, ['a', 'b', 'a']);
      expect(server.allAttempts().map((r) => [r.callId, r.attempt])).toEqual([['a', 2]]);
    } finally {
      await server.stop();
    }
  });

  it.each<[unknown, typeof TypeError]>([
    [-1, RangeError],
    [1.5, RangeError],
    [Number.NaN, TypeError],
    ['10', TypeError],
  ])('rejects %s with a %o naming the option', async (value, kind) => {
    const started = FlakyServer.start({ maxRecordedAttempts: value as number });
    await expect(started).rejects.toThrow(kind);
    await expect(started).rejects.toThrow(/option "maxRecordedAttempts" must be an integer >= 0 or Infinity/);
  });
});
