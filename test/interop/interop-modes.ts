/**
 * The ways the interop cases are run: a bare client, and the retry interceptor under each kind of policy and
 * with the package's other interceptors around it. Every policy names both interop services, and uses only
 * UNAVAILABLE as its retryable (or non-fatal) code: no case produces UNAVAILABLE, so the statuses the cases
 * expect (UNKNOWN, CANCELLED, DEADLINE_EXCEEDED, UNIMPLEMENTED) pass through unretried, as A6 says they must.
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
import { createAdaptiveThrottle } from '../../src/throttle/adaptive-throttle.js';
import { RetryBudget } from '../../src/throttle/retry-budget.js';
import type { CaseContext } from './interop-cases.js';
import type { HandledCall } from './interop-server.js';
import {
  TEST_SERVICE,
  TestServiceClientConstructor,
  UNIMPLEMENTED_SERVICE,
  UnimplementedServiceClientConstructor,
} from './interop-service.js';

/** One mode, started against a server. */
export interface ModeRun {
  readonly ctx: CaseContext;
  /** Before each case. */
  beforeCase(): void;
  /**
   * After each case, given the status codes of the calls the case made and the calls the server's handlers ran
   * meanwhile: checks that the mode's machinery took part as it should.
   */
  afterCase(codes: number[], handled: readonly HandledCall[]): void;
  /** After every case: checks over the whole run. */
  afterAll(): Promise<void>;
  close(): void;
}

export interface InteropMode {
  readonly name: string;
  start(address: string): ModeRun;
}

const RETRY_POLICY = {
  maxAttempts: 4,
  initialBackoff: '0.01s',
  maxBackoff: '0.05s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};

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

function clients(address: string, interceptors: grpc.Interceptor[]): CaseContext {
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

function closeClients(ctx: CaseContext): void {
  ctx.client.close();
  ctx.unimplemented.close();
}

/** Attempts each call may make: an exact count, or a range. */
type AttemptCount = number | { min: number; max: number };

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
function retryMode(
  name: string,
  config: object,
  attempts: AttemptCount,
  setup: () => {
    options?: RetryInterceptorOptions;
    before?: grpc.Interceptor[];
    after?: grpc.Interceptor[];
    beforeCase?: () => void;
    afterCase?: (codes: number[], handled: readonly HandledCall[]) => void;
    afterAll?: (allEvents: readonly RetryEvent[]) => void | Promise<void>;
  } = () => ({}),
): InteropMode {
  return {
    name,
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
        ctx,
        beforeCase: () => {
          events.length = 0;
          parts.beforeCase?.();
        },
        afterCase(codes, handled) {
          expectEngineRan(events, codes, attempts);
          parts.afterCase?.(codes, handled);
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
 * Request ids go before the retry interceptor (one id per call); the tracing listens to its events and puts a
 * traceparent on each attempt. After each case: every attempt the server saw carries one request id and one
 * traceparent, and the attempts of one call (one request id) share its trace but each has its own span; after
 * the run, every trace the server saw was recorded.
 */
function stackedMode(
  name: string,
  policy: { retryPolicy: object } | { hedgingPolicy: object },
  attempts: AttemptCount,
): InteropMode {
  let exporter: InMemorySpanExporter;
  let provider: BasicTracerProvider;
  const traceIds = new Set<string>();
  // Ids name their case, so that an attempt the server sees only after its case ended is not counted in the next.
  let caseNumber = 0;
  let callNumber = 0;
  return retryMode(name, serviceConfig(policy), attempts, () => {
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
      afterCase(codes, handled) {
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
  });
}

const UNARY_CALL = `/${TEST_SERVICE}/UnaryCall`;

export const INTEROP_MODES: readonly InteropMode[] = [
  {
    name: 'bare (no interceptor)',
    start(address) {
      const ctx = clients(address, []);
      return {
        ctx,
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
        ctx,
        beforeCase: () => {},
        // The interceptor passed every call straight through: the engine never ran.
        afterCase: () => expect(events).toEqual([]),
        afterAll: async () => {},
        close: () => closeClients(ctx),
      };
    },
  },
  retryMode('retry', serviceConfig({ retryPolicy: RETRY_POLICY }), 1),
  retryMode(
    'retry with retryThrottling',
    serviceConfig({ retryPolicy: RETRY_POLICY }, { retryThrottling: { maxTokens: 10, tokenRatio: 0.1 } }),
    1,
  ),
  // The hedge timer never fires: every call is its original attempt, and each ends with its timer cleared.
  retryMode(
    'hedging, long delay',
    serviceConfig({
      hedgingPolicy: { maxAttempts: 3, hedgingDelay: '30s', nonFatalStatusCodes: ['UNAVAILABLE'] },
    }),
    1,
  ),
  // Three attempts go at once; the first to answer wins and the two others are cancelled.
  retryMode(
    'hedging, delay 0, three live attempts',
    serviceConfig({
      hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0s', nonFatalStatusCodes: ['UNAVAILABLE'] },
    }),
    3,
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
    );
  })(),
  // The budget is the retry gate; the adaptive throttle sees every attempt (it sits after the retry interceptor).
  (() => {
    let throttle: ReturnType<typeof createAdaptiveThrottle>;
    let before = 0;
    return retryMode(
      'RetryBudget + adaptive throttle',
      serviceConfig({ retryPolicy: RETRY_POLICY }),
      1,
      () => {
        throttle = createAdaptiveThrottle();
        before = 0;
        return {
          options: { gate: new RetryBudget({ ratio: 0.2 }) },
          after: [throttle],
          afterCase(codes) {
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
  stackedMode('request-id + retry + tracing', { retryPolicy: RETRY_POLICY }, 1),
  stackedMode('request-id + hedging (3 live attempts) + tracing', { hedgingPolicy: LIVE_HEDGING_POLICY }, 3),
];
