/**
 * OpenTelemetry metrics for retries and hedging: gRPC A96's per-call instruments, with A66's `grpc.method` and
 * `grpc.target` and, this package's addition, A66's `grpc.status`; fed by the retry interceptor's typed events.
 * Only this module imports `@opentelemetry/api`; the package's main entry does not.
 */

import {
  type Attributes,
  type Counter,
  type Histogram,
  type Meter,
  type MeterProvider,
  metrics,
  type ObservableCallback,
  type ObservableGauge,
  ValueType,
} from '@opentelemetry/api';
import { statusLabel } from '../config/status-codes.js';
import type { CallEndEvent, RetryEvent, RetryEventListener } from '../retry/events.js';
import { checkOptions as checkKeys, checkNumber, describeValue } from '../util/option-checks.js';
import { packageVersion } from '../util/package-version.js';
import { wrongTypeHint } from '../util/wrong-type-hint.js';
import { canonicalTarget } from './canonical-target.js';
import { combineListeners } from './combine-listeners.js';
import { LearnedDelays } from './learned-delays.js';
import { DEFAULT_MAX_TRACKED_CALLS } from './max-tracked-calls.js';

/** Name of the meter the instruments are created on. */
export const RETRY_METER_NAME = 'grpc-retry-hedging';

/** Names of the instruments {@link createRetryMetrics} records: gRFC A96's, and one of this package's own. */
export const RETRY_METRIC_NAMES = Object.freeze({
  retries: 'grpc.client.call.retries',
  hedges: 'grpc.client.call.hedges',
  retryDelay: 'grpc.client.call.retry_delay',
  /** This package's own, in no gRFC: the current adaptive hedging delay of each method (gauge, seconds). */
  hedgingDelay: 'grpc_retry_hedging.client.hedging_delay',
  /**
   * This package's own, in no gRFC: retries and hedges a gate refused (a `throttled` event each; counter), with
   * `grpc.method`, `grpc.target`, `grpc_retry_hedging.kind` (`retry` or `hedge`) and `grpc_retry_hedging.gate`.
   */
  refusedAttempts: 'grpc_retry_hedging.client.attempts_refused',
} as const);

/** Bucket boundaries advised for the per-call retry and hedge counts (A96's). */
export const COUNT_BUCKET_BOUNDARIES: readonly number[] = Object.freeze([1, 2, 3, 4, 5]);

/** Bucket boundaries advised for `grpc.client.call.retry_delay`, in seconds (A66's latency buckets, as A96 says). */
export const DELAY_BUCKET_BOUNDARIES: readonly number[] = Object.freeze([
  0, 0.00001, 0.00005, 0.0001, 0.0003, 0.0006, 0.0008, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.008, 0.01,
  0.013, 0.016, 0.02, 0.025, 0.03, 0.04, 0.05, 0.065, 0.08, 0.1, 0.13, 0.16, 0.2, 0.25, 0.3, 0.4, 0.5, 0.65,
  0.8, 1, 2, 5, 10, 20, 50, 100,
]);

