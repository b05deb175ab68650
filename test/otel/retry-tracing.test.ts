import { Metadata, status } from '@grpc/grpc-js';
import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import packageJson from '../../package.json';
import {
  RETRY_SPAN_ATTRIBUTES as A,
  createRetryTracing,
  metadataGetter,
  RETRY_SPAN_EVENTS,
  type RetryTracingOptions,
} from '../../src/otel/index.js';
import type { AttemptKind, RetryEvent } from '../../src/retry/events.js';

const METHOD = '/pkg.v1.Greeter/SayHello';
let nextId = 1_000;

/** Builds the events of one call, as the engine emits them. */
function callEvents(callId = nextId++, method = METHOD) {
  const base = { method, callId };
  return {
    callId,
    start: (policy: 'retry' | 'hedging' = 'retry'): RetryEvent => ({
      ...base,
      type: 'call-start',
      policy,
      maxAttempts: 4,
      deadline: Number.POSITIVE_INFINITY,
      target: 'dns:db.example:443',
    }),
    attempt(attempt: number, kind: AttemptKind, metadata = new Metadata()): RetryEvent {
      return { ...base, type: 'attempt-start', attempt, kind, previousRpcAttempts: attempt - 1, metadata };
    },
    attemptEnd(
      attempt: number,
      kind: AttemptKind,
      code: number,
      cancelReason?: 'other-attempt-committed' | 'call-cancelled',
    ): RetryEvent {
      return {
        ...base,
        type: 'attempt-end',
        attempt,
        kind,
        code,
        details: code === 0 ? '' : `attempt ${attempt} failed`,
        durationMs: 1,
        committed: code === 0 && cancelReason === undefined,
        ...(cancelReason ? { cancelReason } : {}),
      };
    },
    end: (code: number, attempts: number, retryDelayMs = 0): RetryEvent => ({
      ...base,
      type: 'call-end',
      code,
      details: code === 0 ? '' : 'call failed',
      attempts,
      retryDelayMs,
      durationMs: 5,
      target: 'dns:localhost:50051',
    }),
    base,
  };
}

function setup(options: Omit<RetryTracingOptions, 'tracerProvider'> = {}) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracing = createRetryTracing({
    tracerProvider: provider,
    propagator: new W3CTraceContextPropagator(),
    ...options,
  });
  const spans = () => exporter.getFinishedSpans();
  const named = (prefix: string) => spans().filter((s) => s.name.startsWith(prefix));
  return { exporter, provider, tracing, spans, named };
}

/** The span id a W3C traceparent header names. */
function traceparentSpanId(metadata: Metadata): string | undefined {
  const value = metadata.get('traceparent')[0];
  return typeof value === 'string' ? value.split('-')[2] : undefined;
}

function attempt(spans: ReadableSpan[], n: number): ReadableSpan {
  const span = spans.find((s) => s.attributes[A.attemptNumber] === n);
  if (!span) throw new Error(`no span for attempt ${n}`);
  return span;
}

