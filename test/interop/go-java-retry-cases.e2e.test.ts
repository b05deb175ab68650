/**
 * A differential audit against the end-to-end retry tests of two other A6 implementations: grpc-go's
 * test/retry_test.go and grpc-java's interop-testing RetryTest. Each scenario that a client interceptor above
 * grpc-js can meet is re-created here, in this package's terms, against `createRetryInterceptor` and a server that
 * plays a script of steps across the attempts of a call (retry-case-server.ts). Each test counts the attempts the
 * server ran, the `grpc-previous-rpc-attempts` each one carried, the final status and what the application got.
 *
 * Not tested here, and why:
 * - go TestRetryStats, its transparent part (a REFUSED_STREAM answered by a transparent retry, and the exact
 *   sequence of Go's stats-handler records): transparent retries happen in grpc-js's transport, below every
 *   interceptor, and the record shapes are Go's own. Its pushback part (a 10 ms pushback before the next attempt)
 *   is tested below.
 * - java RetryTest.transparentRetryStatsRecorded: a GOAWAY answered by a transparent retry, below the interceptor.
 * - java RetryTest.serverCancelledAndClientDeadlineExceeded: a stream tracer moves Java's fake clock past the
 *   deadline between the server's CANCELLED and the client's close, and the call has no retry policy, so the
 *   interceptor only passes it through to grpc-js; grpc-js offers no hook to interleave a clock there.
 * - go TestRetryDisabledByDefault: Go's retries were once switched on by an environment variable; there is no such
 *   switch here. Its analogue (a method the config gives no policy makes one attempt) is tested below.
 * - The Java tests' OpenCensus records (retries per call, transparent retries, retry delay): Java's stats API. The
 *   numbers they stand for are checked through this package's events (`attempt-start` kinds, `call-end`).
 * - Neither file has hedging cases.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ServiceConfigJson } from '../../src/config/service-config-json.js';
import { createRetryInterceptor, isServiceConfigError, validateServiceConfig } from '../../src/index.js';
import type { RetryEvent } from '../../src/retry/events.js';
import type { RetryInterceptorOptions } from '../../src/retry/interceptor-options.js';
import { captureWarnings } from '../helpers/warnings.js';
import {
  type StreamingInputCallRequest,
  type StreamingInputCallResponse,
  type StreamingOutputCallRequest,
  type StreamingOutputCallResponse,
  TEST_SERVICE,
  type TestServiceClient,
  TestServiceClientConstructor,
  testServiceDefinition,
} from './interop-service.js';
import {
  CASE_KEY,
  type CaseState,
  type RetryCaseServer,
  type Step,
  startRetryCaseServer,
} from './retry-case-server.js';

const { status } = grpc;
const FAILURE = 'scripted failure';

// ---- the server's steps ----
const body = (b: number | Buffer) => (typeof b === 'number' ? Buffer.from([b]) : b);
const gets = (b: number | Buffer): Step => ({ op: 'recv', body: body(b) });
const getsHalfClose: Step = { op: 'recv-end' };
const seesAttempt = (n: number): Step => ({ op: 'attempts', n });
const sendsHeaders: Step = { op: 'headers' };
const sends = (b: number): Step => ({ op: 'send', body: body(b) });
const pushesBack = (value: string): Step => ({ op: 'pushback', value });
const fails = (code: number, details = FAILURE): Step => ({ op: 'fail', code, details });
const hangs: Step = { op: 'hang' };
const succeeds: Step = { op: 'ok' };

// ---- the service configs ----
function retryConfig(policy: Record<string, unknown>, root: Record<string, unknown> = {}): ServiceConfigJson {
  return {
    methodConfig: [
      {
        name: [{ service: TEST_SERVICE }],
        waitForReady: true,
        retryPolicy: {
          maxAttempts: 4,
          initialBackoff: '0.01s',
          maxBackoff: '0.01s',
          backoffMultiplier: 1,
          retryableStatusCodes: ['UNAVAILABLE'],
          ...policy,
        },
      },
    ],
    ...root,
  } as ServiceConfigJson;
}

interface Client {
  stub: TestServiceClient;
  events: RetryEvent[];
  /** `performance.now()` at each event, by index. */
  times: number[];
}

const clients: TestServiceClient[] = [];

function makeClient(
  address: string,
  config: ServiceConfigJson,
  options: RetryInterceptorOptions = {},
): Client {
  const events: RetryEvent[] = [];
  const times: number[] = [];
  const interceptor = createRetryInterceptor(config, {
    ...options,
    onEvent: (e) => {
      events.push(e);
      times.push(performance.now());
    },
  });
  const stub = new TestServiceClientConstructor(address, grpc.credentials.createInsecure(), {
    interceptors: [interceptor],
    'grpc.enable_retries': 0,
  });
  clients.push(stub);
  return { stub, events, times };
}

let n = 0;
function caseMetadata(name: string): { id: string; metadata: grpc.Metadata } {
  const id = `${name}#${++n}`;
  const metadata = new grpc.Metadata();
  metadata.set(CASE_KEY, id);
  return { id, metadata };
}

const deadline = () => Date.now() + 5000;
const events = (c: Client, type: RetryEvent['type']) => c.events.filter((e) => e.type === type);