/** Options of {@link createRetryMetrics}. */
export interface RetryMetricsOptions {
  /** Meter to create the instruments on. Not with `meterProvider` (give one of them). */
  meter?: Meter | undefined;
  /**
   * Provider to get the `grpc-retry-hedging` meter from. Default: the global one (`metrics.getMeterProvider()`),
   * followed as it changes: a provider registered after {@link createRetryMetrics} runs is used from then on.
   * A provider passed here (or `meter`) is used for good.
   */
  meterProvider?: MeterProvider | undefined;
  /**
   * Value of the `grpc.target` attribute of every call. Default: each call's own target, in A66's canonical form
   * (grpc-js's `dns:db.example:443` recorded as `dns:///db.example:443`; see the events' `target`), left out for a
   * call whose target a layer below the interceptor could not say. Not with `targetAttribute`.
   */
  target?: string | undefined;
  /**
   * Maps each call's target, in A66's canonical form, to the `grpc.target` attribute value: e.g. to collapse targets
   * you do not know (IP addresses, a target per tenant) to `'other'` and keep cardinality bounded, as A66 advises.
   * Default: as is. Not with `target`.
   */
  targetAttribute?: ((target: string) => string) | undefined;
  /**
   * Maps a method name without the leading slash (`pkg.Service/Method`) to the `grpc.method` attribute value,
   * e.g. to collapse methods you do not know to `'other'` and keep cardinality bounded. Default: as is.
   */
  methodAttribute?: ((method: string) => string) | undefined;
  /**
   * Most calls tracked at once between their first retry or hedge and their end (default 10 000; a call that has
   * sent only its first attempt is not tracked). When the limit is hit the oldest entry is dropped, and that call's
   * retry or hedge count is not recorded.
   */
  maxTrackedCalls?: number | undefined;
  /**
   * An `AdaptiveHedging` (or anything with `currentDelays()`): its current delay of each method is reported as
   * the gauge `grpc_retry_hedging.client.hedging_delay` (seconds), with `grpc.method` and `grpc.target` (the
   * `target` option's). Without it the gauge reports, from the events, the adaptive delay each method and target
   * last scheduled a hedge with (the interceptor's own adaptive hedging, learned per target).
   * The meter holds it only weakly: the gauge reports it while this `RetryMetrics` (or its `onEvent`, e.g. through
   * the interceptor it was given to) or the application keeps it, and stops (its callback removed) once neither
   * does. {@link RetryMetrics.close} stops it at once.
   */
  adaptiveHedging?: { currentDelays(): ReadonlyMap<string, number> } | undefined;
}

/** What {@link createRetryMetrics} returns. */
export interface RetryMetrics {
  /** Pass as the `onEvent` option of `createRetryInterceptor`. Use one `RetryMetrics` per interceptor. */
  readonly onEvent: RetryEventListener;
  /** A listener that feeds these metrics and then `other` (which still runs if recording throws). */
  combine(other?: RetryEventListener): RetryEventListener;
  /** Calls that have sent a retry or hedge and not ended yet (0 when no call is in flight). */
  readonly trackedCalls: number;
  /**
   * Stops recording: removes the `hedging_delay` gauge's callback from the meter (so the meter no longer calls
   * into `adaptiveHedging`), forgets the tracked calls, and makes `onEvent` (and listeners from `combine`) record
   * nothing from then on; a listener given to `combine` is still called. Call it when the client it served is
   * closed. Idempotent.
   */
  close(): void;
}

function checkOptions(options: RetryMetricsOptions): void {
  const { meter, meterProvider, target, targetAttribute, methodAttribute, maxTrackedCalls, adaptiveHedging } =
    checkKeys('createRetryMetrics: options', options, [
      'meter',
      'meterProvider',
      'target',
      'targetAttribute',
      'methodAttribute',
      'maxTrackedCalls',
      'adaptiveHedging',
    ]) as RetryMetricsOptions;
  if (adaptiveHedging !== undefined && typeof adaptiveHedging?.currentDelays !== 'function') {
    throw new TypeError(
      `createRetryMetrics: options.adaptiveHedging must be an AdaptiveHedging, got ${describeValue(adaptiveHedging)}`,
    );
  }
  if (meter !== undefined && typeof meter?.createHistogram !== 'function') {
    throw new TypeError(
      `createRetryMetrics: options.meter must be an OpenTelemetry Meter, got ${describeValue(meter)}`,
    );
  }
  if (meterProvider !== undefined && typeof meterProvider?.getMeter !== 'function') {
    throw new TypeError(
      `createRetryMetrics: options.meterProvider must be an OpenTelemetry MeterProvider, got ${describeValue(meterProvider)}`,
    );
  }
  if (meter !== undefined && meterProvider !== undefined) {
    throw new TypeError(
      'createRetryMetrics: options.meter and options.meterProvider are both given; give one: the meter to record on, or the provider to get it from',
    );
  }
  if (target !== undefined && typeof target !== 'string') {
    throw new TypeError(
      `createRetryMetrics: options.target must be a string, got ${describeValue(target)}${wrongTypeHint(target, 'string')}`,
    );
  }
  if (targetAttribute !== undefined && typeof targetAttribute !== 'function') {
    throw new TypeError(
      `createRetryMetrics: options.targetAttribute must be a function, got ${describeValue(targetAttribute)}`,
    );
  }
  if (target !== undefined && targetAttribute !== undefined) {
    throw new TypeError(
      "createRetryMetrics: options.target and options.targetAttribute are both given; give one: the value for every call, or the function that maps each call's target",
    );
  }
  if (methodAttribute !== undefined && typeof methodAttribute !== 'function') {
    throw new TypeError(
      `createRetryMetrics: options.methodAttribute must be a function, got ${describeValue(methodAttribute)}`,
    );
  }
  checkNumber('createRetryMetrics: options', 'maxTrackedCalls', maxTrackedCalls, undefined, {
    min: 1,
    integer: true,
  });
}