describe('createRetryTracing: a call that retried twice', () => {
  const { tracing, named } = setup();
  const c = callEvents();
  const metadata = [new Metadata(), new Metadata(), new Metadata()];

  beforeAll(() => {
    tracing.onEvent(c.start());
    tracing.onEvent(c.attempt(1, 'original', metadata[0]));
    tracing.onEvent(c.attemptEnd(1, 'original', status.UNAVAILABLE));
    tracing.onEvent({ ...c.base, type: 'retry-scheduled', attempt: 2, delayMs: 97, reason: 'backoff' });
    tracing.onEvent(c.attempt(2, 'retry', metadata[1]));
    tracing.onEvent(c.attemptEnd(2, 'retry', status.UNAVAILABLE));
    tracing.onEvent({ ...c.base, type: 'retry-scheduled', attempt: 3, delayMs: 50, reason: 'pushback' });
    tracing.onEvent(c.attempt(3, 'retry', metadata[2]));
    tracing.onEvent(c.attemptEnd(3, 'retry', status.OK));
    tracing.onEvent({ ...c.base, type: 'committed', attempt: 3, reason: 'status' });
    tracing.onEvent(c.end(status.OK, 3, 147));
  });

  it('makes one call span named as A72 does, with the policy and the outcome', () => {
    const [call, ...others] = named('Sent.');
    expect(others).toEqual([]);
    expect(call?.name).toBe('Sent.pkg.v1.Greeter.SayHello');
    expect(call?.kind).toBe(SpanKind.CLIENT);
    expect(call?.parentSpanContext).toBeUndefined();
    expect(call?.status).toEqual({ code: SpanStatusCode.OK });
    expect(call?.attributes).toMatchObject({
      [A.rpcSystem]: 'grpc',
      [A.rpcService]: 'pkg.v1.Greeter',
      [A.rpcMethod]: 'SayHello',
      [A.serverAddress]: 'db.example',
      [A.serverPort]: 443,
      [A.policy]: 'retry',
      [A.maxAttempts]: 4,
      [A.attempts]: 3,
      [A.retryDelayMs]: 147,
      [A.committedAttempt]: 3,
      [A.statusCode]: 0,
    });
  });

  it('makes one child span per attempt with the A72 attributes, kind and status', () => {
    const call = named('Sent.')[0] as ReadableSpan;
    const attempts = named('Attempt.');
    expect(attempts).toHaveLength(3);
    for (const span of attempts) {
      expect(span.name).toBe('Attempt.pkg.v1.Greeter.SayHello');
      expect(span.parentSpanContext?.spanId).toBe(call.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(call.spanContext().traceId);
    }
    expect(attempts.map((s) => s.attributes[A.previousRpcAttempts])).toEqual([0, 1, 2]);
    expect(attempts.map((s) => s.attributes[A.transparentRetry])).toEqual([false, false, false]);
    expect(attempts.map((s) => s.attributes[A.attemptKind])).toEqual(['original', 'retry', 'retry']);
    expect(attempts.map((s) => s.attributes[A.attemptCommitted])).toEqual([false, false, true]);
    expect(attempts.map((s) => s.attributes[A.cancelledByOtherAttempt])).toEqual([false, false, false]);
    expect(attempts.map((s) => s.attributes[A.statusCode])).toEqual([14, 14, 0]);
    expect(attempt(attempts, 1).status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'UNAVAILABLE, attempt 1 failed',
    });
    expect(attempt(attempts, 3).status).toEqual({ code: SpanStatusCode.OK });
  });

  it("injects each attempt's own span context into that attempt's metadata", () => {
    const attempts = named('Attempt.');
    const ids = metadata.map(traceparentSpanId);
    expect(ids).toEqual([1, 2, 3].map((n) => attempt(attempts, n).spanContext().spanId));
    expect(new Set(ids).size).toBe(3);
  });

  it('records backoff, pushback and commit as events on the call span', () => {
    const call = named('Sent.')[0] as ReadableSpan;
    expect(call.events.map((e) => [e.name, e.attributes])).toEqual([
      [
        RETRY_SPAN_EVENTS.retryScheduled,
        { [A.eventAttempt]: 2, [A.eventDelayMs]: 97, [A.eventReason]: 'backoff' },
      ],
      [
        RETRY_SPAN_EVENTS.retryScheduled,
        { [A.eventAttempt]: 3, [A.eventDelayMs]: 50, [A.eventReason]: 'pushback' },
      ],
      [RETRY_SPAN_EVENTS.committed, { [A.eventAttempt]: 3, [A.eventReason]: 'status' }],
    ]);
  });

  it('forgets the call once its spans have ended', () => {
    expect(tracing.trackedCalls).toBe(0);
  });
});

