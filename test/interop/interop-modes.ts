/**
 * The ways the interop cases are run: a bare client, and the retry interceptor under each kind of policy and
 * with the package's other interceptors around it. Every policy names both interop services, and uses only
 * UNAVAILABLE as its retryable (or non-fatal) code, so the statuses the cases expect (UNKNOWN, CANCELLED,
 * DEADLINE_EXCEEDED, UNIMPLEMENTED) pass through unretried, as A6 says they must.
 *
 * Some modes send a header that makes the server misbehave on the first attempt of every call (interop-service.ts):
 * it fails with UNAVAILABLE once the request is in (so each call is retried, and what was written is replayed), or
 * keeps silent far longer than the hedging delay (so a later hedge, replaying what was written, wins). The cases
 * must pass unchanged all the same, answered by the attempt the mode expects.
 */
import * as grpc from '@grpc/grpc-js';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { expect } from 'vitest';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import { createRetryTracing } from '../../src/otel/index.js';
import {
  createRequestIdInterceptor,
  DEFAULT_REQUEST_ID_HEADER,
} from '../../src/request-id/request-id-interceptor.js';
import type { RetryEvent } from '../../src/retry/events.js';
import type { RetryInterceptorOptions } from '../../src/retry/interceptor-options.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { createAdaptiveThrottleInterceptor } from '../../src/throttle/adaptive-throttle.js';
import { RetryBudget } from '../../src/throttle/retry-budget.js';
import type { AttemptRange, CaseContext } from './interop-cases.js';
import type { HandledCall } from './interop-server.js';
import {
  FIRST_ATTEMPT_KEY,
  type FirstAttemptRule,
  TEST_SERVICE,
  TestServiceClientConstructor,
  UNIMPLEMENTED_SERVICE,
  UnimplementedServiceClientConstructor,
} from './interop-service.js';

/** The clients of a mode. */
export type Clients = Pick<CaseContext, 'client' | 'unimplemented'>;

/** One mode, started against a server. */
export interface ModeRun {
  readonly clients: Clients;
  /** Headers every call carries: the first-attempt rule the server applies, if any. */
  readonly callHeaders: Readonly<Record<string, string>>;
  /** The attempts that may answer a call (0-based). */
  readonly answeringAttempts: AttemptRange;
  /** Before each case. */
  beforeCase(): void;
  /**
   * After each case, given its name, the status codes of the calls it made and every attempt of them the server's
   * handlers ran (each ended by now): checks that the mode's machinery took part as it should.
   */
  afterCase(caseName: string, codes: number[], handled: readonly HandledCall[]): void;
  /** After every case: checks over the whole run. */
  afterAll(): Promise<void>;
  close(): void;
}

export interface InteropMode {
  readonly name: string;
  /** rpc_soak runs in this mode too. */
  readonly soak?: boolean;
  start(address: string): ModeRun;
}

