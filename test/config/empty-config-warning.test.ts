/**
 * A config that gives no call a policy is said once (code GRPC_RETRY_HEDGING_EMPTY_CONFIG), not left silent: an
 * interceptor whose service config has no methodConfig entries, at the first call with no policy of its own; and
 * `serviceConfigFromProtos` when no method has a level given a policy (most protos mark none).
 */
import type { InterceptingCall, InterceptorOptions } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';
import { captureWarnings } from '../helpers/warnings.js';

const CODE = 'GRPC_RETRY_HEDGING_EMPTY_CONFIG';

// Each test gets fresh modules: the warnings are once per process.
beforeEach(() => vi.resetModules());
afterEach(() => vi.restoreAllMocks());

async function interceptorModule() {
  return {
    ...(await import('../../src/retry/retry-interceptor.js')),
    ...(await import('../../src/retry/call-options.js')),
  };
}

/** Runs one call through `interceptor` with a next call that is never started: the no-policy path returns it. */
function call(
  interceptor: ReturnType<Awaited<ReturnType<typeof interceptorModule>>['createRetryInterceptor']>,
  extra: object = {},
) {
  const next = {} as InterceptingCall;
  const options = { method_definition: { path: '/a.S/Get' }, ...extra } as unknown as InterceptorOptions;
  return interceptor(options, () => next) === next;
}

describe('createRetryInterceptor with no methodConfig entries', () => {
  it('warns at the first call without a policy, once per process, whatever the number of interceptors', async () => {
    const { createRetryInterceptor } = await interceptorModule();
    const warnings = captureWarnings();
    const a = createRetryInterceptor({});
    const b = createRetryInterceptor({ retryThrottling: { maxTokens: 10, tokenRatio: 0.1 } });
    expect(warnings).toEqual([]);
    expect(call(a)).toBe(true);
    expect(call(a)).toBe(true);
    expect(call(b)).toBe(true);
    expect(warnings.filter((w) => w.code === CODE)).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(
      /no methodConfig entries.*neither retried nor hedged.*withRetryOptions/,
    );
  });

  it('says nothing when the call brings its own options, or the config has an entry (even one no call matches)', async () => {
    const { createRetryInterceptor, withRetryOptions } = await interceptorModule();
    const warnings = captureWarnings();
    const empty = createRetryInterceptor({});
    expect(call(empty, withRetryOptions({ enabled: false }))).toBe(true);
    expect(
      call(empty, withRetryOptions({ policy: { retryPolicy: RETRY_UNAVAILABLE_POLICY.retryPolicy } })),
    ).toBe(false);
    const other = createRetryInterceptor({
      methodConfig: [{ name: [{ service: 'other.Service' }], ...RETRY_UNAVAILABLE_POLICY }],
    });
    expect(call(other)).toBe(true);
    expect(warnings.filter((w) => w.code === CODE)).toEqual([]);
  });
});

/** Protos with one service whose methods are marked as given (undefined: not marked). */
function protos(levels: Record<string, number | undefined>) {
  const methods = Object.fromEntries(
    Object.entries(levels).map(([name, level]) => [
      name,
      {
        requestType: 'M',
        responseType: 'M',
        comment: '',
        ...(level === undefined ? {} : { options: { idempotency_level: level } }),
      },
    ]),
  );
  return protobuf.Root.fromJSON({ nested: { shop: { nested: { Orders: { methods }, M: { fields: {} } } } } });
}

describe('serviceConfigFromProtos with no method given a policy', () => {
  const retry = { retryPolicy: RETRY_UNAVAILABLE_POLICY.retryPolicy };

  it('warns when no method is marked with a level that has a policy, and says how to mark them', async () => {
    const { serviceConfigFromProtos } = await import('../../src/idempotency/service-config-from-protos.js');
    const warnings = captureWarnings();
    const config = serviceConfigFromProtos(protos({ Get: undefined, Put: undefined }), { idempotent: retry });
    expect(config.methodConfig).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.code).toBe(CODE);
    expect(warnings[0]!.message).toBe(
      'grpc-retry-hedging: serviceConfigFromProtos: no method gets a policy: of the 2 methods of shop.Orders, 2 not marked, and only NO_SIDE_EFFECTS and IDEMPOTENT have a policy. Mark the methods safe to repeat in the protos (option idempotency_level = IDEMPOTENT, or NO_SIDE_EFFECTS for reads), or give policies.unknown a policy for the methods not marked (a retried call may then run more than once on the server)',
    );
    // Said once per process for the same protos and policies.
    serviceConfigFromProtos(protos({ Get: undefined, Put: undefined }), { idempotent: retry });
    expect(warnings).toHaveLength(1);
  });

  it('names the cause when no level has a policy, when include keeps no method, and when the marks miss', async () => {
    const { serviceConfigFromProtos } = await import('../../src/idempotency/service-config-from-protos.js');
    const warnings = captureWarnings();
    serviceConfigFromProtos(protos({ Get: 1 }), {});
    serviceConfigFromProtos(protos({ Get: 1, Put: 2 }), { idempotent: retry, include: () => false });
    serviceConfigFromProtos(protos({ Get: 1, Put: 2, Add: undefined }), {
      unknown: retry,
      include: (m) => m.method !== 'Add',
    });
    expect(warnings.map((w) => w.message.replace(/^.*?serviceConfigFromProtos: /, ''))).toEqual([
      'no method gets a policy, as no idempotency level has one: give policies.noSideEffects, policies.idempotent or policies.unknown a retryPolicy or hedgingPolicy',
      'no method gets a policy: policies.include returned false for the 2 methods of shop.Orders',
      'no method gets a policy: of the 2 that policies.include kept of the 3 methods of shop.Orders, 1 marked NO_SIDE_EFFECTS, 1 marked IDEMPOTENT, and only IDEMPOTENCY_UNKNOWN has a policy',
    ]);
  });

  it('says nothing when some method gets a policy', async () => {
    const { serviceConfigFromProtos } = await import('../../src/idempotency/service-config-from-protos.js');
    const warnings = captureWarnings();
    const config = serviceConfigFromProtos(protos({ Get: undefined, Put: 2 }), { idempotent: retry });
    expect(config.methodConfig).toHaveLength(1);
    expect(warnings).toEqual([]);
  });
});