describe('createRetryTracing: a hedged call', () => {
  it('marks the losing hedge, keeps its status unset, and follows it past the end of the call', () => {
    const { tracing, named } = setup();
    const c = callEvents();
    tracing.onEvent(c.start('hedging'));
    tracing.onEvent(c.attempt(1, 'original'));
    tracing.onEvent({
      ...c.base,
      type: 'hedge-scheduled',
      attempt: 2,
      delayMs: 20,
      reason: 'adaptive-delay',
      target: 'dns:localhost:50051',
    });
    tracing.onEvent(c.attempt(2, 'hedge'));
    tracing.onEvent({ ...c.base, type: 'committed', attempt: 2, reason: 'headers' });
    tracing.onEvent(c.attemptEnd(2, 'hedge', status.OK));
    tracing.onEvent(c.end(status.OK, 2));
    expect(named('Sent.')).toHaveLength(1);
    expect(named('Attempt.')).toHaveLength(1);
    expect(tracing.trackedCalls).toBe(1); // the loser's span is still open
    tracing.onEvent(c.attemptEnd(1, 'original', status.CANCELLED, 'other-attempt-committed'));
    expect(tracing.trackedCalls).toBe(0);

    const attempts = named('Attempt.');
    const loser = attempt(attempts, 1);
    const winner = attempt(attempts, 2);
    expect(loser.attributes).toMatchObject({
      [A.attemptKind]: 'original',
      [A.attemptCommitted]: false,
      [A.cancelledByOtherAttempt]: true,
      [A.cancelReason]: 'other-attempt-committed',
      [A.statusCode]: status.CANCELLED,
    });
    expect(loser.status.code).toBe(SpanStatusCode.UNSET);
    expect(winner.attributes).toMatchObject({
      [A.attemptKind]: 'hedge',
      [A.previousRpcAttempts]: 1,
      [A.attemptCommitted]: true,
      [A.cancelledByOtherAttempt]: false,
    });
    expect(winner.attributes[A.cancelReason]).toBeUndefined();
    const call = named('Sent.')[0] as ReadableSpan;
    expect(call.attributes[A.policy]).toBe('hedging');
    expect(call.events.map((e) => e.name)).toEqual([
      RETRY_SPAN_EVENTS.hedgeScheduled,
      RETRY_SPAN_EVENTS.committed,
    ]);
    expect(call.events[0]?.attributes?.[A.eventReason]).toBe('adaptive-delay');
  });

  it('records a hedge held while the calls stall as a span event naming its attempt', () => {
    const { tracing, named } = setup();
    const c = callEvents();
    tracing.onEvent(c.start('hedging'));
    tracing.onEvent(c.attempt(1, 'original'));
    tracing.onEvent({ ...c.base, type: 'hedge-held', attempt: 2 });
    tracing.onEvent({ ...c.base, type: 'committed', attempt: 1, reason: 'headers' });
    tracing.onEvent(c.attemptEnd(1, 'original', status.OK));
    tracing.onEvent(c.end(status.OK, 1));
    const call = named('Sent.')[0] as ReadableSpan;
    expect(call.events.map((e) => e.name)).toEqual([
      RETRY_SPAN_EVENTS.hedgeHeld,
      RETRY_SPAN_EVENTS.committed,
    ]);
    expect(call.events[0]?.attributes?.[A.eventAttempt]).toBe(2);
  });

  it('gives a cancelled call and its cancelled attempts an ERROR status', () => {
    const { tracing, named } = setup();
    const c = callEvents();
    tracing.onEvent(c.start());
    tracing.onEvent(c.attempt(1, 'original'));
    tracing.onEvent(c.end(status.CANCELLED, 1));
    tracing.onEvent(c.attemptEnd(1, 'original', status.CANCELLED, 'call-cancelled'));
    const span = named('Attempt.')[0];
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
    expect(span?.attributes[A.cancelReason]).toBe('call-cancelled');
    expect(span?.attributes[A.cancelledByOtherAttempt]).toBe(false);
    expect(named('Sent.')[0]?.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'CANCELLED, call failed',
    });
  });
});

describe('createRetryTracing: throttling', () => {
  it('records the gate and its tokens, and leaves the tokens out when the gate does not report them', () => {
    const { tracing, named } = setup();
    const c = callEvents();
    tracing.onEvent(c.start());
    tracing.onEvent(c.attempt(1, 'original'));
    tracing.onEvent(c.attemptEnd(1, 'original', status.UNAVAILABLE));
    tracing.onEvent({
      ...c.base,
      type: 'throttled',
      attempt: 2,
      kind: 'retry',
      gate: 'retry-throttle',
      tokens: 4.5,
      target: 'dns:localhost:50051',
    });
    tracing.onEvent({
      ...c.base,
      type: 'throttled',
      attempt: 2,
      kind: 'hedge',
      gate: 'budget',
      tokens: Number.NaN,
      target: 'dns:localhost:50051',
    });
    tracing.onEvent(c.end(status.UNAVAILABLE, 1));
    const events = named('Sent.')[0]?.events ?? [];
    expect(events.map((e) => [e.name, e.attributes])).toEqual([
      [
        RETRY_SPAN_EVENTS.throttled,
        {
          [A.eventAttempt]: 2,
          [A.eventKind]: 'retry',
          [A.eventGate]: 'retry-throttle',
          [A.eventTokens]: 4.5,
        },
      ],
      [RETRY_SPAN_EVENTS.throttled, { [A.eventAttempt]: 2, [A.eventKind]: 'hedge', [A.eventGate]: 'budget' }],
    ]);
  });
});

