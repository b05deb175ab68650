import { Metadata, status } from '@grpc/grpc-js';
import { type Attributes, metrics, ValueType } from '@opentelemetry/api';
import { DataPointType, type Histogram, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import packageJson from '../../package.json';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import {
  COUNT_BUCKET_BOUNDARIES,
  createRetryMetrics,
  DELAY_BUCKET_BOUNDARIES,
  RETRY_METER_NAME,
  type RetryMetricsOptions,
} from '../../src/otel/index.js';
import type { RetryEvent } from '../../src/retry/events.js';
import { FlakyServer } from '../../src/testing/index.js';
import { FakeClock } from '../adaptive/fake-clock.js';
import { FLAKY, hedgingConfig, retryConfig, startHarness, unary } from '../helpers/harness.js';

/** A reader whose collect() the test calls itself. */
class TestReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

interface Point {
  attributes: Attributes;
  count: number;
  sum: number;
  boundaries: number[];
}

const RETRIES = 'grpc.client.call.retries';
const HEDGES = 'grpc.client.call.hedges';
const DELAY = 'grpc.client.call.retry_delay';
const METHOD = `/${FLAKY}/Unary`;

function setup(options: RetryMetricsOptions = {}) {
  const reader = new TestReader();
  const provider = new MeterProvider({ readers: [reader] });
  const retryMetrics = createRetryMetrics({ meterProvider: provider, ...options });
  /** Histogram points of one instrument, by name; [] when it recorded nothing. */
  const points = async (name: string): Promise<Point[]> => {
    const { resourceMetrics, errors } = await reader.collect();
    expect(errors).toEqual([]);
    const out: Point[] = [];
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        if (metric.descriptor.name !== name) continue;
        expect(metric.dataPointType).toBe(DataPointType.HISTOGRAM);
        for (const dp of metric.dataPoints) {
          const value = dp.value as Histogram;
          out.push({
            attributes: dp.attributes,
            count: value.count,
            sum: value.sum ?? Number.NaN,
            boundaries: value.buckets.boundaries,
          });
        }
      }
    }
    return out;
  };
  return { reader, provider, retryMetrics, points };
}

function attemptStart(callId: number, attempt: number, kind: 'original' | 'retry' | 'hedge'): RetryEvent {
  return {
    type: 'attempt-start',
    method: METHOD,
    callId,
    attempt,
    kind,
    previousRpcAttempts: attempt - 1,
    metadata: new Metadata(),
  };
}

function callEnd(
  callId: number,
  attempts: number,
  code: number = status.OK,
  retryDelayMs = 0,
  method = METHOD,
  target = '',
): RetryEvent {
  return {
    type: 'call-end',
    method,
    callId,
    code,
    details: '',
    attempts,
    retryDelayMs,
    durationMs: 5,
    target,
  };
}

describe('createRetryMetrics: refused attempts', () => {
  it('counts each retry or hedge a gate refused, by kind and gate', async () => {
    const { retryMetrics, reader } = setup({ target: 't' });
    const throttled = (callId: number, kind: 'retry' | 'hedge', gate: string): RetryEvent => ({
      type: 'throttled',
      method: METHOD,
      callId,
      attempt: 2,
      kind,
      gate,
      tokens: 0,
      target: 'dns:db.example:443',
    });
    retryMetrics.onEvent(throttled(1, 'retry', 'retry-throttle'));
    retryMetrics.onEvent(throttled(2, 'retry', 'retry-throttle'));
    retryMetrics.onEvent(throttled(3, 'hedge', 'hedge-budget'));
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics
      .flatMap((s) => s.metrics)
      .find((m) => m.descriptor.name === 'grpc_retry_hedging.client.attempts_refused');
    expect(metric?.dataPointType).toBe(DataPointType.SUM);
    expect(metric?.descriptor.unit).toBe('{attempt}');
    const points = (metric?.dataPoints ?? []).map((p) => [p.attributes, p.value]);
    expect(points).toEqual([
      [
        {
          'grpc.method': `${FLAKY}/Unary`,
          'grpc_retry_hedging.kind': 'retry',
          'grpc_retry_hedging.gate': 'retry-throttle',
          'grpc.target': 't',
        },
        2,
      ],
      [
        {
          'grpc.method': `${FLAKY}/Unary`,
          'grpc_retry_hedging.kind': 'hedge',
          'grpc_retry_hedging.gate': 'hedge-budget',
          'grpc.target': 't',
        },
        1,
      ],
    ]);
  });
});

