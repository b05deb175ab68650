/**
 * The `hedging_delay` gauge must not keep an AdaptiveHedging (or the metrics' listener) alive through the meter,
 * which keeps its callbacks for as long as it lives; and `RetryMetrics.close()` stops recording.
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Metadata, status } from '@grpc/grpc-js';
import { metrics } from '@opentelemetry/api';
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRetryMetrics, RETRY_METRIC_NAMES, type RetryMetricsOptions } from '../../src/otel/index.js';
import type { RetryEvent } from '../../src/retry/events.js';

/** A reader whose collect() the test calls itself; delta, so a collection shows only what was observed in it. */
class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.DELTA });
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

const METHOD = '/pkg.Svc/Do';

/** A stand-in AdaptiveHedging that counts the gauge's reads. */
function countingHedging() {
  const source = {
    reads: 0,
    currentDelays(): ReadonlyMap<string, number> {
      source.reads += 1;
      return new Map([[METHOD, 25]]);
    },
  };
  return source;
}

function setup() {
  const reader = new TestReader();
  const provider = new MeterProvider({ readers: [reader] });
  /** Points of one instrument, by name. */
  const points = async (name: string) => {
    const { resourceMetrics, errors } = await reader.collect();
    expect(errors).toEqual([]);
    return resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .filter((metric) => metric.descriptor.name === name)
      .flatMap((metric): readonly unknown[] => metric.dataPoints);
  };
  const create = (options: RetryMetricsOptions) =>
    createRetryMetrics({ meterProvider: provider, ...options });
  return { provider, points, create };
}

const callEnd = (callId: number): RetryEvent =>
  ({
    type: 'call-end',
    method: METHOD,
    callId,
    code: status.OK,
    details: '',
    metadata: new Metadata(),
    attempts: 2,
    retryDelayMs: 10,
    durationMs: 20,
    committedAttempt: 2,
    transparentRetries: 0,
  }) as unknown as RetryEvent;

afterEach(() => {
  vi.unstubAllGlobals();
  metrics.disable();
});

describe('RetryMetrics.close()', () => {
  it('removes the gauge callback and stops recording; idempotent', async () => {
    const { points, create } = setup();
    const hedging = countingHedging();
    const retryMetrics = create({ adaptiveHedging: hedging });
    expect(await points(RETRY_METRIC_NAMES.hedgingDelay)).toHaveLength(1);
    expect(hedging.reads).toBe(1);
    retryMetrics.onEvent({ ...callEnd(1) });
    expect(await points(RETRY_METRIC_NAMES.retryDelay)).toHaveLength(1);
    expect(hedging.reads).toBe(2); // one read per collection

    retryMetrics.close();
    retryMetrics.close();
    expect(await points(RETRY_METRIC_NAMES.hedgingDelay)).toHaveLength(0);
    expect(hedging.reads).toBe(2); // the meter no longer calls into it
    let forwarded = 0;
    const combined = retryMetrics.combine(() => {
      forwarded += 1;
    });
    combined(callEnd(2));
    retryMetrics.onEvent(callEnd(3));
    expect(forwarded).toBe(1); // the other listener still runs
    expect(await points(RETRY_METRIC_NAMES.retryDelay)).toHaveLength(0); // nothing recorded after close
    expect(retryMetrics.trackedCalls).toBe(0);
  });

  it('removes the gauge left on a global provider that was replaced', async () => {
    const first = setup();
    const second = setup();
    metrics.setGlobalMeterProvider(first.provider);
    const hedging = countingHedging();
    const retryMetrics = createRetryMetrics({ adaptiveHedging: hedging });
    expect(await first.points(RETRY_METRIC_NAMES.hedgingDelay)).toHaveLength(1);
    metrics.disable();
    metrics.setGlobalMeterProvider(second.provider);
    retryMetrics.onEvent(callEnd(1)); // follows the new provider
    expect(await second.points(RETRY_METRIC_NAMES.hedgingDelay)).toHaveLength(1);
    expect(await first.points(RETRY_METRIC_NAMES.hedgingDelay)).toHaveLength(0);
    retryMetrics.close();
    expect(await second.points(RETRY_METRIC_NAMES.hedgingDelay)).toHaveLength(0);
  });
});

describe('the hedging_delay gauge holds its AdaptiveHedging weakly', () => {
  it('reports nothing and removes its callback once the AdaptiveHedging is gone (WeakRef injected)', async () => {
    /** A WeakRef whose target the test clears, as a garbage collection would. */
    class ClearableRef<T extends object> {
      static made: ClearableRef<object>[] = [];
      constructor(public target: T | undefined) {
        ClearableRef.made.push(this as ClearableRef<object>);
      }
      deref(): T | undefined {
        return this.target;
      }
    }
    vi.stubGlobal('WeakRef', ClearableRef);
    const { points, create } = setup();
    const hedging = countingHedging();
    create({ adaptiveHedging: hedging });
    expect(ClearableRef.made).toHaveLength(1);
    expect(await points(RETRY_METRIC_NAMES.hedgingDelay)).toHaveLength(1);
    const ref = ClearableRef.made[0] as ClearableRef<object>;
    ref.target = undefined; // collected
    expect(await points(RETRY_METRIC_NAMES.hedgingDelay)).toHaveLength(0);
    ref.target = hedging; // were it to come back, the callback is no longer registered
    expect(await points(RETRY_METRIC_NAMES.hedgingDelay)).toHaveLength(0);
    expect(hedging.reads).toBe(1);
  });

  it('lets a dropped AdaptiveHedging and RetryMetrics be garbage-collected (real GC)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { points, create } = setup();
    let reads = 0;
    const collected = new FinalizationRegistry<string>(() => {});
    const alive = (() => {
      const hedging = {
        currentDelays: (): ReadonlyMap<string, number> => {
          reads += 1;
          return new Map([[METHOD, 25]]);
        },
      };
      const retryMetrics = create({ adaptiveHedging: hedging });
      collected.register(hedging, 'hedging');
      return { hedging: new WeakRef(hedging), listener: new WeakRef(retryMetrics.onEvent) };
    })();
    // Let WeakRef targets made in this job go, then collect.
    for (let i = 0; i < 5 && (alive.hedging.deref() || alive.listener.deref()); i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    expect(alive.hedging.deref()).toBeUndefined();
    expect(alive.listener.deref()).toBeUndefined();
    expect(await points(RETRY_METRIC_NAMES.hedgingDelay)).toHaveLength(0);
    expect(reads).toBe(0);
  });

  it('keeps reporting while its listener is kept (by an interceptor), though the application dropped the source', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { points, create } = setup();
    let reads = 0;
    const { listener, source } = (() => {
      const hedging = {
        currentDelays: (): ReadonlyMap<string, number> => {
          reads += 1;
          return new Map([[METHOD, 25]]);
        },
      };
      return { listener: create({ adaptiveHedging: hedging }).onEvent, source: new WeakRef(hedging) };
    })();
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    expect(source.deref()).toBeDefined();
    expect(await points(RETRY_METRIC_NAMES.hedgingDelay)).toHaveLength(1);
    expect(reads).toBe(1);
    expect(typeof listener).toBe('function'); // kept to here
  });
});