describe('createRetryTracing: parenting and propagation', () => {
  const manager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(manager.enable());
  });
  afterAll(() => {
    context.disable();
  });

  it('parents the call span to the context active at call start, and attempts to the call span later on', async () => {
    const { tracing, named, provider } = setup();
    const app = provider.getTracer('app').startSpan('app work');
    const c = callEvents();
    context.with(trace.setSpan(ROOT_CONTEXT, app), () => tracing.onEvent(c.start()));
    // A retry starts from a timer, in whatever context that runs in.
    await new Promise((resolve) => setTimeout(resolve, 1));
    const other = provider.getTracer('app').startSpan('unrelated');
    context.with(trace.setSpan(ROOT_CONTEXT, other), () => {
      tracing.onEvent(c.attempt(1, 'original'));
      tracing.onEvent(c.attemptEnd(1, 'original', status.OK));
      tracing.onEvent(c.end(status.OK, 1));
    });
    app.end();
    const call = named('Sent.')[0] as ReadableSpan;
    expect(call.parentSpanContext?.spanId).toBe(app.spanContext().spanId);
    expect(call.spanContext().traceId).toBe(app.spanContext().traceId);
    expect(named('Attempt.')[0]?.parentSpanContext?.spanId).toBe(call.spanContext().spanId);
  });

  it('replaces a traceparent already in the metadata with the attempt span', () => {
    const { tracing, named } = setup();
    const metadata = new Metadata();
    metadata.set('traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    const c = callEvents();
    tracing.onEvent(c.start());
    tracing.onEvent(c.attempt(1, 'original', metadata));
    tracing.onEvent(c.attemptEnd(1, 'original', status.OK));
    expect(metadata.get('traceparent')).toHaveLength(1);
    expect(traceparentSpanId(metadata)).toBe(named('Attempt.')[0]?.spanContext().spanId);
  });

  it('writes a binary (-bin) propagation field as a Buffer, and reads it back as base64', () => {
    const seen: string[] = [];
    const binary: TextMapPropagator = {
      inject(ctx: Context, carrier, setter) {
        const spanId = trace.getSpanContext(ctx)?.spanId ?? '';
        setter.set(carrier, 'x-trace-bin', Buffer.from(spanId, 'hex').toString('base64'));
      },
      extract(ctx: Context) {
        return ctx;
      },
      fields: () => ['x-trace-bin'],
    };
    const { tracing, named } = setup({ propagator: binary });
    const metadata = new Metadata();
    const c = callEvents();
    tracing.onEvent(c.start());
    tracing.onEvent(c.attempt(1, 'original', metadata));
    tracing.onEvent(c.attemptEnd(1, 'original', status.OK));
    const value = metadata.get('x-trace-bin')[0];
    expect(Buffer.isBuffer(value)).toBe(true);
    seen.push(Buffer.from(value as Buffer).toString('hex'));
    expect(seen).toEqual([named('Attempt.')[0]?.spanContext().spanId]);
    expect(metadataGetter.get(metadata, 'x-trace-bin')).toBe((value as Buffer).toString('base64'));
    expect(metadataGetter.keys(metadata)).toContain('x-trace-bin');
  });

  it('uses the global propagator when none is given', () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    try {
      const exporter = new InMemorySpanExporter();
      const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
      const tracing = createRetryTracing({ tracer: provider.getTracer('mine') });
      const metadata = new Metadata();
      const c = callEvents();
      tracing.onEvent(c.start());
      tracing.onEvent(c.attempt(1, 'original', metadata));
      tracing.onEvent(c.attemptEnd(1, 'original', status.OK));
      const attemptSpan = exporter.getFinishedSpans().find((s) => s.name.startsWith('Attempt.'));
      expect(attemptSpan?.instrumentationScope.name).toBe('mine');
      expect(traceparentSpanId(metadata)).toBe(attemptSpan?.spanContext().spanId);
    } finally {
      propagation.disable();
    }
  });
});

