/** The retry tracing on real calls through the interceptor, against the flaky server on 127.0.0.1. */
import { status } from '@grpc/grpc-js';
import { SpanStatusCode } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETRY_SPAN_ATTRIBUTES as A, createRetryTracing, RETRY_SPAN_EVENTS } from '../../src/otel/index.js';
import { withRetryOptions } from '../../src/retry/call-options.js';
import { FlakyServer } from '../../src/testing/index.js';
import { bidi, hedgingConfig, retryConfig, startHarness, unary } from '../helpers/harness.js';

class CountStarted implements SpanProcessor {
  started = 0;
  onStart(_span: Span): void {
    this.started += 1;
  }
  onEnd(): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const exporter = new InMemorySpanExporter();
const counter = new CountStarted();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), counter] });
const tracing = createRetryTracing({ tracerProvider: provider, propagator: new W3CTraceContextPropagator() });
let server: FlakyServer;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
  await provider.shutdown();
});

/** Finished spans of the traces whose call span has `callId`'s attempts; found through the server's records. */
function spansOf(callId: string): { call: ReadableSpan | undefined; attempts: ReadableSpan[] } {
  const first = server.attempts(callId)[0]?.metadata.traceparent;
  const traceId = typeof first === 'string' ? first.split('-')[1] : undefined;
  const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  return {
    call: spans.find((s) => s.name.startsWith('Sent.')),
    attempts: spans
      .filter((s) => s.name.startsWith('Attempt.'))
      .sort((x, y) => Number(x.attributes[A.attemptNumber]) - Number(y.attributes[A.attemptNumber])),
  };
}

