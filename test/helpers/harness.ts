import * as grpc from '@grpc/grpc-js';
import { withRetryOptions } from '../../src/retry/call-options.js';
import type { RetryEvent } from '../../src/retry/events.js';
import { createRetryInterceptor, type RetryInterceptorOptions } from '../../src/retry/retry-interceptor.js';
import { CALL_ID_METADATA_KEY, FlakyServer, loadFlakyTestService } from '../../src/testing/index.js';
import { oneEntryConfig } from './service-configs.js';

export interface TestRequest {
  payload?: string;
  blob?: Buffer;
}
export interface TestResponse {
  payload: string;
  attempt: number;
  messagesReceived: number;
  index: number;
}

/** Result of one call, whatever its type: every field the application could observe. */
export interface CallOutcome {
  error: grpc.ServiceError | undefined;
  code: number;
  responses: TestResponse[];
  headers: grpc.Metadata | undefined;
  trailers: grpc.Metadata | undefined;
  statusEvents: number;
}

type Method = (...args: unknown[]) => unknown;
export interface FlakyClient extends grpc.Client {
  Unary: Method;
  ServerStream: Method;
  ClientStream: Method;
  Bidi: Method;
}

export interface Harness {
  server: FlakyServer;
  client: FlakyClient;
  events: RetryEvent[];
  close(): Promise<void>;
}

const Service = loadFlakyTestService();

/**
 * A client of the flaky test service on `address`, with grpc-js's own retries off (the one place tests build such
 * clients).
 */
export function testClient(
  address: string,
  interceptors: grpc.Interceptor[] = [],
  channelOptions: grpc.ChannelOptions = {},
): FlakyClient {
  return new Service(address, grpc.credentials.createInsecure(), {
    interceptors,
    'grpc.enable_retries': 0,
    ...channelOptions,
  }) as unknown as FlakyClient;
}

export async function startHarness(
  config: object | string,
  options: RetryInterceptorOptions = {},
  server?: FlakyServer,
): Promise<Harness> {
  const flaky = server ?? (await FlakyServer.start());
  const events: RetryEvent[] = [];
  const onEvent = options.onEvent ?? ((e: RetryEvent) => events.push(e));
  const interceptor = createRetryInterceptor(config, { ...options, onEvent });
  const client = testClient(flaky.address, [interceptor]);
  return {
    server: flaky,
    client,
    events,
    async close() {
      client.close();
      if (!server) await flaky.stop();
    },
  };
}

export function callMetadata(callId: string, extra: Record<string, string> = {}): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set(CALL_ID_METADATA_KEY, callId);
  for (const [k, v] of Object.entries(extra)) md.set(k, v);
  return md;
}

function newOutcome(): CallOutcome {
  return {
    error: undefined,
    code: -1,
    responses: [],
    headers: undefined,
    trailers: undefined,
    statusEvents: 0,
  };
}

function observe(
  call: grpc.ClientUnaryCall | grpc.ClientReadableStream<unknown> | grpc.ClientWritableStream<unknown>,
  outcome: CallOutcome,
): void {
  call.on('metadata', (md: grpc.Metadata) => {
    outcome.headers = md;
  });
  call.on('status', (status: grpc.StatusObject) => {
    outcome.statusEvents += 1;
    outcome.trailers = status.metadata;
    outcome.code = status.code;
  });
}

export interface CallOpts {
  deadlineMs?: number | undefined;
  /** Extra grpc-js call options (e.g. from withRetryOptions). */
  callOptions?: grpc.CallOptions;
  metadata?: grpc.Metadata;
  onCall?: (
    call:
      | grpc.ClientUnaryCall
      | grpc.ClientReadableStream<unknown>
      | grpc.ClientDuplexStream<unknown, unknown>
      | grpc.ClientWritableStream<unknown>,
  ) => void;
}

function callOptions(opts: CallOpts): grpc.CallOptions {
  const base = opts.callOptions ?? {};
  return opts.deadlineMs === undefined ? base : { ...base, deadline: Date.now() + opts.deadlineMs };
}

/** Call options that cancel the call as soon as its first retry is scheduled (so: during the backoff). */
export function cancelDuringBackoff(): Pick<CallOpts, 'onCall' | 'callOptions'> {
  let call: { cancel(): void } | undefined;
  return {
    onCall: (c) => {
      call = c;
    },
    callOptions: withRetryOptions({
      onEvent: (e) => {
        if (e.type === 'retry-scheduled') setImmediate(() => call?.cancel());
      },
    }),
  };
}