/** The histograms of one meter, and how to stop its gauge. */
interface Instruments {
  readonly meter: Meter;
  readonly refused: Counter;
  readonly retry: Histogram;
  readonly hedge: Histogram;
  readonly retryDelay: Histogram;
  /** Removes the `hedging_delay` gauge's callback (a no-op while there is no gauge). */
  stopGauge: () => void;
}

/** Where the gauge reads delays: an AdaptiveHedging given, or the delays learned from events. */
type DelaySource = { currentDelays(): ReadonlyMap<string, number> } | LearnedDelays;

/** `grpc.method`, then `more`, then `grpc.target` when there is one: the attributes every instrument records. */
function methodAttributes(method: string, target: string | undefined, more: Attributes = {}): Attributes {
  const attributes: Attributes = { 'grpc.method': method, ...more };
  if (target !== undefined) {
    attributes['grpc.target'] = target;
  }
  return attributes;
}

/** What `grpc.method` is recorded for a method path. Module-level, so it captures nothing but `methodAttribute`. */
function methodNamer(methodAttribute: ((method: string) => string) | undefined): (method: string) => string {
  return (method) => {
    const name = method.startsWith('/') ? method.slice(1) : method;
    return methodAttribute ? methodAttribute(name) : name;
  };
}

/**
 * The `grpc.target` of a call's records: the one given for all, else the call's own in canonical form, mapped by
 * `mapTarget` when given (none when the event has none). The last target's value is kept: a client's calls all have
 * the same.
 */
function callTargetAttribute(
  given: string | undefined,
  mapTarget: ((target: string) => string) | undefined,
): (event: { target?: string }) => string | undefined {
  if (given !== undefined) {
    return () => given;
  }
  let lastTarget = '';
  let lastValue = '';
  return ({ target }) => {
    if (!target) {
      return undefined;
    }
    if (target !== lastTarget) {
      const canonical = canonicalTarget(target);
      lastValue = mapTarget ? mapTarget(canonical) : canonical;
      lastTarget = target;
    }
    return lastValue;
  };
}

/**
 * Removes a gauge's callback once its source (an AdaptiveHedging, or the delays learned from events) is collected,
 * without waiting for the next collection (which may never come, e.g. with no reader). Holds the removers, which
 * reach the gauge but not the source.
 */
const removeWhenCollected = new FinalizationRegistry<() => void>((remove) => remove());

/**
 * Creates the `hedging_delay` gauge on `meter`, reading `source` through a `WeakRef`: the meter keeps the callback
 * for as long as it lives, so the callback must not keep the AdaptiveHedging (nor `createRetryMetrics`' closure,
 * with its listener) alive. Once the AdaptiveHedging is gone the callback reports nothing and removes itself.
 * Module-level for the same reason: a closure made inside `createRetryMetrics` would hold its whole scope.
 * Returns the function that removes the callback. @internal
 */
