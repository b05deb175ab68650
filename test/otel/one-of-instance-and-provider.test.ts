/**
 * createRetryMetrics and createRetryTracing take a meter (tracer) or a provider to get one from, not both: given
 * both, one of them was silently ignored.
 */
import { metrics, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { createRetryMetrics } from '../../src/otel/retry-metrics.js';
import { createRetryTracing } from '../../src/otel/retry-tracing.js';

describe('a meter or tracer and its provider, both given', () => {
  it('createRetryMetrics({ meter, meterProvider }) is a TypeError', () => {
    const meterProvider = metrics.getMeterProvider();
    const meter = meterProvider.getMeter('test');
    expect(() => createRetryMetrics({ meter, meterProvider })).toThrow(
      new TypeError(
        'createRetryMetrics: options.meter and options.meterProvider are both given; give one: the meter to record on, or the provider to get it from',
      ),
    );
    expect(() => createRetryMetrics({ meter }).close()).not.toThrow();
    expect(() => createRetryMetrics({ meterProvider }).close()).not.toThrow();
  });

  it('createRetryTracing({ tracer, tracerProvider }) is a TypeError', () => {
    const tracerProvider = trace.getTracerProvider();
    const tracer = tracerProvider.getTracer('test');
    expect(() => createRetryTracing({ tracer, tracerProvider })).toThrow(
      new TypeError(
        'createRetryTracing: options.tracer and options.tracerProvider are both given; give one: the tracer to create spans with, or the provider to get it from',
      ),
    );
    expect(() => createRetryTracing({ tracer }).close()).not.toThrow();
    expect(() => createRetryTracing({ tracerProvider }).close()).not.toThrow();
  });
});
