/**
 * The service-config JSON types: an inline config is type-checked (a misspelled field or a number where a duration
 * goes does not compile, as `npm run typecheck` enforces on the `@ts-expect-error` lines), while every config the
 * parser accepts still fits, a `.json` file imported as a module among them.
 */
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import shippedConfig from '../../examples/service-config.json';
import { createChannelOptions } from '../../src/config/channel-options.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { ServiceConfigError } from '../../src/config/service-config-error.js';
import type {
  HedgingPolicyJson,
  RetryPolicyJson,
  ServiceConfigJson,
  StatusCodeJson,
} from '../../src/config/service-config-json.js';
import { withRetryOptions } from '../../src/retry/call-options.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { captureWarnings } from '../helpers/warnings.js';

const retryPolicy: RetryPolicyJson = {
  maxAttempts: 3,
  initialBackoff: '0.1s',
  maxBackoff: '1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE', 4, 'resource_exhausted'],
};

describe('ServiceConfigJson', () => {
  it('takes every shape of config the parser accepts', () => {
    const configs: ServiceConfigJson[] = [
      { $schema: './schema.json', methodConfig: [{ name: [{}], retryPolicy }] },
      { methodConfig: [{ name: [{ service: 'a.B', method: 'C' }], retryPolicy, timeout: '2s' }] },
      {
        methodConfig: [
          {
            name: [{ service: 'a.B' }],
            retryPolicy: { ...retryPolicy, retryableStatusCodes: [], perAttemptRecvTimeout: '0.5s' },
          },
        ],
      },
      { loadBalancingConfig: [{ pick_first: { shuffleAddressList: true } }] },
      { loadBalancingPolicy: 'round_robin', healthCheckConfig: { serviceName: 'a.B' } },
      {
        methodConfig: [{ name: [{}], maxRequestMessageBytes: 1024, maxResponseMessageBytes: '2048' }],
        retryThrottling: { maxTokens: 10, tokenRatio: 0.1 },
      },
    ];
    for (const config of configs) {
      expect(() => parseServiceConfig(config), JSON.stringify(config)).not.toThrow();
    }
  });

  it('takes a config written as const', () => {
    const config = {
      methodConfig: [
        {
          name: [{ service: 'a.B' }],
          retryPolicy: { ...retryPolicy, retryableStatusCodes: ['UNAVAILABLE'] },
        },
      ],
      loadBalancingConfig: [{ round_robin: {} }],
    } as const;
    expectTypeOf(config).toExtend<ServiceConfigJson>();
    expect(typeof createRetryInterceptor(config)).toBe('function');
    expect(createChannelOptions(config)).toHaveProperty('grpc.service_config');
  });

  it('takes a config imported from a .json file, whose codes TypeScript reads as plain strings', () => {
    expectTypeOf(shippedConfig).toExtend<ServiceConfigJson>();
    expect(typeof createRetryInterceptor(shippedConfig)).toBe('function');
    expect(createChannelOptions(shippedConfig, { onWarning: () => {} })).toHaveProperty(
      'grpc.service_config',
    );
  });

  it('does not compile a misspelled field or a value of the wrong type in an inline config', () => {
    const refused = [
      () =>
        createRetryInterceptor({
          // @ts-expect-error a duration written as a number
          methodConfig: [{ name: [{}], hedgingPolicy: { maxAttempts: 3, hedgingDelay: 50 } }],
        }),
      // @ts-expect-error a retryPolicy without its backoff
      () => createRetryInterceptor({ methodConfig: [{ name: [{}], retryPolicy: { maxAttempts: 3 } }] }),
      // @ts-expect-error name must be a list
      () => createChannelOptions({ methodConfig: [{ name: { service: 'a.B' } }] }),
      // @ts-expect-error a per-call policy with a misspelled field
      () => withRetryOptions({ policy: { hedgingPolicy: { maxAttempts: 2, hedgeDelay: '0.1s' } } }),
    ];
    // Each fails at run time too, as it would for a caller without types.
    for (const attempt of refused) {
      expect(attempt).toThrow(ServiceConfigError);
    }
    // A misspelled field only warns at run time (unknown fields are ignored, as the spec requires): the type is
    // what stops it before the calls go out without retries.
    const warnings = captureWarnings();
    // @ts-expect-error a misspelled field name
    createRetryInterceptor({ methodConfig: [{ name: [{}], retryPolcy: retryPolicy }] });
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_CONFIG_FIELD']);
    vi.restoreAllMocks();
  });

  it('reads status codes as names or numbers, with the names offered', () => {
    expectTypeOf<'UNAVAILABLE'>().toExtend<StatusCodeJson>();
    expectTypeOf<14>().toExtend<StatusCodeJson>();
    expectTypeOf<boolean>().not.toExtend<StatusCodeJson>();
    const hedging: HedgingPolicyJson = { maxAttempts: 2 };
    expect(
      parseServiceConfig({ methodConfig: [{ name: [{}], hedgingPolicy: hedging }] }).methodConfig[0],
    ).toMatchObject({ hedgingPolicy: { hedgingDelayMs: 0 } });
  });
});
