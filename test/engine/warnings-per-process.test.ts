/**
 * Interceptors made per request (production-hygiene audit): a warning they all give is given once per process, not
 * once per interceptor, and the 1,000th interceptor says that each starts afresh (400 interceptors with the same
 * misspelt field gave 400 warnings; a throttle per interceptor let an outage's retries through at 5 attempts a call).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createChannelOptions } from '../../src/config/channel-options.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { engineCall, retryPolicy } from '../helpers/engine.js';
import { captureWarnings } from '../helpers/warnings.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('warnings of interceptors made per request', () => {
  it('the same config mistake, met by many interceptors, is given once', () => {
    const warnings = captureWarnings();
    const config = { methodConfig: [{ name: [{ service: 'test.Svc' }], retryPolcy: {} }] };
    for (let i = 0; i < 50; i++) {
      createRetryInterceptor(config);
    }
    expect(warnings.filter((w) => w.code === 'GRPC_RETRY_HEDGING_CONFIG_FIELD')).toHaveLength(1);
  });

  it('a listener made anew for every call, throwing the same error, is reported once', () => {
    const warnings = captureWarnings();
    for (let i = 0; i < 20; i++) {
      const h = engineCall(retryPolicy(), {
        interceptor: {
          onEvent: () => {
            throw new Error('log sink down');
          },
        },
      });
      h.attempt(0).succeed();
    }
    expect(warnings.filter((w) => w.code === 'GRPC_RETRY_HEDGING_LISTENER_ERROR')).toHaveLength(1);
  });

  it('the 1,000th interceptor of the process warns once that each starts afresh', () => {
    const warnings = captureWarnings();
    const config = retryPolicy();
    for (let i = 0; i < 1_100; i++) {
      createRetryInterceptor(config);
    }
    const many = warnings.filter((w) => w.code === 'GRPC_RETRY_HEDGING_MANY_INTERCEPTORS');
    expect(many).toHaveLength(1);
    expect(many[0]?.message).toMatch(/retryThrottling tokens/);
    expect(many[0]?.message).toMatch(/Make one interceptor per client/);
  });

  it('a random source made anew for every interceptor, failing the same way, is reported once', () => {
    const warnings = captureWarnings();
    for (let i = 0; i < 20; i++) {
      const h = engineCall(retryPolicy(), {
        interceptor: {
          random: () => {
            throw new Error('rng broke');
          },
        },
      });
      h.attempt(0).fail(); // UNAVAILABLE: the backoff draws
    }
    const hooks = warnings.filter((w) => w.code === 'GRPC_RETRY_HEDGING_HOOK_ERROR');
    expect(hooks.map((w) => w.message)).toEqual([
      'grpc-retry-hedging: createRetryInterceptor: options.random threw (rng broke); Math.random is drawn instead; further errors of it are not reported',
    ]);
  });

  it('createChannelOptions called again with the same config warns once for each mistake', () => {
    const warnings = captureWarnings();
    const config = {
      methodConfig: [{ name: [{ service: 'a.A' }], maxRequestMessageBytes: 1000 }],
      loadBalancingConfig: [{ round_robbin: {} }],
    };
    for (let i = 0; i < 3; i++) {
      createChannelOptions(config);
    }
    expect(warnings.map((w) => w.code).sort()).toEqual([
      'GRPC_RETRY_HEDGING_LB_POLICY',
      'GRPC_RETRY_HEDGING_MESSAGE_LIMIT',
    ]);
  });
});