describe('createRetryMetrics: synthetic events', () => {
  it('records retries and retry_delay for a call that retried', async () => {
    const { retryMetrics, points } = setup({ target: 'dns:///example:443' });
    const feed = retryMetrics.onEvent;
    feed(attemptStart(1, 1, 'original'));
    feed({ type: 'retry-scheduled', method: METHOD, callId: 1, attempt: 2, delayMs: 10, reason: 'backoff' });
    feed(attemptStart(1, 2, 'retry'));
    feed(attemptStart(1, 3, 'retry'));
    expect(retryMetrics.trackedCalls).toBe(1);
    feed(callEnd(1, 3, status.OK, 30));
    expect(retryMetrics.trackedCalls).toBe(0);

    const attributes = {
      'grpc.method': `${FLAKY}/Unary`,
      'grpc.status': 'OK',
      'grpc.target': 'dns:///example:443',
    };
    const retries = await points(RETRIES);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ attributes, count: 1, sum: 2 });
    expect(retries[0]?.boundaries).toEqual([...COUNT_BUCKET_BOUNDARIES]);
    expect(COUNT_BUCKET_BOUNDARIES).toEqual([1, 2, 3, 4, 5]); // A96's advice
    expect(await points(HEDGES)).toEqual([]);
    const delay = await points(DELAY);
    expect(delay).toHaveLength(1);
    expect(delay[0]).toMatchObject({ attributes, count: 1 });
    expect(delay[0]?.sum).toBeCloseTo(0.03, 10);
    expect(delay[0]?.boundaries).toEqual([...DELAY_BUCKET_BOUNDARIES]);
    // A66's latency buckets: 0, 10 µs ... 100 s, 41 boundaries
    expect(DELAY_BUCKET_BOUNDARIES).toHaveLength(41);
    expect(DELAY_BUCKET_BOUNDARIES.slice(0, 3)).toEqual([0, 0.00001, 0.00005]);
    expect(DELAY_BUCKET_BOUNDARIES.slice(-3)).toEqual([20, 50, 100]);
  });

  it('describes each instrument: unit, value type and advised buckets', async () => {
    const { retryMetrics, reader, points } = setup();
    retryMetrics.onEvent(attemptStart(1, 2, 'retry'));
    retryMetrics.onEvent(callEnd(1, 2));
    retryMetrics.onEvent(attemptStart(2, 2, 'hedge'));
    retryMetrics.onEvent(callEnd(2, 2));
    retryMetrics.onEvent({
      type: 'throttled',
      method: METHOD,
      callId: 3,
      attempt: 2,
      kind: 'retry',
      gate: 'g',
      tokens: 0,
      target: '',
    });
    const { resourceMetrics } = await reader.collect();
    const described = Object.fromEntries(
      resourceMetrics.scopeMetrics
        .flatMap((m) => m.metrics)
        .map((m) => [
          m.descriptor.name,
          [m.descriptor.unit, m.descriptor.valueType, m.descriptor.description.length > 20],
        ]),
    );
    expect(described).toEqual({
      [RETRIES]: ['{retry}', ValueType.INT, true],
      [HEDGES]: ['{hedge}', ValueType.INT, true],
      [DELAY]: ['s', ValueType.DOUBLE, true],
      'grpc_retry_hedging.client.attempts_refused': ['{attempt}', ValueType.INT, true],
    });
    expect((await points(HEDGES))[0]?.boundaries).toEqual([1, 2, 3, 4, 5]);
  });

  it('records hedges, with the status name, for a hedged call', async () => {
    const { retryMetrics, points } = setup();
    const feed = retryMetrics.onEvent;
    feed(attemptStart(7, 1, 'original'));
    feed(attemptStart(7, 2, 'hedge'));
    feed(attemptStart(7, 3, 'hedge'));
    feed(callEnd(7, 3, status.UNAVAILABLE));
    const attributes = { 'grpc.method': `${FLAKY}/Unary`, 'grpc.status': 'UNAVAILABLE' };
    expect(await points(HEDGES)).toMatchObject([{ attributes, count: 1, sum: 2 }]);
    expect(await points(RETRIES)).toEqual([]);
    expect(await points(DELAY)).toMatchObject([{ attributes, count: 1, sum: 0 }]);
  });

  it('records only retry_delay (0) for a call with a single attempt, and no grpc.target when the call has none', async () => {
    const { retryMetrics, points } = setup();
    retryMetrics.onEvent(attemptStart(1, 1, 'original'));
    retryMetrics.onEvent(callEnd(1, 1, status.DEADLINE_EXCEEDED));
    expect(retryMetrics.trackedCalls).toBe(0);
    expect(await points(RETRIES)).toEqual([]);
    expect(await points(HEDGES)).toEqual([]);
    const delay = await points(DELAY);
    expect(delay).toHaveLength(1);
    expect(delay[0]).toMatchObject({ count: 1, sum: 0 });
    expect(delay[0]?.attributes).toStrictEqual({
      'grpc.method': `${FLAKY}/Unary`,
      'grpc.status': 'DEADLINE_EXCEEDED',
    });
  });

  it("maps each call's canonical target with targetAttribute, to bound cardinality", async () => {
    const known = new Set(['dns:///db.example:443']);
    const seen: string[] = [];
    const { retryMetrics, points } = setup({
      targetAttribute: (t) => {
        seen.push(t);
        return known.has(t) ? t : 'other';
      },
    });
    retryMetrics.onEvent(callEnd(1, 1, status.OK, 0, METHOD, 'dns:db.example:443'));
    retryMetrics.onEvent(callEnd(2, 1, status.OK, 0, METHOD, 'ipv4:10.0.0.1:50051'));
    retryMetrics.onEvent(callEnd(3, 1, status.OK, 0, METHOD, 'ipv4:10.0.0.2:50051'));
    retryMetrics.onEvent(callEnd(4, 1, status.OK, 0, METHOD, 'ipv4:10.0.0.2:50051'));
    retryMetrics.onEvent(callEnd(5, 1, status.OK, 0, METHOD, ''));
    const byTarget = (await points(DELAY)).map((p) => [p.attributes['grpc.target'], p.count]);
    expect(byTarget).toEqual([
      ['dns:///db.example:443', 1],
      ['other', 3],
      [undefined, 1],
    ]);
    // called with the canonical form, once per change of target, never for a call without one
    expect(seen).toEqual(['dns:///db.example:443', 'ipv4:10.0.0.1:50051', 'ipv4:10.0.0.2:50051']);
    expect(() => createRetryMetrics({ targetAttribute: 'x' as never })).toThrow(
      'createRetryMetrics: options.targetAttribute must be a function, got "x"',
    );
    expect(() => createRetryMetrics({ target: 't', targetAttribute: (t) => t })).toThrow(
      /options\.target and options\.targetAttribute are both given/,
    );
  });

  it("records each call's own target, in A66's canonical form, when no target is given", async () => {
    const { retryMetrics, points, reader } = setup();
    retryMetrics.onEvent(callEnd(1, 1, status.OK, 0, METHOD, 'dns:db.example:443'));
    retryMetrics.onEvent(callEnd(2, 1, status.OK, 0, METHOD, 'ipv4:10.0.0.1:50051'));
    retryMetrics.onEvent(callEnd(3, 1, status.OK, 0, METHOD, 'dns:db.example:443'));
    retryMetrics.onEvent({
      type: 'throttled',
      method: METHOD,
      callId: 4,
      attempt: 2,
      kind: 'retry',
      gate: 'retry-throttle',
      tokens: 0,
      target: 'dns:db.example:443',
    });
    const byTarget = (await points(DELAY)).map((p) => [p.attributes['grpc.target'], p.count]);
    expect(byTarget).toEqual([
      ['dns:///db.example:443', 2],
      ['ipv4:10.0.0.1:50051', 1],
    ]);
    const { resourceMetrics } = await reader.collect();
    const refused = resourceMetrics.scopeMetrics
      .flatMap((m) => m.metrics)
      .find((m) => m.descriptor.name === 'grpc_retry_hedging.client.attempts_refused');
    expect(refused?.dataPoints.map((p) => p.attributes['grpc.target'])).toEqual(['dns:///db.example:443']);
  });

  it('follows interleaved calls separately and aggregates by attributes', async () => {
    const { retryMetrics, points } = setup();
    const feed = retryMetrics.onEvent;
    feed(attemptStart(1, 1, 'original'));
    feed(attemptStart(2, 1, 'original'));
    feed(attemptStart(1, 2, 'retry'));
    feed(attemptStart(2, 2, 'retry'));
    feed(attemptStart(3, 1, 'original'));
    feed(attemptStart(3, 2, 'retry'));
    expect(retryMetrics.trackedCalls).toBe(3);
    feed(attemptStart(2, 3, 'retry'));
    feed(callEnd(2, 3));
    feed(callEnd(1, 2));
    feed(callEnd(3, 2, status.UNAVAILABLE));
    expect(retryMetrics.trackedCalls).toBe(0);
    const retries = await points(RETRIES);
    const ok = retries.find((p) => p.attributes['grpc.status'] === 'OK');
    const unavailable = retries.find((p) => p.attributes['grpc.status'] === 'UNAVAILABLE');
    expect(ok).toMatchObject({ count: 2, sum: 3 });
    expect(unavailable).toMatchObject({ count: 1, sum: 1 });
    expect(await points(DELAY)).toHaveLength(2);
  });

  it('maps method names with methodAttribute', async () => {
    const known = new Set([`${FLAKY}/Unary`]);
    const { retryMetrics, points } = setup({
      methodAttribute: (m) => (known.has(m) ? m : 'other'),
    });
    retryMetrics.onEvent(callEnd(1, 1, status.OK, 0, '/secret.Service/Method'));
    retryMetrics.onEvent(callEnd(2, 1, status.OK, 0));
    const methods = (await points(DELAY)).map((p) => p.attributes['grpc.method']).sort();
    expect(methods).toEqual([`${FLAKY}/Unary`, 'other']);
  });

  it('records the method path without its leading slash, and one without a slash as it is', async () => {
    const { retryMetrics, points } = setup();
    retryMetrics.onEvent(callEnd(1, 1, status.OK, 0, '/pkg.S/M'));
    retryMetrics.onEvent(callEnd(2, 1, status.OK, 0, 'pkg.S/N'));
    const methods = (await points(DELAY)).map((p) => p.attributes['grpc.method']).sort();
    expect(methods).toEqual(['pkg.S/M', 'pkg.S/N']);
  });

  it('reports the current adaptive hedging delay of each method as a gauge, in seconds', async () => {
    const clock = new FakeClock();
    const adaptiveHedging = new AdaptiveHedging({ clock });
    const { reader } = setup({ adaptiveHedging, target: 'dns:///db' });
    const gauge = async (): Promise<Map<unknown, number>> => {
      const { resourceMetrics } = await reader.collect();
      const out = new Map<unknown, number>();
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          if (metric.descriptor.name !== 'grpc_retry_hedging.client.hedging_delay') continue;
          expect(metric.dataPointType).toBe(DataPointType.GAUGE);
          expect(metric.descriptor.unit).toBe('s');
          for (const dp of metric.dataPoints) {
            expect(dp.attributes['grpc.target']).toBe('dns:///db');
            out.set(dp.attributes['grpc.method'], dp.value as number);
          }
        }
      }
      return out;
    };
    expect((await gauge()).size).toBe(0); // no call recorded yet
    for (let i = 0; i < 20; i++) adaptiveHedging.recordOutcome(METHOD, 40, 10 + (i % 3));
    const delays = await gauge();
    expect([...delays.keys()]).toEqual([`${FLAKY}/Unary`]);
    expect(delays.get(`${FLAKY}/Unary`)).toBeCloseTo(12 / 1000, 6); // the slowest of the first 20
    expect(() => createRetryMetrics({ adaptiveHedging: {} as never })).toThrow(
      /options\.adaptiveHedging must be an AdaptiveHedging/,
    );
  });

  describe('without an AdaptiveHedging given, the gauge reports the adaptive delays the events schedule', () => {
    const scheduled = (
      callId: number,
      delayMs: number,
      target: string,
      method = METHOD,
      reason: 'adaptive-delay' | 'hedging-delay' = 'adaptive-delay',
    ): RetryEvent => ({ type: 'hedge-scheduled', method, callId, attempt: 2, delayMs, reason, target });
    /** [grpc.method, grpc.target, seconds] of each point of the gauge. */
    const gaugeOf = async (reader: MetricReader) => {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics
        .flatMap((m) => m.metrics)
        .filter((m) => m.descriptor.name === 'grpc_retry_hedging.client.hedging_delay')
        .flatMap((m) => m.dataPoints as { attributes: Attributes; value: unknown }[])
        .map((p) => [p.attributes['grpc.method'], p.attributes['grpc.target'], p.value]);
    };

    it('the last one per method and target, each target in canonical form', async () => {
      const { retryMetrics, reader } = setup();
      expect(await gaugeOf(reader)).toEqual([]); // no gauge until an adaptive delay is scheduled
      retryMetrics.onEvent(scheduled(1, 30, 'dns:fast.example:443', '/pkg.S/Read', 'hedging-delay'));
      expect(await gaugeOf(reader)).toEqual([]); // a configured delay is not learned
      retryMetrics.onEvent(scheduled(2, 8, 'dns:fast.example:443'));
      retryMetrics.onEvent(scheduled(3, 60, 'dns:slow.example:443'));
      retryMetrics.onEvent(scheduled(4, 7, 'dns:fast.example:443'));
      retryMetrics.onEvent(scheduled(5, 20, 'dns:fast.example:443', '/pkg.S/Read'));
      expect(await gaugeOf(reader)).toEqual([
        [`${FLAKY}/Unary`, 'dns:///slow.example:443', 0.06],
        [`${FLAKY}/Unary`, 'dns:///fast.example:443', 0.007], // seen again last: after the slow one
        ['pkg.S/Read', 'dns:///fast.example:443', 0.02],
      ]);
      const { resourceMetrics } = await reader.collect();
      const gauge = resourceMetrics.scopeMetrics
        .flatMap((m) => m.metrics)
        .find((m) => m.descriptor.name === 'grpc_retry_hedging.client.hedging_delay');
      expect(gauge?.descriptor).toMatchObject({ unit: 's', valueType: ValueType.DOUBLE });
      expect(gauge?.descriptor.description).toMatch(/^Adaptive hedging delay of a method \(and target\)/);
    });

    it('names the target given for every call instead', async () => {
      const { retryMetrics, reader } = setup({ target: 'dns:///db' });
      retryMetrics.onEvent(scheduled(1, 9, 'dns:fast.example:443'));
      expect(await gaugeOf(reader)).toEqual([[`${FLAKY}/Unary`, 'dns:///db', 0.009]]);
    });

    it('reads an AdaptiveHedging given, and nothing from the events', async () => {
      const adaptiveHedging = new AdaptiveHedging({ clock: new FakeClock() });
      const { retryMetrics, reader } = setup({ adaptiveHedging });
      retryMetrics.onEvent(scheduled(1, 9, 'dns:fast.example:443'));
      expect(await gaugeOf(reader)).toEqual([]);
    });

    it('keeps the 1,000 pairs seen most recently', async () => {
      const { retryMetrics, reader } = setup();
      for (let i = 0; i < 1_000; i++) retryMetrics.onEvent(scheduled(i, 5, `dns:host-${i}:443`));
      retryMetrics.onEvent(scheduled(1_000, 6, 'dns:host-0:443')); // the first pair, seen again
      retryMetrics.onEvent(scheduled(1_001, 5, 'dns:host-1000:443'));
      const points = await gaugeOf(reader);
      const targets = points.map((p) => p[1]);
      expect(targets).toHaveLength(1_000);
      expect(targets).not.toContain('dns:///host-1:443'); // seen longest ago
      expect(points).toContainEqual([`${FLAKY}/Unary`, 'dns:///host-0:443', 0.006]);
      expect(targets).toContain('dns:///host-1000:443');
    });

    it('stops with close()', async () => {
      const { retryMetrics, reader } = setup();
      retryMetrics.onEvent(scheduled(1, 9, 'dns:fast.example:443'));
      expect(await gaugeOf(reader)).toHaveLength(1);
      retryMetrics.close();
      retryMetrics.onEvent(scheduled(2, 5, 'dns:other.example:443'));
      // a reader with cumulative temporality may keep the last point; no new reading comes
      expect((await gaugeOf(reader)).map((p) => p[1])).not.toContain('dns:///other.example:443');
    });
  });

  it('bounds the tracked calls, dropping the oldest', async () => {
    const { retryMetrics, points } = setup({ maxTrackedCalls: 2 });
    const feed = retryMetrics.onEvent;
    for (const id of [1, 2, 3]) {
      feed(attemptStart(id, 1, 'original'));
      feed(attemptStart(id, 2, 'retry'));
    }
    expect(retryMetrics.trackedCalls).toBe(2);
    for (const id of [1, 2, 3]) feed(callEnd(id, 2));
    expect(retryMetrics.trackedCalls).toBe(0);
    // call 1 was dropped: its count is unknown and not recorded, its delay still is
    expect(await points(RETRIES)).toMatchObject([{ count: 2, sum: 2 }]);
    expect(await points(DELAY)).toMatchObject([{ count: 3 }]);
  });

  it('combine() forwards every event to both listeners', async () => {
    const { retryMetrics, points } = setup();
    const seen: RetryEvent[] = [];
    const both = retryMetrics.combine((e) => seen.push(e));
    both(attemptStart(1, 1, 'original'));
    both(callEnd(1, 1));
    expect(seen.map((e) => e.type)).toEqual(['attempt-start', 'call-end']);
    expect(await points(DELAY)).toHaveLength(1);
    expect(retryMetrics.combine()).toBe(retryMetrics.onEvent);
    expect(() => retryMetrics.combine('x' as never)).toThrow(
      new TypeError('RetryMetrics.combine: the listener must be a function'),
    );
  });

  it('combine() still calls the other listener when recording throws', () => {
    const { retryMetrics } = setup({
      methodAttribute: () => {
        throw new Error('boom');
      },
    });
    const seen: RetryEvent[] = [];
    const both = retryMetrics.combine((e) => seen.push(e));
    both(attemptStart(1, 1, 'original'));
    both(attemptStart(1, 2, 'retry'));
    expect(() => both(callEnd(1, 2))).toThrow('boom');
    expect(seen).toHaveLength(3);
    expect(retryMetrics.trackedCalls).toBe(0);
  });

  it("names the package's version in its instrumentation scope", async () => {
    const { reader, retryMetrics } = setup();
    retryMetrics.onEvent(callEnd(1, 1));
    const { resourceMetrics } = await reader.collect();
    expect(resourceMetrics.scopeMetrics.map((s) => [s.scope.name, s.scope.version])).toEqual([
      [RETRY_METER_NAME, packageJson.version],
    ]);
    expect(RETRY_METER_NAME).toBe('grpc-retry-hedging');
  });

  it('uses the meter it is given, and the global provider by default', async () => {
    const a = setup();
    const meter = a.provider.getMeter('custom');
    const viaMeter = createRetryMetrics({ meter });
    viaMeter.onEvent(callEnd(1, 1));
    const { resourceMetrics } = await a.reader.collect();
    expect(resourceMetrics.scopeMetrics.map((s) => s.scope.name)).toEqual(['custom']);

    const b = setup();
    metrics.setGlobalMeterProvider(b.provider);
    try {
      const viaGlobal = createRetryMetrics();
      viaGlobal.onEvent(callEnd(1, 1));
      const collected = await b.reader.collect();
      expect(collected.resourceMetrics.scopeMetrics.map((s) => s.scope)).toEqual([
        { name: RETRY_METER_NAME, version: packageJson.version, schemaUrl: undefined },
      ]);
    } finally {
      metrics.disable();
    }
  });

  it('created before the global provider is registered, it records on it from the next call on', async () => {
    const early = createRetryMetrics(); // no provider yet: the API's no-op one
    early.onEvent(callEnd(1, 1));
    const b = setup();
    metrics.setGlobalMeterProvider(b.provider);
    try {
      early.onEvent(attemptStart(2, 1, 'original'));
      early.onEvent(attemptStart(2, 2, 'retry'));
      early.onEvent(callEnd(2, 2));
      const collected = await b.reader.collect();
      const names = collected.resourceMetrics.scopeMetrics.flatMap((scope) =>
        scope.metrics.map((metric) => [scope.scope.name, metric.descriptor.name]),
      );
      expect(names).toEqual(
        expect.arrayContaining([
          [RETRY_METER_NAME, RETRIES],
          [RETRY_METER_NAME, DELAY],
        ]),
      );
    } finally {
      metrics.disable();
    }
  });

  it('a global provider whose getMeter threw once is asked again at the next call, not left for the one before', async () => {
    const early = createRetryMetrics(); // the API's no-op provider
    const b = setup();
    let refusals = 1;
    const flaky = {
      getMeter(...args: Parameters<typeof b.provider.getMeter>) {
        if (refusals-- > 0) throw new Error('not ready');
        return b.provider.getMeter(...args);
      },
    };
    metrics.setGlobalMeterProvider(flaky);
    try {
      expect(() => early.onEvent(callEnd(1, 1))).toThrow('not ready');
      early.onEvent(callEnd(2, 1));
      const collected = await b.reader.collect();
      const names = collected.resourceMetrics.scopeMetrics.flatMap((scope) =>
        scope.metrics.map((metric) => metric.descriptor.name),
      );
      expect(names).toContain(DELAY);
    } finally {
      metrics.disable();
    }
  });

  it('several RetryMetrics on one provider feed the same instruments', async () => {
    const { provider, retryMetrics, points } = setup();
    const other = createRetryMetrics({ meterProvider: provider });
    for (const m of [retryMetrics, other]) {
      m.onEvent(attemptStart(1, 1, 'original'));
      m.onEvent(attemptStart(1, 2, 'retry'));
      m.onEvent(callEnd(1, 2));
    }
    expect(await points(RETRIES)).toMatchObject([{ count: 2, sum: 2 }]);
  });

  it('rejects invalid options', () => {
    expect(() => createRetryMetrics(null as never)).toThrow(TypeError);
    expect(() => createRetryMetrics({ meter: {} as never })).toThrow(/options\.meter /);
    expect(() => createRetryMetrics({ meterProvider: {} as never })).toThrow(/meterProvider/);
    // null is not a meter, provider or AdaptiveHedging either: the same message, not a TypeError of property access
    expect(() => createRetryMetrics({ meter: null as never })).toThrow(
      'createRetryMetrics: options.meter must be an OpenTelemetry Meter, got null',
    );
    expect(() => createRetryMetrics({ meterProvider: null as never })).toThrow(
      'createRetryMetrics: options.meterProvider must be an OpenTelemetry MeterProvider, got null',
    );
    expect(() => createRetryMetrics({ adaptiveHedging: null as never })).toThrow(
      'createRetryMetrics: options.adaptiveHedging must be an AdaptiveHedging, got null',
    );
    expect(() => createRetryMetrics({ target: 5 as never })).toThrow(
      'createRetryMetrics: options.target must be a string, got 5; did you mean "5" (a string)?',
    );
    expect(() => createRetryMetrics({ methodAttribute: true as never })).toThrow(
      'createRetryMetrics: options.methodAttribute must be a function, got true',
    );
    expect(() => createRetryMetrics({ maxTrackedCalls: -1 })).toThrow(
      /createRetryMetrics: options\.maxTrackedCalls/,
    );
    expect(() => createRetryMetrics({ target: 5 as never })).toThrow(/target/);
    expect(() => createRetryMetrics({ methodAttribute: 'x' as never })).toThrow(/methodAttribute/);
    expect(() => createRetryMetrics({ maxTrackedCalls: 0 })).toThrow(RangeError);
    expect(() => createRetryMetrics({ maxTrackedCalls: 1.5 })).toThrow(RangeError);
  });
});