async function settled(): Promise<void> {
  const giveUpAt = Date.now() + 5_000;
  while (
    (tracing.trackedCalls > 0 || counter.started > exporter.getFinishedSpans().length) &&
    Date.now() < giveUpAt
  ) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('retry tracing on real calls', () => {
  it('a bidi call retried after its first message: each server attempt carries its own attempt span', async () => {
    const h = await startHarness(retryConfig(), { onEvent: tracing.onEvent }, server);
    try {
      server.script('t-bidi', [{ failOnFirstMessage: true, status: status.UNAVAILABLE }, { echo: true }]);
      const outcome = await bidi(h.client, 't-bidi', [{ payload: 'a' }, { payload: 'b' }]);
      expect(outcome.code).toBe(status.OK);
      await settled();
      const { call, attempts } = spansOf('t-bidi');
      expect(attempts).toHaveLength(2);
      const sentTo = server.attempts('t-bidi').map((a) => String(a.metadata.traceparent).split('-')[2]);
      expect(sentTo).toEqual(attempts.map((s) => s.spanContext().spanId));
      for (const attempt of attempts)
        expect(attempt.parentSpanContext?.spanId).toBe(call?.spanContext().spanId);
      expect(attempts.map((s) => s.attributes[A.statusCode])).toEqual([status.UNAVAILABLE, status.OK]);
      expect(call?.name).toBe('Sent.grpc_retry_hedging.testing.v1.FlakyTest.Bidi');
    } finally {
      await h.close();
    }
  });

  it('pushback and throttling show as span events', async () => {
    const h = await startHarness(retryConfig(), { onEvent: tracing.onEvent }, server);
    const throttled = await startHarness(
      retryConfig({}, { retryThrottling: { maxTokens: 2, tokenRatio: 0.1 } }),
      { onEvent: tracing.onEvent },
      server,
    );
    try {
      server.script('t-pushback', [{ status: status.UNAVAILABLE, pushback: '30' }, {}]);
      server.script('t-throttled', [{ status: status.UNAVAILABLE }]);
      expect((await unary(h.client, 't-pushback')).code).toBe(status.OK);
      expect((await unary(throttled.client, 't-throttled')).code).toBe(status.UNAVAILABLE);
      await settled();

      const pushback = spansOf('t-pushback').call;
      expect(pushback?.events[0]?.name).toBe(RETRY_SPAN_EVENTS.retryScheduled);
      expect(pushback?.events[0]?.attributes).toEqual({
        [A.eventAttempt]: 2,
        [A.eventDelayMs]: 30,
        [A.eventReason]: 'pushback',
      });

      const { call, attempts } = spansOf('t-throttled');
      expect(attempts).toHaveLength(1);
      expect(call?.events.map((e) => e.name)).toEqual([RETRY_SPAN_EVENTS.throttled]);
      expect(call?.events[0]?.attributes).toEqual({
        [A.eventAttempt]: 2,
        [A.eventKind]: 'retry',
        [A.eventGate]: 'retry-throttle',
        [A.eventTokens]: 1,
      });
      expect(call?.status.code).toBe(SpanStatusCode.ERROR);
    } finally {
      await h.close();
      await throttled.close();
    }
  });

  it('a deadline that passes during the backoff ends the call span with DEADLINE_EXCEEDED', async () => {
    const h = await startHarness(
      retryConfig({ initialBackoff: '10s', maxBackoff: '10s' }),
      {
        onEvent: tracing.onEvent,
      },
      server,
    );
    try {
      server.script('t-deadline', [{ status: status.UNAVAILABLE }]);
      expect((await unary(h.client, 't-deadline', undefined, { deadlineMs: 1000 })).code).toBe(
        status.DEADLINE_EXCEEDED,
      );
      await settled();
      const { call, attempts } = spansOf('t-deadline');
      expect(call?.attributes[A.statusCode]).toBe(status.DEADLINE_EXCEEDED);
      expect(call?.status.message).toMatch(/^DEADLINE_EXCEEDED, /);
      expect(call?.attributes[A.attempts]).toBe(1);
      expect(Number(call?.attributes[A.retryDelayMs])).toBeGreaterThan(500);
      expect(attempts.map((s) => s.attributes[A.statusCode])).toEqual([status.UNAVAILABLE]);
    } finally {
      await h.close();
    }
  });

  it('an attempt cut by perAttemptRecvTimeout: its span says why, the retry follows', async () => {
    const h = await startHarness(
      retryConfig({ perAttemptRecvTimeout: '0.5s' }),
      { onEvent: tracing.onEvent },
      server,
    );
    try {
      server.script('t-recv-timeout', [{ delayMs: 2_000 }, {}]);
      expect((await unary(h.client, 't-recv-timeout')).code).toBe(status.OK);
      await settled();
      const { call, attempts } = spansOf('t-recv-timeout');
      expect(attempts.map((s) => s.attributes[A.cancelReason])).toEqual(['per-attempt-timeout', undefined]);
      expect(attempts[0]?.status.code).toBe(SpanStatusCode.ERROR);
      expect(attempts[0]?.attributes[A.cancelledByOtherAttempt]).toBe(false);
      expect(attempts[1]?.attributes[A.attemptCommitted]).toBe(true);
      expect(call?.events[0]?.name).toBe(RETRY_SPAN_EVENTS.retryScheduled);
    } finally {
      await h.close();
    }
  });

  it('traces one call through withRetryOptions, and nothing for a call without a policy', async () => {
    const h = await startHarness(retryConfig(), { onEvent: () => {} }, server);
    try {
      server.script('t-per-call', [{ status: status.UNAVAILABLE }, {}]);
      server.script('t-off', [{}]);
      const before = exporter.getFinishedSpans().length;
      await unary(h.client, 't-off', undefined, { callOptions: withRetryOptions({ enabled: false }) });
      await unary(h.client, 't-per-call', undefined, {
        callOptions: withRetryOptions({ onEvent: tracing.onEvent }),
      });
      await settled();
      expect(server.attempts('t-off')[0]?.metadata.traceparent).toBeUndefined();
      expect(spansOf('t-per-call').attempts).toHaveLength(2);
      expect(exporter.getFinishedSpans().length - before).toBe(3);
    } finally {
      await h.close();
    }
  });

  it('ends every span of many hedged calls and forgets them all', async () => {
    const h = await startHarness(
      hedgingConfig({ maxAttempts: 3, hedgingDelay: '0.005s' }),
      { onEvent: tracing.onEvent },
      server,
    );
    try {
      const ids = Array.from({ length: 30 }, (_, i) => `t-many-${i}`);
      for (const [i, id] of ids.entries())
        server.script(id, [{ delayMs: (i % 3) * 15 }, { delayMs: 10 }, {}]);
      const outcomes = await Promise.all(ids.map((id) => unary(h.client, id)));
      expect(outcomes.every((o) => o.code === status.OK)).toBe(true);
      await settled();
      expect(tracing.trackedCalls).toBe(0);
      expect(exporter.getFinishedSpans()).toHaveLength(counter.started);
      let losers = 0;
      for (const id of ids) {
        const { call, attempts } = spansOf(id);
        const committed = attempts.filter((s) => s.attributes[A.attemptCommitted] === true);
        expect(committed).toHaveLength(1);
        expect(call?.attributes[A.committedAttempt]).toBe(committed[0]?.attributes[A.attemptNumber]);
        losers += attempts.filter((s) => s.attributes[A.cancelledByOtherAttempt] === true).length;
      }
      expect(losers).toBeGreaterThan(0);
    } finally {
      await h.close();
    }
  });
});