describe('createRetryTracing: the instrumentation scope', () => {
  it("names the package and its version on a given provider's spans", () => {
    const { tracing, spans } = setup();
    const c = callEvents();
    tracing.onEvent(c.start());
    tracing.onEvent(c.attempt(1, 'original'));
    tracing.onEvent(c.attemptEnd(1, 'original', status.OK));
    tracing.onEvent(c.end(status.OK, 1));
    expect(
      spans().map((span) => [span.instrumentationScope.name, span.instrumentationScope.version]),
    ).toEqual([
      ['grpc-retry-hedging', packageJson.version],
      ['grpc-retry-hedging', packageJson.version],
    ]);
  });
});

describe('createRetryTracing: the global tracer provider', () => {
  it('does nothing while no provider is registered, and picks one up when it is', () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const tracing = createRetryTracing();
    const run = () => {
      const metadata = new Metadata();
      const c = callEvents();
      tracing.onEvent(c.start());
      const tracked = tracing.trackedCalls;
      tracing.onEvent(c.attempt(1, 'original', metadata));
      tracing.onEvent(c.attemptEnd(1, 'original', status.OK));
      tracing.onEvent(c.end(status.OK, 1));
      return { tracked, traceparent: metadata.get('traceparent') };
    };
    try {
      expect(run()).toEqual({ tracked: 0, traceparent: [] });

      const exporter = new InMemorySpanExporter();
      const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
      trace.setGlobalTracerProvider(provider);
      const traced = run();
      expect(traced.tracked).toBe(1);
      expect(traced.traceparent).toHaveLength(1);
      expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual([
        'Attempt.pkg.v1.Greeter.SayHello',
        'Sent.pkg.v1.Greeter.SayHello',
      ]);
      expect(exporter.getFinishedSpans()[0]?.instrumentationScope).toMatchObject({
        name: 'grpc-retry-hedging',
        version: packageJson.version,
      });

      trace.disable();
      expect(run()).toEqual({ tracked: 0, traceparent: [] });
      expect(exporter.getFinishedSpans()).toHaveLength(2);
    } finally {
      trace.disable();
      propagation.disable();
    }
  });
});

describe('createRetryTracing: a global provider whose getTracer throws', () => {
  it('is asked again at the next call, not left untraced for good', () => {
    const tracing = createRetryTracing();
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    let refusals = 1;
    trace.setGlobalTracerProvider({
      getTracer(...args: Parameters<typeof provider.getTracer>) {
        if (refusals-- > 0) throw new Error('not ready');
        return provider.getTracer(...args);
      },
    });
    try {
      expect(() => tracing.onEvent(callEvents().start())).toThrow('not ready');
      const c = callEvents();
      tracing.onEvent(c.start());
      tracing.onEvent(c.end(status.OK, 0));
      expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['Sent.pkg.v1.Greeter.SayHello']);
    } finally {
      trace.disable();
    }
  });
});

