/**
 * Every options object of the public API admits an explicit `undefined` wherever it admits leaving a key out, in
 * its types (this file is type-checked with `exactOptionalPropertyTypes`, as the tsconfig sets it) and at run time
 * (an `undefined` value means the default, exactly as a missing key does). Code such as
 * `createRetryInterceptor(config, { clock: options.clock })`, with `options.clock` possibly undefined, is what
 * users write; under `exactOptionalPropertyTypes` it did not compile before these types said `| undefined`.
 *
 * Each key list below is checked against its type both ways (`satisfies Record<keyof Required<T>, true>`), so a
 * new option must be added here and is then held to the same rule.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AdaptiveHedging,
  type AdaptiveHedgingOptions,
  type AdaptiveThrottleOptions,
  AdaptiveThrottleState,
  type CallRetryOptions,
  CancelRateLimiter,
  type CancelRateLimiterOptions,
  type ChannelOptionsSettings,
  createAdaptiveThrottleInterceptor,
  createChannelOptions,
  createRequestIdInterceptor,
  createRetryInterceptor,
  encodeRetryInfoStatus,
  HedgeBudget,
  type HedgeBudgetConstructorOptions,
  type HedgingPolicyJson,
  type MethodConfigJson,
  type MethodNameJson,
  parseServiceConfig,
  type RequestIdInterceptorOptions,
  RetryBudget,
  type RetryBudgetOptions,
  type RetryInfoStatusInit,
  type RetryInterceptorOptions,
  type RetryPolicyJson,
  type ServiceConfigJson,
  withRetryOptions,
} from '../../src/index.js';
import {
  createRetryMetrics,
  createRetryTracing,
  type RetryMetricsOptions,
  type RetryTracingOptions,
} from '../../src/otel/index.js';
import {
  type AttemptScript,
  FlakyCluster,
  type FlakyClusterOptions,
  FlakyServer,
  type FlakyServerOptions,
  type ReplicaScript,
} from '../../src/testing/index.js';
import type { AdaptiveThrottleRuleOptions } from '../../src/throttle/adaptive-throttle-rule.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

/** The keys of `T` that may be left out. */
type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T];
/** The optional keys of `T` to which an explicit `undefined` cannot be assigned (never, for a type that admits it). */
type KeysRefusingUndefined<T> = {
  [K in OptionalKeys<T>]-?: { [P in K]: undefined } extends Pick<T, K> ? never : K;
}[OptionalKeys<T>];
/** Compiles only when `T` admits `undefined` for every key it lets you leave out. */
function admitsUndefined<T>(
  ..._none: KeysRefusingUndefined<T> extends never ? [] : [KeysRefusingUndefined<T>]
) {}

admitsUndefined<RetryInterceptorOptions>();
admitsUndefined<CallRetryOptions>();
admitsUndefined<ChannelOptionsSettings>();
admitsUndefined<AdaptiveHedgingOptions>();
admitsUndefined<HedgeBudgetConstructorOptions>();
admitsUndefined<CancelRateLimiterOptions>();
admitsUndefined<RetryBudgetOptions>();
admitsUndefined<AdaptiveThrottleOptions>();
admitsUndefined<AdaptiveThrottleRuleOptions>();
admitsUndefined<RequestIdInterceptorOptions>();
admitsUndefined<RetryInfoStatusInit>();
admitsUndefined<ServiceConfigJson>();
admitsUndefined<MethodConfigJson>();
admitsUndefined<MethodNameJson>();
admitsUndefined<RetryPolicyJson>();
admitsUndefined<HedgingPolicyJson>();
admitsUndefined<RetryMetricsOptions>();
admitsUndefined<RetryTracingOptions>();
admitsUndefined<FlakyServerOptions>();
admitsUndefined<FlakyClusterOptions>();
admitsUndefined<ReplicaScript>();
admitsUndefined<AttemptScript>();

/** An object with every listed key set to `undefined`, typed as `T` (which must admit it). */
function allUndefined<T>(keys: Record<keyof Required<T>, true>): T {
  return Object.fromEntries(Object.keys(keys).map((key) => [key, undefined])) as T;
}