describe('createRetryMetrics: end to end with the flaky server', () => {
  let server: FlakyServer;
  let n = 0;
  const id = () => `otel-${++n}`;
  let ctx: ReturnType<typeof setup>;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    server = await FlakyServer.start();
  });
  afterAll(async () => {
    await server.stop();
  });
  afterEach(async () => {
    await close?.();
    close = undefined;
    expect(ctx.retryMetrics.trackedCalls).toBe(0);
  });

  async function client(config: object, options: RetryMetricsOptions = {}, adaptiveHedging = false) {
    ctx = setup(options);
    const h = await startHarness(config, { onEvent: ctx.retryMetrics.onEvent, adaptiveHedging }, server);
    close = () => h.close();
    return h.client;
  }

  // The call's own target, as A66 spells grpc-js's `dns:127.0.0.1:<port>`.
  const attributes = (grpcStatus: string, target = `dns:///${server.address}`) => ({
    'grpc.method': `${FLAKY}/Unary`,
    'grpc.status': grpcStatus,
    'grpc.target': target,
  });

  it("records the target given instead of the call's own", async () => {
    const c = await client(retryConfig(), { target: 'dns:///greeter.example:443' });
    expect((await unary(c, id())).code).toBe(status.OK);
    expect(await ctx.points(DELAY)).toEqual([
      expect.objectContaining({ attributes: attributes('OK', 'dns:///greeter.example:443'), count: 1 }),
    ]);
  });

  it('a call that fails twice then succeeds records 2 retries and a retry delay', async () => {
    const c = await client(retryConfig());
    const call = id();
    server.script(call, [{ status: status.UNAVAILABLE }, { status: status.UNAVAILABLE }, {}]);
    const out = await unary(c, call);
    expect(out.code).toBe(status.OK);
    expect(await ctx.points(RETRIES)).toEqual([
      expect.objectContaining({ attributes: attributes('OK'), count: 1, sum: 2 }),
    ]);
    expect(await ctx.points(HEDGES)).toEqual([]);
    const delay = await ctx.points(DELAY);
    expect(delay).toHaveLength(1);
    expect(delay[0]?.attributes).toEqual(attributes('OK'));
    expect(delay[0]?.sum).toBeGreaterThan(0);
    expect(ctx.retryMetrics.trackedCalls).toBe(0);
  });

  it('a call that runs out of attempts records its retries with the final status', async () => {
    const c = await client(retryConfig({ maxAttempts: 3 }));
    const call = id();
    server.script(call, [{ status: status.UNAVAILABLE }]);
    const out = await unary(c, call);
    expect(out.code).toBe(status.UNAVAILABLE);
    expect(await ctx.points(RETRIES)).toEqual([
      expect.objectContaining({ attributes: attributes('UNAVAILABLE'), count: 1, sum: 2 }),
    ]);
  });

  it('a hedged call won by the hedge records one hedge', async () => {
    // maxAttempts 2: one hedge at most, however late the hedge's answer comes on a loaded machine (with 3, a third
    // attempt went out 50 ms after the second when its answer took longer than that)
    const c = await client(hedgingConfig({ hedgingDelay: '0.05s', maxAttempts: 2 }));
    const call = id();
    server.script(call, [{ delayMs: 3000 }, {}]);
    const out = await unary(c, call);
    expect(out.code).toBe(status.OK);
    expect(out.responses[0]?.attempt).toBe(2);
    expect(await ctx.points(HEDGES)).toEqual([
      expect.objectContaining({ attributes: attributes('OK'), count: 1, sum: 1 }),
    ]);
    expect(await ctx.points(RETRIES)).toEqual([]);
    // a hedge is sent while the first attempt is in flight: no retry delay
    expect(await ctx.points(DELAY)).toEqual([
      expect.objectContaining({ attributes: attributes('OK'), count: 1, sum: 0 }),
    ]);
    expect(ctx.retryMetrics.trackedCalls).toBe(0);
  });

  it('a call that succeeds at once records no retries but a zero retry delay', async () => {
    const c = await client(retryConfig());
    const out = await unary(c, id());
    expect(out.code).toBe(status.OK);
    expect(await ctx.points(RETRIES)).toEqual([]);
    expect(await ctx.points(HEDGES)).toEqual([]);
    expect(await ctx.points(DELAY)).toEqual([
      expect.objectContaining({ attributes: attributes('OK'), count: 1, sum: 0 }),
    ]);
  });

  it('a call without a policy records nothing', async () => {
    const c = await client({
      methodConfig: [
        { name: [{ service: FLAKY, method: 'ServerStream' }], retryPolicy: retryPolicyOf(retryConfig()) },
      ],
    });
    const call = id();
    server.script(call, [{ status: status.UNAVAILABLE }, {}]);
    const out = await unary(c, call);
    expect(out.code).toBe(status.UNAVAILABLE);
    const { resourceMetrics } = await ctx.reader.collect();
    expect(resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)).toEqual([]);
  });

  it("reports the delay the interceptor's own adaptive hedging learns for the call's target", async () => {
    const c = await client(hedgingConfig({ hedgingDelay: '0.5s', maxAttempts: 2 }), {}, true);
    // The delay starts at the configured 0.5 s and moves once 1 / maxExtraLoad = 20 calls have answered.
    for (let i = 0; i < 25; i++) expect((await unary(c, id())).code).toBe(status.OK);
    const { resourceMetrics } = await ctx.reader.collect();
    const points = resourceMetrics.scopeMetrics
      .flatMap((m) => m.metrics)
      .filter((m) => m.descriptor.name === 'grpc_retry_hedging.client.hedging_delay')
      .flatMap((m) => m.dataPoints as { attributes: Attributes; value: unknown }[]);
    expect(points.map((p) => p.attributes)).toEqual([
      { 'grpc.method': `${FLAKY}/Unary`, 'grpc.target': `dns:///${server.address}` },
    ]);
    // Learned from calls that each answered at once: far under the configured 0.5 s
    expect(points[0]?.value).toBeLessThan(0.25);
  });

  it('many concurrent calls leave nothing tracked', async () => {
    const c = await client(retryConfig());
    const calls = Array.from({ length: 20 }, (_, i) => {
      const call = id();
      server.script(call, i % 2 === 0 ? [{ status: status.UNAVAILABLE }, {}] : [{}]);
      return unary(c, call);
    });
    const outs = await Promise.all(calls);
    expect(outs.every((o) => o.code === status.OK)).toBe(true);
    expect(ctx.retryMetrics.trackedCalls).toBe(0);
    expect(await ctx.points(RETRIES)).toEqual([expect.objectContaining({ count: 10, sum: 10 })]);
    expect(await ctx.points(DELAY)).toEqual([expect.objectContaining({ count: 20 })]);
  });
});

function retryPolicyOf(config: object): unknown {
  return (config as { methodConfig: Array<{ retryPolicy: unknown }> }).methodConfig[0]?.retryPolicy;
}