const RETRY_POLICY = {
  maxAttempts: 4,
  initialBackoff: '0.01s',
  maxBackoff: '0.05s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};

/** A hedge 20 ms in and another 40 ms in, when nothing has answered by then. */
const LATE_HEDGING_POLICY = { maxAttempts: 3, hedgingDelay: '0.02s', nonFatalStatusCodes: ['UNAVAILABLE'] };

/** Three attempts at once (hedgingDelay 0). */
const LIVE_HEDGING_POLICY = { maxAttempts: 3, hedgingDelay: '0s', nonFatalStatusCodes: ['UNAVAILABLE'] };

function serviceConfig(
  policy: { retryPolicy: object } | { hedgingPolicy: object },
  root: object = {},
): object {
  return {
    methodConfig: [{ name: [{ service: TEST_SERVICE }, { service: UNIMPLEMENTED_SERVICE }], ...policy }],
    ...root,
  };
}

function clients(address: string, interceptors: grpc.Interceptor[]): Clients {
  // grpc-js's own retries off: only the interceptor under test retries.
  const options: grpc.ClientOptions = { interceptors, 'grpc.enable_retries': 0 };
  return {
    client: new TestServiceClientConstructor(address, grpc.credentials.createInsecure(), options),
    unimplemented: new UnimplementedServiceClientConstructor(
      address,
      grpc.credentials.createInsecure(),
      options,
    ),
  };
}

function closeClients(ctx: Clients): void {
  ctx.client.close();
  ctx.unimplemented.close();
}

/** Attempts each call may make: an exact count, or a range. */
type AttemptCount = number | { min: number; max: number };

/** Attempts each call of a case may make: one count for every case, or one by case name. */
type AttemptsByCase = AttemptCount | ((caseName: string) => AttemptCount);

/** Counts by case name, `otherwise` for the cases not named. */
function byCase(
  otherwise: AttemptCount,
  named: Record<string, AttemptCount>,
): (name: string) => AttemptCount {
  return (name) => named[name] ?? otherwise;
}

/** Only the first attempt answers (no retry or hedge happens). */
const FIRST_ONLY: AttemptRange = { min: 0, max: 0 };

/**
 * With the first attempt failing at once: two attempts each, but for a call cancelled before its first attempt
 * ended, one cut short by its 1 ms deadline before or after the first attempt failed, and the UNIMPLEMENTED calls
 * (no handler runs them, so no rule applies).
 */
/**
 * Three live attempts with a hedging delay of 0: three each, but for the call cut short by its 1 ms deadline, whose
 * hedges due at once go only before that deadline (on a loaded machine the deadline may pass first).
 */
const THREE_LIVE_ATTEMPTS = byCase(3, { timeout_on_sleeping_server: { min: 1, max: 3 } });

const FAIL_FIRST_ATTEMPTS = byCase(2, {
  cancel_after_begin: 1,
  timeout_on_sleeping_server: { min: 1, max: 2 },
  unimplemented_method: 1,
  unimplemented_service: 1,
});

/**
 * The engine ran every call of the case: one `call-start` per call, and one `call-end` each whose code is the one
 * the application saw, after the expected number of attempts.
 */
function expectEngineRan(events: readonly RetryEvent[], codes: number[], attempts: AttemptCount): void {
  const started = events.filter((e) => e.type === 'call-start').map((e) => e.callId);
  expect(started, 'calls the engine started').toHaveLength(codes.length);
  const ends = events
    .filter(
      (e): e is Extract<RetryEvent, { type: 'call-end' }> =>
        e.type === 'call-end' && started.includes(e.callId),
    )
    .sort((a, b) => a.callId - b.callId);
  expect(
    ends.map((e) => e.code),
    'call-end codes',
  ).toEqual(codes);
  for (const end of ends) {
    if (typeof attempts === 'number') {
      expect(end.attempts, `attempts of ${end.method}`).toBe(attempts);
    } else {
      expect(end.attempts, `attempts of ${end.method}`).toBeGreaterThanOrEqual(attempts.min);
      expect(end.attempts, `attempts of ${end.method}`).toBeLessThanOrEqual(attempts.max);
    }
  }
}

/** A mode made of the retry interceptor (with `config` and `options`) and, optionally, interceptors around it. */
interface RetryModeParts {
  options?: RetryInterceptorOptions;
  before?: grpc.Interceptor[];
  after?: grpc.Interceptor[];
  beforeCase?: () => void;
  afterCase?: (
    caseName: string,
    codes: number[],
    handled: readonly HandledCall[],
    events: readonly RetryEvent[],
  ) => void;
  afterAll?: (allEvents: readonly RetryEvent[]) => void | Promise<void>;
}

function headersOf(rule: FirstAttemptRule | undefined): Record<string, string> {
  return rule ? { [FIRST_ATTEMPT_KEY]: rule } : {};
}

interface RetryModeSettings {
  /** What the server does with first attempts. */
  firstAttempt?: FirstAttemptRule;
  /** Default: only the first attempt (0). */
  answeringAttempts?: AttemptRange;
  soak?: boolean;
}

function retryMode(
  name: string,
  config: object,
  attempts: AttemptsByCase,
  setup: () => RetryModeParts = () => ({}),
  settings: RetryModeSettings = {},
): InteropMode {
  return {
    name,
    soak: settings.soak ?? false,
    start(address) {
      const parts = setup();
      const events: RetryEvent[] = [];
      const allEvents: RetryEvent[] = [];
      const collect = (event: RetryEvent) => {
        events.push(event);
        allEvents.push(event);
      };
      const given = parts.options?.onEvent;
      const onEvent =
        given === undefined ? [collect] : [...(Array.isArray(given) ? given : [given]), collect];
      const retry = createRetryInterceptor(config, { ...parts.options, onEvent });
      const ctx = clients(address, [...(parts.before ?? []), retry, ...(parts.after ?? [])]);
      return {
        clients: ctx,
        callHeaders: headersOf(settings.firstAttempt),
        answeringAttempts: settings.answeringAttempts ?? FIRST_ONLY,
        beforeCase: () => {
          events.length = 0;
          parts.beforeCase?.();
        },
        afterCase(caseName, codes, handled) {
          expectEngineRan(events, codes, typeof attempts === 'function' ? attempts(caseName) : attempts);
          if (settings.firstAttempt) {
            expectFirstAttemptsEnded(settings.firstAttempt, handled);
          }
          parts.afterCase?.(caseName, codes, handled, events);
        },
        afterAll: async () => {
          await parts.afterAll?.(allEvents);
        },
        close: () => closeClients(ctx),
      };
    },
  };
}

/**
 * The server's side of a first-attempt rule: `unavailable` first attempts ended with the UNAVAILABLE the server
 * sent (or, in the cancel and timeout cases, cancelled before their request was in); `slow` first attempts never
 * answered: each was cancelled (a hedge won and the engine cancelled it, or the application cancelled the call).
 */
function expectFirstAttemptsEnded(rule: FirstAttemptRule, handled: readonly HandledCall[]): void {
  const firsts = handled.filter((h) => h.rule !== undefined);
  expect(
    firsts.filter((h) => h.rule !== rule || h.attempt !== 0),
    'attempts the first-attempt rule applied to',
  ).toEqual([]);
  const wrong = firsts.filter((h) =>
    rule === 'slow'
      ? h.end?.kind !== 'cancelled'
      : h.end?.kind !== 'cancelled' && !(h.end?.kind === 'status' && h.end.code === grpc.status.UNAVAILABLE),
  );
  expect(
    wrong.map((h) => `${h.method} ${h.callTag}: ${JSON.stringify(h.end)}`),
    `first attempts (${rule}) that ended otherwise`,
  ).toEqual([]);
}

/** Calls of a case that end with a status of the server's own making. */
const SERVER_ANSWERED = new Set([
  'empty_unary',
  'large_unary',
  'client_streaming',
  'server_streaming',
  'ping_pong',
  'empty_stream',
  'custom_metadata',
  'status_code_and_message',
  'special_status_message',
  'rpc_soak',
]);

/**
 * With the first attempt slow, every call the server answered was answered by a hedge: the engine sent one, and
 * committed to it when it answered OK (never to the slow first attempt), cancelling the other attempts then; every
 * first attempt the server saw was cancelled
 * ({@link expectFirstAttemptsEnded}). For cancel_after_first_response, the first response came from a hedge.
 */
function expectHedgesWon(caseName: string, codes: number[], events: readonly RetryEvent[]): void {
  if (!SERVER_ANSWERED.has(caseName) && caseName !== 'cancel_after_first_response') {
    return;
  }
  const ended = events.filter((e) => e.type === 'call-end');
  expect(ended, 'calls').toHaveLength(codes.length);
  for (const end of ended) {
    const own = events.filter((e) => e.callId === end.callId);
    expect(
      own.filter((e) => e.type === 'hedge-sent').length,
      `hedges sent for ${end.method}`,
    ).toBeGreaterThanOrEqual(1);
    const committed = own.filter(
      (e): e is Extract<RetryEvent, { type: 'committed' }> => e.type === 'committed',
    );
    // A call that ends with a fatal status from a hedge ends without a commit.
    expect(committed.length, `commits of ${end.method}`).toBeLessThanOrEqual(1);
    if (end.code === grpc.status.OK) {
      expect(committed, `commits of ${end.method}`).toHaveLength(1);
    }
    for (const commit of committed) {
      expect(commit.attempt, `attempt ${end.method} committed to`).toBeGreaterThanOrEqual(2);
      // The losers, the slow first attempt among them, were cancelled at the commit, not left to the call's end.
      const losers = own.filter(
        (e): e is Extract<RetryEvent, { type: 'attempt-end' }> =>
          e.type === 'attempt-end' && e.attempt !== commit.attempt,
      );
      // (A commit on the winner's status, Trailers-Only, ends the call at once: its losers end with it.)
      const reasons =
        commit.reason === 'status' ? ['other-attempt-committed', 'call-ended'] : ['other-attempt-committed'];
      expect(losers.map((e) => e.attempt)).toContain(1);
      expect(
        losers
          .filter((e) => !reasons.includes(e.cancelReason ?? 'none'))
          .map((e) => `${e.attempt}: ${e.cancelReason}`),
        `losing attempts of ${end.method} ended otherwise than ${reasons.join(' or ')}`,
      ).toEqual([]);
    }
  }
}

/**
 * Request ids go before the retry interceptor (one id per call); the tracing listens to its events and puts a
 * traceparent on each attempt. After each case: every attempt the server saw carries one request id and one
 * traceparent, and the attempts of one call (one request id) share its trace but each has its own span; after
 * the run, every trace the server saw was recorded.
 */
function stackedMode(
  name: string,
  policy: { retryPolicy: object } | { hedgingPolicy: object },
  attempts: AttemptsByCase,
  settings: RetryModeSettings = {},
): InteropMode {
  let exporter: InMemorySpanExporter;
  let provider: BasicTracerProvider;
  const traceIds = new Set<string>();
  // Ids name their case, so that an attempt the server sees only after its case ended is not counted in the next.
  let caseNumber = 0;
  let callNumber = 0;
  return retryMode(
    name,
    serviceConfig(policy),
    attempts,
    () => {
      exporter = new InMemorySpanExporter();
      provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
      const tracing = createRetryTracing({
        tracerProvider: provider,
        propagator: new W3CTraceContextPropagator(),
      });
      return {
        options: { onEvent: tracing.onEvent },
        before: [createRequestIdInterceptor({ generate: () => `case-${caseNumber}-call-${++callNumber}` })],
        beforeCase: () => {
          caseNumber += 1;
        },
        afterCase(_caseName, codes, handled) {
          const byRequestId = new Map<string, Array<{ traceId: string; spanId: string }>>();
          for (const call of handled) {
            const requestId = call.metadata.get(DEFAULT_REQUEST_ID_HEADER);
            expect(requestId, `request id of ${call.method}`).toHaveLength(1);
            const traceparent = call.metadata.get('traceparent');
            expect(traceparent, `traceparent of ${call.method}`).toHaveLength(1);
            const [, traceId = '', spanId = ''] = String(traceparent[0]).split('-');
            traceIds.add(traceId);
            const id = String(requestId[0]);
            if (id.startsWith(`case-${caseNumber}-`)) {
              byRequestId.set(id, [...(byRequestId.get(id) ?? []), { traceId, spanId }]);
            }
          }
          expect(byRequestId.size, 'request ids (one per call)').toBeLessThanOrEqual(codes.length);
          for (const group of byRequestId.values()) {
            expect(new Set(group.map((a) => a.traceId)).size, 'traces of one call').toBe(1);
            expect(new Set(group.map((a) => a.spanId)).size, 'attempt spans of one call').toBe(group.length);
          }
        },
        async afterAll() {
          const recorded = new Set(exporter.getFinishedSpans().map((s) => s.spanContext().traceId));
          expect(traceIds.size).toBeGreaterThan(0);
          expect([...traceIds].filter((id) => !recorded.has(id))).toEqual([]);
          await provider.shutdown();
        },
      };
    },
    settings,
  );
}

const UNARY_CALL = `/${TEST_SERVICE}/UnaryCall`;

export const INTEROP_MODES: readonly InteropMode[] = [
  {
    name: 'bare (no interceptor)',
    start(address) {
      const ctx = clients(address, []);
      return {
        clients: ctx,
        callHeaders: {},
        answeringAttempts: FIRST_ONLY,
        beforeCase: () => {},
        afterCase: () => {},
        afterAll: async () => {},
        close: () => closeClients(ctx),
      };
    },
  },
  {
    name: 'interceptor, no policy for the method',
    start(address) {
      const events: RetryEvent[] = [];
      const config = {
        methodConfig: [{ name: [{ service: 'grpc.testing.OtherService' }], retryPolicy: RETRY_POLICY }],
      };
      const ctx = clients(address, [createRetryInterceptor(config, { onEvent: (e) => events.push(e) })]);
      return {
        clients: ctx,
        callHeaders: {},
        answeringAttempts: FIRST_ONLY,
        beforeCase: () => {},
        // The interceptor passed every call straight through: the engine never ran.
        afterCase: () => expect(events).toEqual([]),
        afterAll: async () => {},
        close: () => closeClients(ctx),
      };
    },
  },
  retryMode('retry', serviceConfig({ retryPolicy: RETRY_POLICY }), 1),
  // Every first attempt fails with UNAVAILABLE once its request is in: each call is retried once, the retry
  // replaying what was written to the first attempt, and answers.
  retryMode(
    'retry, first attempt UNAVAILABLE',
    serviceConfig({ retryPolicy: RETRY_POLICY }),
    FAIL_FIRST_ATTEMPTS,
    () => ({}),
    {
      firstAttempt: 'unavailable',
      answeringAttempts: { min: 1, max: 1 },
    },
  ),
  retryMode(
    'retry with retryThrottling',
    serviceConfig({ retryPolicy: RETRY_POLICY }, { retryThrottling: { maxTokens: 10, tokenRatio: 0.1 } }),
    1,
  ),
  // A6 throttling with every call failing once: each failure takes a token and each success gives one back
  // (tokenRatio 1). A call that ends without a success keeps the token its first failure took: a cancel, the 1 ms
  // deadline once the first attempt has failed, a retry answered UNKNOWN; the cases hold at most 6 such calls, so
  // 20 tokens stay above half (10) and every retry goes (with 10 tokens, the 6th such call was throttled). A throttle
  // that lost count (a success not credited: 8 successes; a failure taken twice: 14 failures) would fall to 10
  // within the cases and stop a retry.
  retryMode(
    'retry with retryThrottling, first attempt UNAVAILABLE',
    serviceConfig({ retryPolicy: RETRY_POLICY }, { retryThrottling: { maxTokens: 20, tokenRatio: 1 } }),
    FAIL_FIRST_ATTEMPTS,
    () => ({
      afterCase: (_caseName, _codes, _handled, events) =>
        expect(events.filter((e) => e.type === 'throttled')).toEqual([]),
    }),
    { firstAttempt: 'unavailable', answeringAttempts: { min: 1, max: 1 } },
  ),
  // The hedge timer never fires: every call is its original attempt, and each ends with its timer cleared.
  retryMode(
    'hedging, long delay',
    serviceConfig({
      hedgingPolicy: { maxAttempts: 3, hedgingDelay: '30s', nonFatalStatusCodes: ['UNAVAILABLE'] },
    }),
    1,
    () => ({}),
    { soak: true },
  ),
  // The first attempt keeps silent (SLOW_FIRST_ATTEMPT_MS, far beyond the 20 ms hedging delay): a hedge sent
  // 20 ms in, replaying what the application had written, answers and wins; the first attempt is cancelled. A
  // second hedge goes at 40 ms when the first has not answered by then.
  retryMode(
    'hedging, 20 ms delay, slow first attempt (late hedges win)',
    serviceConfig({ hedgingPolicy: LATE_HEDGING_POLICY }),
    byCase(
      { min: 2, max: 3 },
      {
        cancel_after_begin: 1,
        timeout_on_sleeping_server: { min: 1, max: 2 },
        unimplemented_method: { min: 1, max: 2 },
        unimplemented_service: { min: 1, max: 2 },
      },
    ),
    () => ({ afterCase: (caseName, codes, _handled, events) => expectHedgesWon(caseName, codes, events) }),
    { firstAttempt: 'slow', answeringAttempts: { min: 1, max: 2 }, soak: true },
  ),
  // Three attempts go at once; the first to answer wins and the two others are cancelled.
  retryMode(
    'hedging, delay 0, three live attempts',
    serviceConfig({
      hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0s', nonFatalStatusCodes: ['UNAVAILABLE'] },
    }),
    THREE_LIVE_ATTEMPTS,
    () => ({}),
    { answeringAttempts: { min: 0, max: 2 }, soak: true },
  ),
  // The configured delay (10 s) holds until a method's calls have answered 1 / maxExtraLoad times (2 here); then the
  // tracked one does.
  (() => {
    let adaptive: AdaptiveHedging;
    return retryMode(
      'adaptive hedging',
      serviceConfig({
        hedgingPolicy: { maxAttempts: 2, hedgingDelay: '10s', nonFatalStatusCodes: ['UNAVAILABLE'] },
      }),
      { min: 1, max: 2 },
      () => {
        adaptive = new AdaptiveHedging({ maxExtraLoad: 0.5 });
        return {
          options: { adaptiveHedging: adaptive },
          afterAll: (allEvents) => {
            expect(adaptive.delayOf(UNARY_CALL), 'adaptive delay of UnaryCall').toBeLessThan(10_000);
            const reasons = allEvents.filter((e) => e.type === 'hedge-scheduled').map((e) => e.reason);
            expect(reasons).toContain('adaptive-delay');
          },
        };
      },
      { answeringAttempts: { min: 0, max: 1 }, soak: true },
    );
  })(),
  // The budget is the retry gate; the adaptive throttle sees every attempt (it sits after the retry interceptor).
  (() => {
    let throttle: ReturnType<typeof createAdaptiveThrottleInterceptor>;
    let before = 0;
    return retryMode(
      'RetryBudget + adaptive throttle',
      serviceConfig({ retryPolicy: RETRY_POLICY }),
      1,
      () => {
        throttle = createAdaptiveThrottleInterceptor();
        before = 0;
        return {
          options: { gate: new RetryBudget({ maxExtraLoad: 0.2 }) },
          after: [throttle],
          afterCase(_caseName, codes) {
            const counters = throttle.counters();
            const seen = counters.calls - before;
            before = counters.calls;
            expect(seen, 'attempts the throttle saw').toBe(codes.length);
            expect(counters.rejected).toBe(0);
          },
        };
      },
    );
  })(),
  // Every first attempt fails: each call's two attempts share its request id and trace, each with its own span.
  stackedMode(
    'request-id + retry (first attempt UNAVAILABLE) + tracing',
    { retryPolicy: RETRY_POLICY },
    FAIL_FIRST_ATTEMPTS,
    { firstAttempt: 'unavailable', answeringAttempts: { min: 1, max: 1 } },
  ),
  stackedMode(
    'request-id + hedging (3 live attempts) + tracing',
    { hedgingPolicy: LIVE_HEDGING_POLICY },
    THREE_LIVE_ATTEMPTS,
    {
      answeringAttempts: { min: 0, max: 2 },
    },
  ),
];