/** Wait a tick so the final 'status' event (which grpc-js may emit after the callback) is counted. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** The callback of a call with a single response (unary, client streaming): records it, then resolves. */
function unaryCallback(outcome: CallOutcome, resolve: (outcome: CallOutcome) => void) {
  return (error: grpc.ServiceError | null, response: TestResponse | undefined): void => {
    if (error) outcome.error = error;
    else if (response) outcome.responses.push(response);
    void settle().then(() => resolve(outcome));
  };
}

/** A call with a response stream: records every response and the error, and resolves after the status. */
function observeStream(
  call: grpc.ClientReadableStream<TestResponse> | grpc.ClientDuplexStream<TestRequest, TestResponse>,
  outcome: CallOutcome,
  resolve: (outcome: CallOutcome) => void,
): void {
  observe(call, outcome);
  call.on('data', (r: TestResponse) => outcome.responses.push(r));
  call.on('error', (e: grpc.ServiceError) => {
    outcome.error = e;
  });
  call.on('status', () => void settle().then(() => resolve(outcome)));
}

export function unary(
  client: FlakyClient,
  callId: string,
  request: TestRequest = { payload: 'hello' },
  opts: CallOpts = {},
): Promise<CallOutcome> {
  const outcome = newOutcome();
  return new Promise((resolve) => {
    const call = client.Unary(
      request,
      opts.metadata ?? callMetadata(callId),
      callOptions(opts),
      unaryCallback(outcome, resolve),
    ) as grpc.ClientUnaryCall;
    observe(call, outcome);
    opts.onCall?.(call);
  });
}

export function serverStream(
  client: FlakyClient,
  callId: string,
  request: TestRequest = { payload: 'hello' },
  opts: CallOpts = {},
): Promise<CallOutcome> {
  const outcome = newOutcome();
  return new Promise((resolve) => {
    const call = client.ServerStream(
      request,
      opts.metadata ?? callMetadata(callId),
      callOptions(opts),
    ) as grpc.ClientReadableStream<TestResponse>;
    observeStream(call, outcome, resolve);
    opts.onCall?.(call);
  });
}

/** Writes each request; `between` runs after each write (e.g. to wait for the server). */
export function clientStream(
  client: FlakyClient,
  callId: string,
  requests: TestRequest[],
  opts: CallOpts & { between?: (index: number) => Promise<void> } = {},
): Promise<CallOutcome> {
  const outcome = newOutcome();
  return new Promise((resolve) => {
    const call = client.ClientStream(
      opts.metadata ?? callMetadata(callId),
      callOptions(opts),
      unaryCallback(outcome, resolve),
    ) as grpc.ClientWritableStream<TestRequest>;
    observe(call, outcome);
    opts.onCall?.(call);
    void (async () => {
      for (const [i, request] of requests.entries()) {
        call.write(request);
        if (opts.between) await opts.between(i);
      }
      call.end();
    })();
  });
}

export function bidi(
  client: FlakyClient,
  callId: string,
  requests: TestRequest[],
  opts: CallOpts & { between?: (index: number) => Promise<void>; noEnd?: boolean } = {},
): Promise<CallOutcome> {
  const outcome = newOutcome();
  return new Promise((resolve) => {
    const call = client.Bidi(
      opts.metadata ?? callMetadata(callId),
      callOptions(opts),
    ) as grpc.ClientDuplexStream<TestRequest, TestResponse>;
    observeStream(call, outcome, resolve);
    opts.onCall?.(call);
    void (async () => {
      for (const [i, request] of requests.entries()) {
        call.write(request);
        if (opts.between) await opts.between(i);
      }
      if (!opts.noEnd) call.end();
    })();
  });
}

export const FLAKY = 'grpc_retry_hedging.testing.v1.FlakyTest';

/** A service config giving the whole FlakyTest service one retry policy; `extra` goes at the top level. */
export function retryConfig(
  policy: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): object {
  const defaults = { maxAttempts: 5, initialBackoff: '0.01s', maxBackoff: '0.05s', backoffMultiplier: 2 };
  return oneEntryConfig(
    FLAKY,
    { retryPolicy: { ...defaults, retryableStatusCodes: ['UNAVAILABLE'], ...policy } },
    {},
    extra,
  );
}

/** A service config giving the whole FlakyTest service one hedging policy; `extra` goes at the top level. */
export function hedgingConfig(
  policy: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): object {
  const defaults = { maxAttempts: 3, hedgingDelay: '0.1s', nonFatalStatusCodes: ['UNAVAILABLE'] };
  return oneEntryConfig(FLAKY, { hedgingPolicy: { ...defaults, ...policy } }, {}, extra);
}

export function eventsOf<T extends RetryEvent['type']>(
  events: RetryEvent[],
  type: T,
): Extract<RetryEvent, { type: T }>[] {
  return events.filter((e): e is Extract<RetryEvent, { type: T }> => e.type === type);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