const SERVICE = 'pkg.v1.Greeter';
const RETRY_POLICY = RETRY_UNAVAILABLE_POLICY.retryPolicy;
/** The keys the retry budget and the hedge budget share. */
const BUDGET_KEYS = {
  maxExtraLoad: true,
  minPerSecond: true,
  ttlMs: true,
  chanceSd: true,
  clock: true,
} as const;
/** The adaptive throttle rule's keys, which the throttle interceptor takes too. */
const RULE_KEYS = {
  k: true,
  windowMs: true,
  windowBins: true,
  padding: true,
  maxRejectionProbability: true,
  retries: true,
} as const;
/** What a budget resolved its options to. */
const budgetFields = (b: RetryBudget | HedgeBudget) => [b.maxExtraLoad, b.minPerSecond, b.ttlMs, b.chanceSd];
const CONFIG: ServiceConfigJson = {
  methodConfig: [{ name: [{ service: SERVICE }], retryPolicy: RETRY_POLICY }],
};

describe('an explicit undefined is the default, as a missing key is', () => {
  it('service-config JSON: every optional field of every level', () => {
    const withUndefined: ServiceConfigJson = {
      ...allUndefined<ServiceConfigJson>({
        $schema: true,
        methodConfig: true,
        retryThrottling: true,
        loadBalancingConfig: true,
        loadBalancingPolicy: true,
        healthCheckConfig: true,
      }),
      methodConfig: [
        {
          ...allUndefined<MethodConfigJson>({
            name: true,
            retryPolicy: true,
            hedgingPolicy: true,
            timeout: true,
            waitForReady: true,
            maxRequestMessageBytes: true,
            maxResponseMessageBytes: true,
            maxRequestBytes: true,
            maxResponseBytes: true,
          }),
          name: [{ ...allUndefined<MethodNameJson>({ service: true, method: true }), service: SERVICE }],
          retryPolicy: { ...RETRY_POLICY, perAttemptRecvTimeout: undefined },
        },
        {
          name: [{ service: 'pkg.v1.Other' }],
          hedgingPolicy: {
            ...allUndefined<HedgingPolicyJson>({
              maxAttempts: true,
              hedgingDelay: true,
              nonFatalStatusCodes: true,
            }),
            maxAttempts: 2,
          },
        },
      ],
    };
    const without: ServiceConfigJson = {
      methodConfig: [
        { name: [{ service: SERVICE }], retryPolicy: RETRY_POLICY },
        { name: [{ service: 'pkg.v1.Other' }], hedgingPolicy: { maxAttempts: 2 } },
      ],
    };
    expect(parseServiceConfig(withUndefined)).toEqual(parseServiceConfig(without));
    expect(createChannelOptions(withUndefined)).toEqual(createChannelOptions(without));
  });

  it('the interceptor, per-call options and channel options', () => {
    const options = allUndefined<RetryInterceptorOptions>({
      maxAttemptsLimit: true,
      perRpcBufferBytes: true,
      totalBufferBytes: true,
      gate: true,
      random: true,
      clock: true,
      jitter: true,
      onEvent: true,
      deadlineAwareBackoff: true,
      checkResentRequests: true,
      retryInfo: true,
      adaptiveHedging: true,
      cancelRateLimit: true,
    });
    expect(typeof createRetryInterceptor(CONFIG, options)).toBe('function');
    const perCall = allUndefined<CallRetryOptions>({ enabled: true, policy: true, onEvent: true });
    expect(() => withRetryOptions(perCall)).not.toThrow();
    const settings = allUndefined<ChannelOptionsSettings>({
      transparentRetries: true,
      onWarning: true,
      avoidTriedReplicas: true,
    });
    expect(createChannelOptions(CONFIG, settings)).toEqual(createChannelOptions(CONFIG));
    const requestIds = allUndefined<RequestIdInterceptorOptions>({
      header: true,
      field: true,
      methods: true,
      generate: true,
    });
    expect(typeof createRequestIdInterceptor(requestIds)).toBe('function');
  });

  it('the adaptive hedging, budgets, cancel limiter and throttles resolve to their defaults', () => {
    const hedging = allUndefined<AdaptiveHedgingOptions>({
      maxExtraLoad: true,
      recentCalls: true,
      minDelayMs: true,
      maxDelayMs: true,
      windowMs: true,
      windowBins: true,
      budget: true,
      holdInStalls: true,
      maxMethods: true,
      clock: true,
    });
    expect(new AdaptiveHedging(hedging).options).toEqual(new AdaptiveHedging().options);
    const hedgeBudget = new HedgeBudget(allUndefined<HedgeBudgetConstructorOptions>(BUDGET_KEYS));
    expect(budgetFields(hedgeBudget)).toEqual(budgetFields(new HedgeBudget()));
    const limiter = new CancelRateLimiter(
      allUndefined<CancelRateLimiterOptions>({
        ratePerSecond: true,
        burst: true,
        loserCapMs: true,
        clock: true,
      }),
    );
    const defaultLimiter = new CancelRateLimiter();
    expect([limiter.ratePerSecond, limiter.burst, limiter.loserCapMs]).toEqual([
      defaultLimiter.ratePerSecond,
      defaultLimiter.burst,
      defaultLimiter.loserCapMs,
    ]);
    const budget = new RetryBudget(allUndefined<RetryBudgetOptions>({ ...BUDGET_KEYS, random: true }));
    expect(budgetFields(budget)).toEqual([0.2, 0, 10_000, 0]);
    const rule = allUndefined<AdaptiveThrottleRuleOptions>(RULE_KEYS);
    expect(new AdaptiveThrottleState(rule).config).toEqual(new AdaptiveThrottleState().config);
    const throttle = allUndefined<AdaptiveThrottleOptions>({
      rejectedStatusCodes: true,
      key: true,
      retryLocalRejections: true,
      onEvent: true,
      clock: true,
      random: true,
      ...RULE_KEYS,
    });
    expect(typeof createAdaptiveThrottleInterceptor(throttle)).toBe('function');
  });

  it('a RetryInfo status encodes as without the keys', () => {
    const init = {
      ...allUndefined<RetryInfoStatusInit>({ code: true, message: true, retryDelay: true, details: true }),
      code: grpc.status.UNAVAILABLE,
    };
    expect(encodeRetryInfoStatus(init)).toEqual(encodeRetryInfoStatus({ code: grpc.status.UNAVAILABLE }));
  });

  it('the OpenTelemetry adapters', () => {
    const metrics = createRetryMetrics(
      allUndefined<RetryMetricsOptions>({
        meter: true,
        meterProvider: true,
        target: true,
        targetAttribute: true,
        methodAttribute: true,
        maxTrackedCalls: true,
        adaptiveHedging: true,
      }),
    );
    metrics.close();
    const tracing = createRetryTracing(
      allUndefined<RetryTracingOptions>({
        tracer: true,
        tracerProvider: true,
        propagator: true,
        maxTrackedCalls: true,
      }),
    );
    tracing.close();
    expect([metrics.trackedCalls, tracing.trackedCalls]).toEqual([0, 0]);
  });

  describe('the flaky server and cluster', () => {
    let server: FlakyServer | undefined;
    let cluster: FlakyCluster | undefined;
    afterEach(async () => {
      await server?.stop();
      await cluster?.stop();
      server = undefined;
      cluster = undefined;
    });

    it('start with every option undefined, and a script of undefined fields is a prompt success', async () => {
      server = await FlakyServer.start(
        allUndefined<FlakyServerOptions>({
          proto: true,
          includeDirs: true,
          keepCase: true,
          services: true,
          serveFlakyTest: true,
          methodScripts: true,
          respond: true,
          port: true,
          host: true,
          scripts: true,
          onAttempt: true,
          onAttemptEnd: true,
          requestIdHeader: true,
          requestIdField: true,
          serverOptions: true,
          maxRecordedAttempts: true,
          maxRecordedBytes: true,
          maxTrackedCallIds: true,
        }),
      );
      server.script('c1', [
        allUndefined<AttemptScript>({
          status: true,
          details: true,
          delayMs: true,
          pushback: true,
          retryInfoMs: true,
          trailers: true,
          sendHeaders: true,
          responses: true,
          failOnFirstMessage: true,
          endBeforeHalfClose: true,
          echo: true,
          response: true,
        }),
      ]);
      const { createFlakyTestClient, CALL_ID_METADATA_KEY } = await import('../../src/testing/index.js');
      const client = createFlakyTestClient(server.address);
      const metadata = new grpc.Metadata();
      metadata.set(CALL_ID_METADATA_KEY, 'c1');
      const code = await new Promise<number>((resolve) => {
        client.unary({ payload: 'x' }, metadata, (error) => resolve(error?.code ?? grpc.status.OK));
      });
      client.close();
      expect(code).toBe(grpc.status.OK);
      expect(server.attempts('c1').map((a) => a.endedWith)).toEqual([grpc.status.OK]);
    });

    it('a replica script and cluster options of undefined fields', async () => {
      cluster = await FlakyCluster.start(
        [
          allUndefined<ReplicaScript>({
            delayMs: true,
            status: true,
            failureRate: true,
            down: true,
            slow: true,
          }),
        ],
        allUndefined<FlakyClusterOptions>({
          random: true,
          maxRecordedAttempts: true,
          maxTrackedCallIds: true,
        }),
      );
      expect(cluster.served()).toEqual([0]);
    });
  });
});
