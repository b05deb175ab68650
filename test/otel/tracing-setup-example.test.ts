import { ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { main } from '../../examples/otel-tracing-setup.js';

describe('examples/otel-tracing-setup.ts (the setup docs/observability.md shows)', () => {
  it('exports a call span and one attempt span per attempt through the SDK, flushed at shut-down', async () => {
    // Keeps what it was sent after shut-down (InMemorySpanExporter forgets its spans when the provider shuts down).
    const spans: ReadableSpan[] = [];
    const exporter: SpanExporter = {
      export: (batch, done) => {
        spans.push(...batch);
        done({ code: ExportResultCode.SUCCESS });
      },
      shutdown: async () => {},
    };
    await main(exporter);
    const call = spans.filter((s) => s.name === 'Sent.grpc_retry_hedging.testing.v1.FlakyTest.Unary');
    const attempts = spans.filter((s) => s.name === 'Attempt.grpc_retry_hedging.testing.v1.FlakyTest.Unary');
    expect(call).toHaveLength(1);
    expect(attempts.map((s) => s.attributes['grpc.attempt.kind'])).toEqual(['original', 'retry']);
    for (const attempt of attempts) {
      expect(attempt.parentSpanContext?.spanId).toBe(call[0]?.spanContext().spanId);
    }
  });
});