describe('createRetryTracing: limits, listeners and options', () => {
  it('ends and drops the oldest call past maxTrackedCalls', () => {
    const { tracing, named } = setup({ maxTrackedCalls: 2 });
    const calls = [callEvents(), callEvents(), callEvents()];
    for (const c of calls) {
      tracing.onEvent(c.start());
      tracing.onEvent(c.attempt(1, 'original'));
    }
    expect(tracing.trackedCalls).toBe(2);
    // The first call's spans were ended as they were; its later events are ignored.
    expect(named('Sent.')).toHaveLength(1);
    expect(named('Attempt.')).toHaveLength(1);
    tracing.onEvent((calls[0] as ReturnType<typeof callEvents>).end(status.OK, 1));
    expect(named('Sent.')).toHaveLength(1);
    expect(named('Sent.')[0]?.attributes[A.attempts]).toBeUndefined();
  });

  it('ends the spans of a call whose id starts again (two copies of the package feeding one listener)', () => {
    const { tracing, named } = setup();
    const first = callEvents();
    tracing.onEvent(first.start());
    tracing.onEvent(first.attempt(1, 'original'));
    const again = callEvents(first.callId);
    tracing.onEvent(again.start('hedging'));
    expect(named('Sent.').map((s) => s.attributes[A.policy])).toEqual(['retry']);
    expect(named('Attempt.')).toHaveLength(1);
    expect(tracing.trackedCalls).toBe(1);
    tracing.onEvent(again.end(status.OK, 0));
    expect(named('Sent.').map((s) => s.attributes[A.policy])).toEqual(['retry', 'hedging']);
    expect(tracing.trackedCalls).toBe(0);
  });

  it("forgets a call whose span's end throws in a span processor", () => {
    const throwing = {
      onStart(): void {},
      onEnd(span: ReadableSpan): void {
        if (span.name.startsWith('Sent.')) throw new Error('processor broke');
      },
      forceFlush: () => Promise.resolve(),
      shutdown: () => Promise.resolve(),
    };
    const tracing = createRetryTracing({
      tracerProvider: new BasicTracerProvider({ spanProcessors: [throwing] }),
      propagator: new W3CTraceContextPropagator(),
    });
    for (let i = 0; i < 3; i++) {
      const c = callEvents();
      tracing.onEvent(c.start());
      tracing.onEvent(c.attempt(1, 'original'));
      tracing.onEvent(c.attemptEnd(1, 'original', status.OK));
      expect(() => tracing.onEvent(c.end(status.OK, 1))).toThrow('processor broke');
    }
    expect(tracing.trackedCalls).toBe(0);
  });

  it('combine() feeds the tracing, then the other listener, even when tracing throws', () => {
    const { tracing } = setup({
      propagator: {
        inject() {
          throw new Error('propagator broke');
        },
        extract: (ctx: Context) => ctx,
        fields: () => [],
      },
    });
    const seen: string[] = [];
    const listener = tracing.combine((event) => seen.push(event.type));
    const c = callEvents();
    listener(c.start());
    expect(() => listener(c.attempt(1, 'original'))).toThrow('propagator broke');
    expect(seen).toEqual(['call-start', 'attempt-start']);
    expect(tracing.combine()).toBe(tracing.onEvent);
    expect(() => tracing.combine('x' as never)).toThrow(
      new TypeError('RetryTracing.combine: the listener must be a function'),
    );
  });

  it('rejects bad options, naming them', () => {
    expect(() => createRetryTracing(null as never)).toThrow(/options must be an object/);
    expect(() => createRetryTracing({ tracer: {} as never })).toThrow(/options\.tracer must be/);
    expect(() => createRetryTracing({ tracerProvider: 1 as never })).toThrow(
      /options\.tracerProvider must be/,
    );
    expect(() => createRetryTracing({ propagator: {} as never })).toThrow(/options\.propagator must be/);
    // null is no tracer, provider or propagator either: the same messages, not a TypeError of property access
    expect(() => createRetryTracing({ tracer: null as never })).toThrow(
      'createRetryTracing: options.tracer must be an OpenTelemetry Tracer, got null',
    );
    expect(() => createRetryTracing({ tracerProvider: null as never })).toThrow(
      'createRetryTracing: options.tracerProvider must be an OpenTelemetry TracerProvider, got null',
    );
    expect(() => createRetryTracing({ propagator: null as never })).toThrow(
      'createRetryTracing: options.propagator must be an OpenTelemetry TextMapPropagator, got null',
    );
    expect(() => createRetryTracing({ maxTrackedCalls: 0 })).toThrow(RangeError);
    expect(() => createRetryTracing({ maxTrackedCalls: 1.5 })).toThrow(/options\.maxTrackedCalls/);
  });
});

describe('createRetryTracing: the rest of the events', () => {
  it("records an internal error as an exception event on the call span, with the engine's message", () => {
    const { tracing, named } = setup();
    const c = callEvents();
    tracing.onEvent(c.start());
    tracing.onEvent(c.attempt(1, 'original'));
    tracing.onEvent({ ...c.base, type: 'internal-error', message: 'the engine broke a rule' });
    tracing.onEvent(c.attemptEnd(1, 'original', status.INTERNAL));
    tracing.onEvent(c.end(status.INTERNAL, 1));
    const events = named('Sent.')[0]?.events.map((e) => [e.name, e.attributes]);
    expect(events).toContainEqual([
      RETRY_SPAN_EVENTS.internalError,
      { 'exception.message': 'the engine broke a rule' },
    ]);
  });

  it('names the spans of a method path without a service, as A72 names them', () => {
    const { tracing, named } = setup();
    const c = callEvents(undefined, '/Ping');
    tracing.onEvent(c.start());
    tracing.onEvent(c.attempt(1, 'original'));
    tracing.onEvent(c.attemptEnd(1, 'original', status.OK));
    tracing.onEvent(c.end(status.OK, 1));
    const [call] = named('Sent.');
    expect(call?.name).toBe('Sent.Ping');
    expect(call?.attributes[A.rpcService]).toBe('');
    expect(call?.attributes[A.rpcMethod]).toBe('Ping');
  });
});