function observeHedgingDelays(
  meter: Meter,
  source: WeakRef<DelaySource>,
  target: string | undefined,
  methodName: (method: string) => string,
): () => void {
  const gauge: ObservableGauge = meter.createObservableGauge(RETRY_METRIC_NAMES.hedgingDelay, {
    description:
      "Adaptive hedging delay of a method (and target): the delay its calls' hedges are scheduled with, the configured hedgingDelay until enough calls have answered.",
    unit: 's',
    valueType: ValueType.DOUBLE,
  });
  const callback: ObservableCallback = (result) => {
    const delays = source.deref();
    if (delays === undefined) {
      gauge.removeCallback(callback);
      return;
    }
    if (delays instanceof LearnedDelays) {
      for (const learned of delays.entries()) {
        result.observe(learned.delayMs / 1000, methodAttributes(methodName(learned.method), learned.target));
      }
      return;
    }
    for (const [method, delayMs] of delays.currentDelays()) {
      result.observe(delayMs / 1000, methodAttributes(methodName(method), target));
    }
  };
  gauge.addCallback(callback);
  return () => gauge.removeCallback(callback);
}

/**
 * Records gRFC A96's per-call retry metrics from the retry interceptor's events, once per call that had a
 * retry or hedging policy (calls without one produce no events):
 *
 * - `grpc.client.call.retries` (`{retry}`): retries sent; recorded only when > 0.
 * - `grpc.client.call.hedges` (`{hedge}`): hedges sent; recorded only when > 0.
 * - `grpc.client.call.retry_delay` (`s`): time spent with no attempt in flight; recorded for every call, 0 too.
 *
 * Attributes: `grpc.method` (`pkg.Service/Method`) and `grpc.target` (the call's target in A66's canonical form,
 * or the `target` option), which A96 requires (as A66 defines them); and `grpc.status` (code name, e.g.
 * `UNAVAILABLE`), which A96 does not list: this package adds it, with A66's name and values.
 *
 * `grpc.client.call.transparent_retries` is not recorded: grpc-js retries transparently below the interceptor
 * layer, where this package cannot see it, so any value would be made up.
 *
 * One `RetryMetrics` can serve several interceptors (call ids in events are unique within the process), but the
 * `hedging_delay` gauge it reads from events then mixes their learned delays: give each interceptor its own.
 * Several of them on the same meter feed the same instruments.
 *
 * ```ts
 * const retryMetrics = createRetryMetrics();
 * const interceptor = createRetryInterceptor(config, { onEvent: retryMetrics.onEvent });
 * ```
 */