async function until(predicate: () => boolean, what: string | (() => string)): Promise<void> {
  const give = Date.now() + 4000;
  while (!predicate()) {
    if (Date.now() > give) {
      throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** What the application sees of a bidi call: messages, headers, the status (and how many times it came). */
class Seen {
  readonly messages: Buffer[] = [];
  headers: grpc.Metadata | undefined;
  status: grpc.StatusObject | undefined;
  statusEvents = 0;
  /** Set a little after the status, once no late message can still come. */
  settled = false;
  read = 0;

  constructor(call: grpc.ClientDuplexStream<StreamingOutputCallRequest, StreamingOutputCallResponse>) {
    call.on('metadata', (md: grpc.Metadata) => {
      this.headers = md;
    });
    call.on('data', (m: StreamingOutputCallResponse) =>
      this.messages.push(Buffer.from(m.payload?.body ?? [])),
    );
    call.on('error', () => {});
    call.on('status', (s: grpc.StatusObject) => {
      this.statusEvents += 1;
      this.status ??= s;
      setTimeout(() => {
        this.settled = true;
      }, 15);
    });
  }
}

type ClientStep =
  | { op: 'write'; body: Buffer }
  | { op: 'half-close' }
  | { op: 'read'; body: Buffer }
  | { op: 'headers' }
  | { op: 'peer' }
  | { op: 'mark-time' }
  | { op: 'waited'; ms: number };

const writes = (b: number | Buffer): ClientStep => ({ op: 'write', body: body(b) });
const halfCloses: ClientStep = { op: 'half-close' };
const reads = (b: number): ClientStep => ({ op: 'read', body: body(b) });
const awaitsHeaders: ClientStep = { op: 'headers' };
const asksPeer: ClientStep = { op: 'peer' };
const marksTime: ClientStep = { op: 'mark-time' };
const hasWaited = (ms: number): ClientStep => ({ op: 'waited', ms });

interface BidiRun {
  state: CaseState;
  seen: Seen;
  status: grpc.StatusObject;
}

/**
 * One bidi call: the server plays `steps` across attempts while the client runs `clientSteps` in order, then the
 * call's status is awaited. Checks on the way that every read gets the message it expects.
 */
async function bidiCase(
  server: RetryCaseServer,
  client: Client,
  name: string,
  steps: readonly Step[],
  clientSteps: readonly ClientStep[],
): Promise<BidiRun> {
  const { id, metadata } = caseMetadata(name);
  const state = server.script(id, steps);
  const call = client.stub.FullDuplexCall(metadata, { deadline: deadline() });
  const seen = new Seen(call);
  let mark = 0;
  for (const step of clientSteps) {
    switch (step.op) {
      case 'write':
        call.write({ payload: { body: step.body } });
        break;
      case 'half-close':
        call.end();
        break;
      case 'read': {
        await until(() => seen.messages.length > seen.read || seen.settled, 'a response message');
        const got = seen.messages[seen.read];
        expect(got, `read ${seen.read}: the call ended (${seen.status?.code}) instead`).toBeDefined();
        expect(got?.toString('hex')).toBe(step.body.toString('hex'));
        seen.read += 1;
        break;
      }
      case 'headers':
        await until(() => seen.headers !== undefined || seen.status !== undefined, 'headers or the end');
        break;
      case 'peer':
        expect(typeof call.getPeer()).toBe('string');
        break;
      case 'mark-time':
        mark = performance.now();
        break;
      case 'waited':
        expect(performance.now() - mark).toBeGreaterThanOrEqual(step.ms - 2);
        break;
    }
  }
  await until(() => seen.settled, 'the status');
  // Nothing reached the application that the client's script did not read.
  expect(seen.messages.length).toBe(seen.read);
  expect(seen.statusEvents).toBe(1);
  // The server's script ran to its end, without a broken expectation.
  expect(state.problems).toEqual([]);
  expect(state.position).toBe(state.steps.length);
  return { state, seen, status: seen.status as grpc.StatusObject };
}

/** The `grpc-previous-rpc-attempts` values the server saw, one array per attempt. */
const attemptHeaders = (state: CaseState) => state.attempts.map((a) => a.previousAttempts);
/** `n` attempts numbered as A6 says: none on the first, then 1, 2, ... */
const numbered = (count: number) => Array.from({ length: count }, (_, i) => (i === 0 ? [] : [String(i)]));

function emptyCall(
  client: Client,
  metadata: grpc.Metadata,
): Promise<{ error: grpc.ServiceError | null; trailers?: grpc.Metadata }> {
  return new Promise((resolve) => {
    const call = client.stub.EmptyCall({}, metadata, { deadline: deadline() }, (error) => {
      setImmediate(() => resolve({ error }));
    });
    call.on('status', () => {});
  });
}

let server: RetryCaseServer;
beforeAll(async () => {
  server = await startRetryCaseServer();
});
afterAll(async () => {
  for (const c of clients) c.close();
  await server.stop();
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('grpc-go TestRetryStreaming (bidi; maxAttempts 4, 10 ms backoff, UNAVAILABLE, a 200-byte replay buffer)', () => {
  let client: Client;
  beforeAll(() => {
    // Go's table runs with a 200-byte per-call retry buffer; each one-byte request costs 5 + 53 bytes here.
    client = makeClient(server.address, retryConfig({}), { perRpcBufferBytes: 200 });
  });

  // go TestRetryStreaming "Non-retryable error code": INTERNAL ends the call after one attempt.
  it('a code outside retryableStatusCodes is the result at once', async () => {
    const run = await bidiCase(
      server,
      client,
      'non-retryable',
      [gets(1), fails(status.INTERNAL)],
      [writes(1)],
    );
    expect(run.status.code).toBe(status.INTERNAL);
    expect(run.status.details).toBe(FAILURE);
    expect(attemptHeaders(run.state)).toEqual(numbered(1));
  });

  // go TestRetryStreaming "One retry necessary": a Trailers-Only UNAVAILABLE is retried, the request replayed.
  it('one retry: the request is replayed and the retry answers', async () => {
    const run = await bidiCase(
      server,
      client,
      'one-retry',
      [gets(1), fails(status.UNAVAILABLE), gets(1), seesAttempt(1), sends(1)],
      [writes(1), reads(1)],
    );
    expect(run.status.code).toBe(status.OK);
    expect(attemptHeaders(run.state)).toEqual(numbered(2));
    expect(run.state.attempts.map((a) => a.received.length)).toEqual([1, 1]);
  });

  // go TestRetryStreaming "Exceed max attempts (4)": four attempts, numbered 1..3 after the first, then the failure.
  it('maxAttempts bounds the retries; each attempt carries its number', async () => {
    const run = await bidiCase(
      server,
      client,
      'exhausted',
      [
        ...[gets(1), fails(status.UNAVAILABLE)],
        ...[gets(1), seesAttempt(1), fails(status.UNAVAILABLE)],
        ...[seesAttempt(2), gets(1), fails(status.UNAVAILABLE)],
        ...[seesAttempt(3), gets(1), fails(status.UNAVAILABLE)],
      ],
      [writes(1)],
    );
    expect(run.status.code).toBe(status.UNAVAILABLE);
    expect(run.status.details).toBe(FAILURE);
    expect(attemptHeaders(run.state)).toEqual(numbered(4));
    expect(events(client, 'call-end').at(-1)).toMatchObject({ attempts: 4, reason: 'attempts-exhausted' });
  });

  // go TestRetryStreaming "Multiple requests": both messages written before the failure are replayed in order.
  it('replays every message written before the failure', async () => {
    const run = await bidiCase(
      server,
      client,
      'two-requests',
      [gets(1), gets(2), fails(status.UNAVAILABLE), gets(1), gets(2), sends(5)],
      [writes(1), writes(2), reads(5)],
    );
    expect(run.status.code).toBe(status.OK);
    expect(attemptHeaders(run.state)).toEqual(numbered(2));
  });

  // go TestRetryStreaming "Multiple successive requests": each attempt reads one message more; all are replayed.
  it('replays the whole stream on each attempt, whatever the last attempt had read', async () => {
    const run = await bidiCase(
      server,
      client,
      'successive',
      [
        ...[gets(1), fails(status.UNAVAILABLE)],
        ...[gets(1), gets(2), fails(status.UNAVAILABLE)],
        ...[gets(1), gets(2), gets(3), sends(5)],
      ],
      [writes(1), writes(2), writes(3), reads(5)],
    );
    expect(run.status.code).toBe(status.OK);
    expect(attemptHeaders(run.state)).toEqual(numbered(3));
    expect(run.state.attempts.map((a) => a.received.length)).toEqual([1, 2, 3]);
  });

  // go TestRetryStreaming "No retry after receiving": a message commits the call; the later UNAVAILABLE is final.
  it('a received message commits: the failure after it is the result', async () => {
    const run = await bidiCase(
      server,
      client,
      'after-message',
      [gets(1), fails(status.UNAVAILABLE), gets(1), sends(3), fails(status.UNAVAILABLE)],
      [writes(1), reads(3)],
    );
    expect(run.status.code).toBe(status.UNAVAILABLE);
    expect(run.status.details).toBe(FAILURE);
    expect(attemptHeaders(run.state)).toEqual(numbered(2));
    expect(events(client, 'call-end').at(-1)).toMatchObject({ attempts: 2, reason: 'committed' });
  });

  // go TestRetryStreaming "Retry via ClientStream.Header()": waiting for headers does not commit; a Trailers-Only
  // failure is retried and the retry's Trailers-Only OK ends the call.
  it('waiting for headers meanwhile does not stop a retry of a Trailers-Only failure', async () => {
    const run = await bidiCase(
      server,
      client,
      'header-retry',
      [gets(1), fails(status.UNAVAILABLE), gets(1), seesAttempt(1)],
      [writes(1), awaitsHeaders],
    );
    expect(run.status.code).toBe(status.OK);
    expect(attemptHeaders(run.state)).toEqual(numbered(2));
  });

  // go TestRetryStreaming "No retry after header": response headers commit the call; no retry of the failure.
  it('response headers commit: the failure after them is the result', async () => {
    const run = await bidiCase(
      server,
      client,
      'after-headers',
      [gets(1), sendsHeaders, fails(status.UNAVAILABLE)],
      [writes(1), awaitsHeaders],
    );
    expect(run.status.code).toBe(status.UNAVAILABLE);
    expect(run.seen.headers?.get('x-scripted-header')).toEqual(['sent']);
    expect(attemptHeaders(run.state)).toEqual(numbered(1));
    expect(events(client, 'committed').at(-1)).toMatchObject({ reason: 'headers' });
  });

  // go TestRetryStreaming "No retry after context": DIFFERS (Go-specific). Reading a Go stream's Context() commits
  // it (the context names the attempt's transport); grpc-js has no such accessor, and the nearest, getPeer(), is
  // documented (docs/configuration.md, Metadata) to follow the newest attempt without committing: so it is retried.
  it('asking the call for its peer does not commit it (Go commits on Context())', async () => {
    const run = await bidiCase(
      server,
      client,
      'peer',
      [gets(1), fails(status.UNAVAILABLE), gets(1), seesAttempt(1), sends(7)],
      [writes(1), asksPeer, reads(7)],
    );
    expect(run.status.code).toBe(status.OK);
    expect(attemptHeaders(run.state)).toEqual(numbered(2));
  });

  // go TestRetryStreaming "Replaying close send": the half-close is replayed after the messages, in order.
  it('replays the half-close after the messages', async () => {
    const run = await bidiCase(
      server,
      client,
      'half-close',
      [
        ...[gets(1), gets(2), getsHalfClose, fails(status.UNAVAILABLE)],
        ...[gets(1), gets(2), getsHalfClose, sends(1), sends(3), sends(5)],
      ],
      [writes(1), writes(2), halfCloses, reads(1), reads(3), reads(5)],
    );
    expect(run.status.code).toBe(status.OK);
    expect(run.state.attempts.map((a) => a.halfClosed)).toEqual([true, true]);
    expect(attemptHeaders(run.state)).toEqual(numbered(2));
  });

  // go TestRetryStreaming "Negative server pushback - no retry": pushback -1 means do not retry.
  it('a negative pushback stops retries', async () => {
    const run = await bidiCase(
      server,
      client,
      'pushback-negative',
      [gets(1), pushesBack('-1'), fails(status.UNAVAILABLE)],
      [writes(1)],
    );
    expect(run.status.code).toBe(status.UNAVAILABLE);
    expect(attemptHeaders(run.state)).toEqual(numbered(1));
    expect(events(client, 'call-end').at(-1)).toMatchObject({ reason: 'do-not-retry' });
  });

  // go TestRetryStreaming "Non-numeric server pushback - no retry": an unparseable pushback means do not retry.
  it('a non-numeric pushback stops retries', async () => {
    const run = await bidiCase(
      server,
      client,
      'pushback-text',
      [gets(1), pushesBack('xxx'), fails(status.UNAVAILABLE)],
      [writes(1)],
    );
    expect(run.status.code).toBe(status.UNAVAILABLE);
    expect(attemptHeaders(run.state)).toEqual(numbered(1));
    expect(events(client, 'call-end').at(-1)).toMatchObject({ reason: 'do-not-retry' });
  });

  // go TestRetryStreaming "Multiple server pushback values - no retry": two pushback values mean do not retry (Node's
  // HTTP/2 client joins the repeated trailer into "100, 10", which does not parse either).
  it('two pushback values stop retries', async () => {
    const run = await bidiCase(
      server,
      client,
      'pushback-twice',
      [gets(1), pushesBack('100'), pushesBack('10'), fails(status.UNAVAILABLE)],
      [writes(1)],
    );
    expect(run.status.code).toBe(status.UNAVAILABLE);
    expect(attemptHeaders(run.state)).toEqual(numbered(1));
    expect(events(client, 'call-end').at(-1)).toMatchObject({ reason: 'do-not-retry' });
  });

  // go TestRetryStreaming "1s server pushback - delayed retry" (200 ms here): the retry waits the pushback exactly,
  // not the 10 ms backoff.
  it('a pushback of n ms delays the retry by n ms', async () => {
    const run = await bidiCase(
      server,
      client,
      'pushback-delay',
      [gets(1), pushesBack('200'), fails(status.UNAVAILABLE), gets(1), sends(2)],
      [marksTime, writes(1), reads(2), hasWaited(200)],
    );
    expect(run.status.code).toBe(status.OK);
    expect(attemptHeaders(run.state)).toEqual(numbered(2));
    expect(events(client, 'retry-scheduled').at(-1)).toMatchObject({ reason: 'pushback', delayMs: 200 });
  });

  // go TestRetryStreaming "Overflowing buffer - no retry": a 500-byte request outgrows the 200-byte replay buffer,
  // commits, and is sent once.
  it('a request that overflows the replay buffer is sent once and not retried', async () => {
    const warnings = captureWarnings();
    const large = Buffer.alloc(500, 0x61);
    const run = await bidiCase(
      server,
      client,
      'overflow',
      [gets(large), fails(status.UNAVAILABLE)],
      [writes(large)],
    );
    expect(run.status.code).toBe(status.UNAVAILABLE);
    expect(attemptHeaders(run.state)).toEqual(numbered(1));
    expect(run.state.attempts[0]?.received[0]?.length).toBe(500);
    expect(events(client, 'committed').at(-1)).toMatchObject({ reason: 'replay-buffer' });
    expect(events(client, 'call-end').at(-1)).toMatchObject({ reason: 'replay-buffer', attempts: 1 });
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_REPLAY_BUFFER']);
  });
});

describe('grpc-go unary tests (EmptyCall)', () => {
  // go TestRetryUnary: a run of calls against one timeline of answers (maxAttempts 4, ALREADY_EXISTS retryable);
  // each call stops at the first OK or INTERNAL, or after four ALREADY_EXISTS.
  it('retries ALREADY_EXISTS up to maxAttempts and stops at OK or INTERNAL', async () => {
    const client = makeClient(server.address, retryConfig({ retryableStatusCodes: ['ALREADY_EXISTS'] }));
    const { id, metadata } = caseMetadata('unary');
    // The server's answers, one per attempt, whichever call it belongs to.
    const state = server.script(
      id,
      Array.from({ length: 16 }, (_, i): Step => {
        if ([0, 2, 5].includes(i)) return succeeds;
        if ([6, 8, 11].includes(i)) return fails(status.INTERNAL, 'not retryable');
        return fails(status.ALREADY_EXISTS, 'retryable');
      }),
    );
    const expected: [number, number][] = [
      [status.OK, 1],
      [status.OK, 3],
      [status.OK, 6],
      [status.INTERNAL, 7],
      [status.INTERNAL, 9],
      [status.INTERNAL, 12],
      [status.ALREADY_EXISTS, 16],
    ];
    for (const [code, served] of expected) {
      const before = state.attempts.length;
      const { error } = await emptyCall(client, metadata);
      expect(error?.code ?? status.OK).toBe(code);
      expect(state.attempts.length).toBe(served);
      expect(attemptHeaders(state).slice(before)).toEqual(numbered(served - before));
    }
    expect(state.problems).toEqual([]);
  });

  // go TestRetryThrottling: maxTokens 10, tokenRatio 0.5: a retry goes only while tokens > 5 after the failure;
  // the same timeline of answers gives the same attempts and results as in Go.
  it('retryThrottling lets retries through only while more than half the tokens are left', async () => {
    const client = makeClient(
      server.address,
      retryConfig({}, { retryThrottling: { maxTokens: 10, tokenRatio: 0.5 } }),
    );
    const { id, metadata } = caseMetadata('throttling');
    const okAt = [0, 3, 6, 10, 11, 12, 13, 14, 16, 18];
    const state = server.script(
      id,
      Array.from({ length: 19 }, (_, i) => (okAt.includes(i) ? succeeds : fails(status.UNAVAILABLE))),
    );
    const expected: [number, number][] = [
      [status.OK, 1], // 10 tokens
      [status.OK, 4], // 10 - 2 + 0.5
      [status.OK, 7], // 8.5 - 2 + 0.5 = 7
      [status.UNAVAILABLE, 9], // 6 after the first failure (retried), 5 after the second: not > 5
      [status.UNAVAILABLE, 10], // 4
      [status.OK, 11], // 4.5
      [status.OK, 12], // 5
      [status.OK, 13], // 5.5
      [status.OK, 14], // 6
      [status.OK, 15], // 6.5
      [status.OK, 17], // 5.5 after the failure (retried), then 6
      [status.UNAVAILABLE, 18], // 5: not > 5
    ];
    for (const [code, served] of expected) {
      const { error } = await emptyCall(client, metadata);
      expect(error?.code ?? status.OK).toBe(code);
      expect(state.attempts.length).toBe(served);
    }
    expect(events(client, 'throttled')).toHaveLength(3);
    expect(state.problems).toEqual([]);
  });

  // go TestMaxCallAttempts: attempts = min(the config's maxAttempts, the client's limit, 5 by default), for a bidi
  // and a unary call alike. Go's cases with a limit of 0 or -1 ("use the default") are below: they differ.
  it.each([
    { configured: 9, limit: 4, attempts: 4 },
    { configured: 9, limit: 7, attempts: 7 },
    { configured: 3, limit: 10, attempts: 3 },
    { configured: 8, limit: undefined, attempts: 5 },
  ])(
    'maxAttempts $configured with maxAttemptsLimit $limit makes $attempts attempts',
    async ({ configured, limit, attempts }) => {
      const warnings = captureWarnings();
      const client = makeClient(
        server.address,
        retryConfig({ maxAttempts: configured }),
        limit === undefined ? {} : { maxAttemptsLimit: limit },
      );
      expect(warnings.some((w) => w.code === 'GRPC_RETRY_HEDGING_MAX_ATTEMPTS')).toBe(configured > attempts);
      const failures = Array.from({ length: 12 }, () => fails(status.UNAVAILABLE));

      const bidi = caseMetadata('max-attempts-bidi');
      const bidiState = server.script(bidi.id, failures);
      const call = client.stub.FullDuplexCall(bidi.metadata, { deadline: deadline() });
      const seen = new Seen(call);
      await until(() => seen.settled, 'the bidi status');
      expect(seen.status?.code).toBe(status.UNAVAILABLE);
      expect(attemptHeaders(bidiState)).toEqual(numbered(attempts));

      const unary = caseMetadata('max-attempts-unary');
      const unaryState = server.script(unary.id, failures);
      const { error } = await emptyCall(client, unary.metadata);
      expect(error?.code).toBe(status.UNAVAILABLE);
      expect(attemptHeaders(unaryState)).toEqual(numbered(attempts));
    },
  );

  // go TestMaxCallAttempts, limits 0 and -1: DIFFERS (deliberate). Go reads a limit <= 0 as "the default"; here
  // maxAttemptsLimit is checked as an integer >= 1 (src/retry/interceptor-options.ts) and a bad one is an error
  // where the interceptor is made; leaving it out gives the default of 5 (case above).
  it.each([0, -1])('maxAttemptsLimit %d is refused when the interceptor is made', (limit) => {
    expect(() =>
      createRetryInterceptor(retryConfig({ maxAttempts: 3 }), { maxAttemptsLimit: limit }),
    ).toThrow(/maxAttemptsLimit/);
  });

  // go TestRetryDisabledByDefault, analogue: a method the config gives no policy makes one attempt.
  it('a method with no policy in the config is not retried', async () => {
    const config = {
      methodConfig: [
        {
          name: [{ service: 'grpc.testing.OtherService' }],
          retryPolicy: {
            maxAttempts: 4,
            initialBackoff: '0.01s',
            maxBackoff: '0.01s',
            backoffMultiplier: 1,
            retryableStatusCodes: ['ALREADY_EXISTS'],
          },
        },
      ],
    } as ServiceConfigJson;
    const client = makeClient(server.address, config);
    const { id, metadata } = caseMetadata('no-policy');
    const state = server.script(id, [fails(status.ALREADY_EXISTS), fails(status.ALREADY_EXISTS)]);
    const { error } = await emptyCall(client, metadata);
    expect(error?.code).toBe(status.ALREADY_EXISTS);
    expect(attemptHeaders(state)).toEqual(numbered(1));
    expect(client.events).toEqual([]);
  });

  // go TestRetryStats, its pushback part: a Trailers-Only UNAVAILABLE with a 10 ms pushback; the next attempt
  // starts no sooner than 10 ms after it, and the call's retry delay counts that wait.
  it('a 10 ms pushback separates the failed attempt from the next', async () => {
    const client = makeClient(server.address, retryConfig({ initialBackoff: '1s', maxBackoff: '1s' }));
    const { id, metadata } = caseMetadata('stats-pushback');
    const state = server.script(id, [
      pushesBack('10'),
      fails(status.UNAVAILABLE, 'try again shortly'),
      seesAttempt(1),
    ]);
    const { error } = await emptyCall(client, metadata);
    expect(error).toBeNull();
    expect(attemptHeaders(state)).toEqual(numbered(2));
    expect(state.problems).toEqual([]);
    const ended = client.events.findIndex((e) => e.type === 'attempt-end');
    const started = client.events.findIndex((e) => e.type === 'attempt-start' && e.attempt === 2);
    expect((client.times[started] ?? 0) - (client.times[ended] ?? 0)).toBeGreaterThanOrEqual(9);
    expect(events(client, 'retry-scheduled')).toEqual([
      expect.objectContaining({ reason: 'pushback', delayMs: 10 }),
    ]);
    const end = events(client, 'call-end')[0];
    expect(end).toMatchObject({ code: status.OK, attempts: 2 });
    expect(end?.type === 'call-end' && end.retryDelayMs).toBeGreaterThanOrEqual(9);
  });

  // go TestRetryThrottling beside TestRetryStreaming "No retry after header": DIFFERS (deliberate, documented in
  // docs/configuration.md, Throttling). grpc-go takes a token only for failures before the commit; A6 (and C-core)
  // count every failed RPC with a retryable code, so a stream that fails after its headers takes one here. With
  // maxTokens 3 (retries need more than 1.5), that one plus a Trailers-Only failure leave 1: no retry, where Go
  // would still have 2 tokens and retry.
  it('a failure after the commit takes a throttle token too', async () => {
    const client = makeClient(
      server.address,
      retryConfig({}, { retryThrottling: { maxTokens: 3, tokenRatio: 0.1 } }),
    );
    const committed = caseMetadata('throttle-after-commit');
    const committedState = server.script(committed.id, [sendsHeaders, fails(status.UNAVAILABLE)]);
    const call = client.stub.FullDuplexCall(committed.metadata, { deadline: deadline() });
    const seen = new Seen(call);
    await until(() => seen.settled, 'the committed call to end');
    expect(seen.status?.code).toBe(status.UNAVAILABLE);
    expect(attemptHeaders(committedState)).toEqual(numbered(1));

    const next = caseMetadata('throttle-after-commit-next');
    const nextState = server.script(next.id, [fails(status.UNAVAILABLE), succeeds]);
    const { error } = await emptyCall(client, next.metadata);
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(attemptHeaders(nextState)).toEqual(numbered(1));
    expect(events(client, 'throttled')).toEqual([expect.objectContaining({ attempt: 2, tokens: 1 })]);
  });

  // go (all tests): DIFFERS (Go-specific). Go's configs spell the policy's fields "MaxAttempts", "InitialBackoff"
  // ... and durations ".01s": Go's JSON decoder matches field names in any case. Here (as in grpc-js) field names are
  // exact, so those are unknown fields and the policy lacks its required ones, and ".01s" is refused (documented in
  // docs/configuration.md): the config is rejected, naming each field.
  it('a config spelled as in the Go tests is rejected, naming the fields', () => {
    const goSpelled = {
      methodConfig: [
        {
          name: [{ service: TEST_SERVICE }],
          retryPolicy: {
            MaxAttempts: 4,
            InitialBackoff: '.01s',
            MaxBackoff: '.01s',
            BackoffMultiplier: 1.0,
            RetryableStatusCodes: ['UNAVAILABLE'],
          },
        },
      ],
    };
    const { errors, warnings } = validateServiceConfig(goSpelled as unknown as ServiceConfigJson);
    expect(errors.map((e) => e.path)).toEqual(
      ['maxAttempts', 'initialBackoff', 'maxBackoff', 'backoffMultiplier', 'retryableStatusCodes'].map(
        (f) => `methodConfig[0].retryPolicy.${f}`,
      ),
    );
    expect(warnings.length).toBeGreaterThanOrEqual(5);
    let thrown: unknown;
    try {
      createRetryInterceptor(goSpelled as unknown as ServiceConfigJson);
    } catch (error) {
      thrown = error;
    }
    expect(isServiceConfigError(thrown)).toBe(true);
    const dotted = validateServiceConfig(retryConfig({ initialBackoff: '.01s' }));
    expect(dotted.errors.map((e) => e.path)).toEqual(['methodConfig[0].retryPolicy.initialBackoff']);
  });
});

describe('grpc-java RetryTest (client streaming)', () => {
  const message = Buffer.from('twenty bytes of data.');
  const method = testServiceDefinition.StreamingInputCall as grpc.MethodDefinition<
    StreamingInputCallRequest,
    StreamingInputCallResponse
  >;
  /** What one message costs in the replay buffer: its serialized size plus 53 (docs/configuration.md). */
  const cost = (m: Buffer) => method.requestSerialize({ payload: { body: m } }).length + 53;

  function clientStreaming(
    client: Client,
    metadata: grpc.Metadata,
  ): {
    call: grpc.ClientWritableStream<StreamingInputCallRequest>;
    done: Promise<{
      error: grpc.ServiceError | null;
      response?: StreamingInputCallResponse | undefined;
      statusEvents: number;
    }>;
  } {
    let statusEvents = 0;
    let call!: grpc.ClientWritableStream<StreamingInputCallRequest>;
    const done = new Promise<{
      error: grpc.ServiceError | null;
      response?: StreamingInputCallResponse | undefined;
      statusEvents: number;
    }>((resolve) => {
      call = client.stub.StreamingInputCall(metadata, { deadline: deadline() }, (error, response) => {
        setTimeout(() => resolve({ error, response, statusEvents }), 15);
      });
    });
    call.on('status', () => {
      statusEvents += 1;
    });
    return { call, done };
  }

  // java RetryTest.retryUntilBufferLimitExceeded: a buffer that holds one message; the retry is in flight when the
  // second message overflows it, so the retry commits and its failure ("second try failed") is the result.
  it('a message that overflows the buffer during a retry commits the retry: its failure is final', async () => {
    const warnings = captureWarnings();
    const client = makeClient(server.address, retryConfig({ initialBackoff: '0.05s', maxBackoff: '0.05s' }), {
      perRpcBufferBytes: cost(message) * 2 - 1,
    });
    const { id, metadata } = caseMetadata('java-buffer');
    const state = server.script(id, [
      gets(message),
      fails(status.UNAVAILABLE, 'first try failed'),
      seesAttempt(1),
      gets(message),
      gets(message),
      fails(status.UNAVAILABLE, 'second try failed'),
    ]);
    const { call, done } = clientStreaming(client, metadata);
    call.write({ payload: { body: message } });
    await until(() => state.attempts[1]?.received.length === 1, 'the retry to get the replayed message');
    expect(events(client, 'call-end')).toEqual([]);
    call.write({ payload: { body: message } });
    const { error, statusEvents } = await done;
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(error?.details).toContain('second try failed');
    expect(statusEvents).toBe(1);
    expect(attemptHeaders(state)).toEqual(numbered(2));
    expect(state.problems).toEqual([]);
    expect(events(client, 'committed')).toEqual([
      expect.objectContaining({ attempt: 2, reason: 'replay-buffer' }),
    ]);
    expect(events(client, 'call-end')).toEqual([
      expect.objectContaining({ attempts: 2, reason: 'replay-buffer' }),
    ]);
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_REPLAY_BUFFER']);
  });

  // java RetryTest.statsRecorded: one retry (no transparent one); the retry gets the replayed message and a new one,
  // then answers with headers, a response and OK. Java's per-call stats are read here from the package's events.
  it('one retry: the replay plus a later message reach the retry, which answers', async () => {
    const client = makeClient(server.address, retryConfig({ initialBackoff: '0.05s', maxBackoff: '0.05s' }));
    const { id, metadata } = caseMetadata('java-stats');
    const later = Buffer.from('a later message');
    const state = server.script(id, [
      gets(message),
      fails(status.UNAVAILABLE, 'first try failed'),
      seesAttempt(1),
      gets(message),
      gets(later),
      sendsHeaders,
      getsHalfClose,
    ]);
    const { call, done } = clientStreaming(client, metadata);
    call.write({ payload: { body: message } });
    await until(() => state.attempts[1]?.received.length === 1, 'the retry to get the replayed message');
    call.write({ payload: { body: later } });
    call.end();
    const { error, response, statusEvents } = await done;
    expect(error).toBeNull();
    expect(response?.aggregatedPayloadSize).toBe(message.length + later.length);
    expect(statusEvents).toBe(1);
    expect(attemptHeaders(state)).toEqual(numbered(2));
    expect(state.problems).toEqual([]);
    expect(events(client, 'attempt-start').map((e) => e.type === 'attempt-start' && e.kind)).toEqual([
      'original',
      'retry',
    ]);
    const end = events(client, 'call-end')[0];
    expect(end).toMatchObject({ code: status.OK, attempts: 2 });
    // The backoff is 50 ms x U[0.8, 1.2]: at least 40 ms waited with no attempt in flight.
    expect(end?.type === 'call-end' && end.retryDelayMs).toBeGreaterThanOrEqual(39);
  });

  // java RetryTest.statsRecorde_callCancelledBeforeCommit: the application cancels while the retry is in flight and
  // uncommitted; the call ends once, CANCELLED, the retry is cancelled on the server, and one retry is counted.
  it('a cancel while the retry is in flight ends the call once, CANCELLED', async () => {
    const client = makeClient(server.address, retryConfig({ initialBackoff: '0.05s', maxBackoff: '0.05s' }));
    const { id, metadata } = caseMetadata('java-cancel');
    const state = server.script(id, [
      gets(message),
      fails(status.UNAVAILABLE, 'first try failed'),
      seesAttempt(1),
      gets(message),
      hangs,
    ]);
    const { call, done } = clientStreaming(client, metadata);
    call.write({ payload: { body: message } });
    await until(() => state.attempts[1]?.received.length === 1, 'the retry to get the replayed message');
    call.cancel();
    const { error, statusEvents } = await done;
    expect(error?.code).toBe(status.CANCELLED);
    expect(statusEvents).toBe(1);
    await until(() => state.attempts[1]?.end === 'cancelled', 'the server to see the retry cancelled');
    expect(attemptHeaders(state)).toEqual(numbered(2));
    expect(state.problems).toEqual([]);
    expect(events(client, 'call-end')).toEqual([
      expect.objectContaining({ code: status.CANCELLED, attempts: 2 }),
    ]);
  });
});

describe('grpc-go TestRetryTransparentWhenCommitted (a server of one stream at a time)', () => {
  // go TestRetryTransparentWhenCommitted: the retry waits for a stream slot that another call holds; cancelling the
  // call then ends it once, CANCELLED, and using the stream afterwards (write, half-close) throws nothing.
  it('a cancel while the retry waits for a stream slot ends the call once, CANCELLED', async (ctx) => {
    const narrow = await startRetryCaseServer({ 'grpc.max_concurrent_streams': 1 });
    try {
      const client = makeClient(
        narrow.address,
        retryConfig({
          maxAttempts: 2,
          initialBackoff: '1s',
          maxBackoff: '1s',
          retryableStatusCodes: ['ALREADY_EXISTS'],
        }),
      );
      // The first attempt holds the one slot until the client writes, and the blocking call is started meanwhile:
      // it waits in the client's HTTP/2 session ahead of the retry, which can only start after the failure the
      // write brings, and a backoff of 0.8-1.2 s. Started only once the server had seen the failure, the blocker
      // twice never got the slot in CI (at 0.1 s and 1 s backoffs; what took it was not recorded, hence the
      // diagnostics below); queued before the failure exists, it is ahead of the retry by construction.
      const first = caseMetadata('slot-first');
      const firstState = narrow.script(first.id, [gets(1), fails(status.ALREADY_EXISTS), hangs]);
      const blocker = caseMetadata('slot-blocker');
      const blockerState = narrow.script(blocker.id, [hangs]);

      const call = client.stub.FullDuplexCall(first.metadata, { deadline: deadline() });
      const seen = new Seen(call);
      await until(() => firstState.attempts.length === 1, 'the first attempt to hold the slot');
      const other = client.stub.FullDuplexCall(blocker.metadata, { deadline: deadline() });
      const otherSeen = new Seen(other);
      await new Promise((resolve) => setTimeout(resolve, 200));
      call.write({ payload: { body: body(1) } });
      await until(() => firstState.attempts[0]?.end !== undefined, 'the first attempt to fail');
      await until(
        () => blockerState.attempts.length === 1 || firstState.attempts.length === 2,
        'the blocking call or the retry to take the slot',
      );
      if (blockerState.attempts.length === 0) {
        // Node's HTTP/2 session gave the freed slot to the retry, started a second or more after the blocking call
        // (seen in CI, mostly on Node 24): the stream the retry waits behind cannot be set up on this run. The
        // case is reported as skipped, not passed; the retry in flight and cancelled is the java case above.
        other.cancel();
        call.cancel();
        await until(() => seen.settled && otherSeen.settled, 'both calls to end');
        expect(seen.statusEvents).toBe(1);
        ctx.skip('the HTTP/2 session gave the slot to the retry, not to the call queued before it');
      }
      // The backoff is over: the retry has been started and waits for the slot.
      await until(
        () => client.events.some((e) => e.type === 'attempt-start' && e.attempt === 2),
        'the retry to start',
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      call.cancel();
      await until(() => seen.settled, 'the cancelled call to end');
      expect(seen.status?.code).toBe(status.CANCELLED);
      expect(seen.statusEvents).toBe(1);
      expect(() => {
        call.write({});
        call.end();
      }).not.toThrow();
      // The retry never got the slot: the server ran one attempt of the call.
      expect(attemptHeaders(firstState)).toEqual(numbered(1));
      other.cancel();
      await until(() => otherSeen.settled, 'the blocking call to end');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(seen.statusEvents).toBe(1);
    } finally {
      await narrow.stop();
    }
  });
});