describe('RetryTracing.close()', () => {
  it('ends the spans still open, forgets the calls, traces nothing after, and still calls a combined listener', () => {
    const { tracing, spans, named } = setup();
    const inFlight = callEvents();
    tracing.onEvent(inFlight.start());
    tracing.onEvent(inFlight.attempt(1, 'original'));
    expect(spans()).toEqual([]); // nothing ended yet
    expect(tracing.trackedCalls).toBe(1);
    const seen: string[] = [];
    const combined = tracing.combine((event) => seen.push(event.type));

    tracing.close();
    tracing.close(); // idempotent

    expect(tracing.trackedCalls).toBe(0);
    expect(named('Sent.')).toHaveLength(1);
    expect(named('Attempt.')).toHaveLength(1);
    expect(named('Sent.')[0]?.status).toEqual({ code: SpanStatusCode.UNSET }); // ended as it was: no status
    const later = callEvents();
    combined(later.start());
    combined(later.attempt(1, 'original'));
    combined(later.end(status.OK, 1));
    tracing.onEvent(inFlight.end(status.OK, 1)); // the closed call's end arrives late: nothing to end twice
    expect(spans()).toHaveLength(2); // nothing traced after close
    expect(tracing.trackedCalls).toBe(0);
    expect(seen).toEqual(['call-start', 'attempt-start', 'call-end']);
  });
});

describe('createRetryTracing: a losing hedge the cancel-rate limit let run', () => {
  it('is marked left running, not cancelled by the other attempt, and keeps the status it ended with', () => {
    const { tracing, named } = setup();
    const c = callEvents();
    tracing.onEvent(c.start('hedging'));
    tracing.onEvent(c.attempt(1, 'original'));
    tracing.onEvent(c.attempt(2, 'hedge'));
    tracing.onEvent({ ...c.base, type: 'committed', attempt: 1, reason: 'headers' });
    tracing.onEvent({
      ...c.base,
      type: 'attempt-left-running',
      attempt: 2,
      cancelReason: 'other-attempt-committed',
      loserCapMs: 300,
    } as RetryEvent);
    tracing.onEvent(c.attemptEnd(1, 'original', status.OK));
    tracing.onEvent(c.end(status.OK, 2));
    // The server answered the loser later: it was never cancelled.
    tracing.onEvent({
      ...c.attemptEnd(2, 'hedge', status.OK, 'other-attempt-committed'),
      leftRunning: true,
    } as RetryEvent);
    const loser = attempt(named('Attempt.'), 2);
    expect(named('Sent.')[0]?.attributes[A.endReason]).toBeUndefined();
    expect(loser.attributes).toMatchObject({
      [A.leftRunning]: true,
      [A.cancelledByOtherAttempt]: false,
      [A.cancelReason]: 'other-attempt-committed',
      [A.statusCode]: 0,
    });
    expect(loser.status).toEqual({ code: SpanStatusCode.OK });
    // A loser that was cancelled has no left_running attribute.
    const { tracing: other, named: otherNamed } = setup();
    const d = callEvents();
    other.onEvent(d.start('hedging'));
    other.onEvent(d.attempt(1, 'original'));
    other.onEvent(d.attempt(2, 'hedge'));
    other.onEvent(d.attemptEnd(2, 'hedge', status.CANCELLED, 'other-attempt-committed'));
    const cancelled = attempt(otherNamed('Attempt.'), 2);
    expect(cancelled.attributes[A.leftRunning]).toBeUndefined();
    expect(cancelled.attributes[A.cancelledByOtherAttempt]).toBe(true);
  });
});

describe('createRetryTracing: why a failed call stopped', () => {
  it("puts call-end's reason on the call span", () => {
    const { tracing, named } = setup();
    const c = callEvents();
    tracing.onEvent(c.start());
    tracing.onEvent(c.attempt(1, 'original'));
    tracing.onEvent(c.attemptEnd(1, 'original', status.UNAVAILABLE));
    tracing.onEvent({ ...c.end(status.UNAVAILABLE, 1), reason: 'throttled' } as RetryEvent);
    expect(named('Sent.')[0]?.attributes[A.endReason]).toBe('throttled');
  });
});