export function createRetryMetrics(options: RetryMetricsOptions = {}): RetryMetrics {
  checkOptions(options);
  const target = options.target;
  const methodName = methodNamer(options.methodAttribute);
  // Held strongly here, by this closure (and so by onEvent): the gauge's callback holds it only through a WeakRef.
  const adaptiveHedging = options.adaptiveHedging;
  const countAdvice = { explicitBucketBoundaries: [...COUNT_BUCKET_BOUNDARIES] };
  /** Delays learned from the events, once one came (none when an AdaptiveHedging is given). */
  let learned: LearnedDelays | undefined;
  /** Puts the `hedging_delay` gauge on `instruments`' meter, reading the AdaptiveHedging or the learned delays. */
  const startGauge = (on: Instruments): void => {
    const source: DelaySource | undefined = adaptiveHedging ?? learned;
    if (source === undefined) {
      return;
    }
    const remove = observeHedgingDelays(on.meter, new WeakRef(source), target, methodName);
    removeWhenCollected.register(source, remove, remove);
    on.stopGauge = () => {
      removeWhenCollected.unregister(remove);
      remove();
    };
  };
  const createInstruments = (meter: Meter): Instruments => {
    const made: Instruments = {
      meter,
      stopGauge: () => {},
      refused: meter.createCounter(RETRY_METRIC_NAMES.refusedAttempts, {
        description:
          'Retries and hedges a gate (retry throttle, retry budget, hedge budget, your own) refused: the attempts throttling saved.',
        unit: '{attempt}',
        valueType: ValueType.INT,
      }),
      retry: meter.createHistogram(RETRY_METRIC_NAMES.retries, {
        description: 'Retries sent by a client call (recorded only for calls that retried).',
        unit: '{retry}',
        valueType: ValueType.INT,
        advice: countAdvice,
      }),
      hedge: meter.createHistogram(RETRY_METRIC_NAMES.hedges, {
        description: 'Hedges sent by a client call (recorded only for calls that hedged).',
        unit: '{hedge}',
        valueType: ValueType.INT,
        advice: countAdvice,
      }),
      retryDelay: meter.createHistogram(RETRY_METRIC_NAMES.retryDelay, {
        description: 'Time a client call spent waiting, with no attempt in flight, to send its next attempt.',
        unit: 's',
        valueType: ValueType.DOUBLE,
        advice: { explicitBucketBoundaries: [...DELAY_BUCKET_BOUNDARIES] },
      }),
    };
    startGauge(made);
    return made;
  };
  // A meter or provider given is used for good. Otherwise the global provider is followed: one registered after
  // this was created (the OpenTelemetry API has no proxy for metrics, unlike traces) is used from the next call on.
  const fixedMeter = options.meter ?? options.meterProvider?.getMeter(RETRY_METER_NAME, packageVersion());
  let globalProvider: MeterProvider | undefined;
  let current: Instruments | undefined;
  let closed = false;
  const instruments = (): Instruments => {
    if (fixedMeter !== undefined) {
      current ??= createInstruments(fixedMeter);
      return current;
    }
    const provider = metrics.getMeterProvider();
    if (current === undefined || provider !== globalProvider) {
      // Taken as the provider only once its instruments are made: one whose getMeter threw is asked again next
      // call. The gauge follows the provider as the histograms do: the one on the provider left behind is removed.
      const made = createInstruments(provider.getMeter(RETRY_METER_NAME, packageVersion()));
      current?.stopGauge();
      globalProvider = provider;
      current = made;
    }
    return current;
  };
  instruments();
  const maxTracked = options.maxTrackedCalls ?? DEFAULT_MAX_TRACKED_CALLS;
  /** callId → which histogram counts the call's extra attempts; set at its first retry or hedge. */
  const tracked = new Map<number, 'retry' | 'hedge'>();

  const targetOf = callTargetAttribute(target, options.targetAttribute);
  const attributesOf = (event: CallEndEvent): Attributes =>
    methodAttributes(methodName(event.method), targetOf(event), {
      'grpc.status': statusLabel(event.code),
    });

  const onEvent: RetryEventListener = (event: RetryEvent) => {
    if (closed) {
      return;
    }
    if (event.type === 'attempt-start') {
      if (event.kind === 'original' || tracked.has(event.callId)) {
        return;
      }
      if (tracked.size >= maxTracked) {
        const oldest = tracked.keys().next();
        if (!oldest.done) {
          tracked.delete(oldest.value);
        }
      }
      tracked.set(event.callId, event.kind === 'hedge' ? 'hedge' : 'retry');
    } else if (event.type === 'hedge-scheduled') {
      if (event.reason === 'adaptive-delay' && adaptiveHedging === undefined) {
        if (learned === undefined) {
          // Instruments made now (a new global provider) must not start the gauge before this does.
          const on = instruments();
          learned = new LearnedDelays();
          startGauge(on);
        }
        learned.set(event.method, targetOf(event), event.delayMs);
      }
    } else if (event.type === 'throttled') {
      const attributes = methodAttributes(methodName(event.method), targetOf(event), {
        'grpc_retry_hedging.kind': event.kind,
        'grpc_retry_hedging.gate': event.gate,
      });
      instruments().refused.add(1, attributes);
    } else if (event.type === 'call-end') {
      const kind = tracked.get(event.callId);
      if (kind !== undefined) {
        tracked.delete(event.callId);
      }
      const attributes = attributesOf(event);
      const extraAttempts = event.attempts - 1;
      const recorded = instruments();
      if (kind !== undefined && extraAttempts > 0) {
        recorded[kind].record(extraAttempts, attributes);
      }
      recorded.retryDelay.record(Math.max(0, event.retryDelayMs) / 1000, attributes);
    }
  };

  return {
    onEvent,
    combine(other?: RetryEventListener): RetryEventListener {
      return combineListeners(onEvent, other, 'RetryMetrics');
    },
    get trackedCalls() {
      return tracked.size;
    },
    close(): void {
      closed = true;
      current?.stopGauge();
      tracked.clear();
    },
  };
}
