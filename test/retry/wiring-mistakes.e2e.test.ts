/**
 * Two wiring mistakes of a first hour, named for what they are: a factory put in `interceptors` without being
 * called (grpc-js then calls it per call, with call options where the config goes), and a file name passed where
 * JSON text goes.
 */
import type * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChannelOptions } from '../../src/config/channel-options.js';
import { isServiceConfigError } from '../../src/config/service-config-error.js';
import { createRequestIdInterceptor } from '../../src/request-id/request-id-interceptor.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { FlakyServer } from '../../src/testing/index.js';
import { createAdaptiveThrottleInterceptor } from '../../src/throttle/adaptive-throttle.js';
import { testClient, unary } from '../helpers/harness.js';

let server: FlakyServer;
beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

describe('a factory put in interceptors without the call', () => {
  it.each([
    ['createRetryInterceptor', createRetryInterceptor, 'createRetryInterceptor(config)'],
    [
      'createAdaptiveThrottleInterceptor',
      createAdaptiveThrottleInterceptor,
      'createAdaptiveThrottleInterceptor()',
    ],
    ['createRequestIdInterceptor', createRequestIdInterceptor, 'createRequestIdInterceptor()'],
  ])('%s: the call throws a TypeError that says to call it', async (name, factory, call) => {
    // What plain JavaScript (or a cast) lets through.
    const client = testClient(server.address, [factory as unknown as grpc.Interceptor]);
    try {
      const attempt = unary(client, `wiring-${name}`);
      await expect(attempt).rejects.toThrow(TypeError);
      await expect(attempt).rejects.toThrow(
        `${name} was put in a client's interceptors itself, so grpc-js called it for the call /grpc_retry_hedging.testing.v1.FlakyTest/Unary: it makes the interceptor. Call it once, and put what it returns there: interceptors: [${call}]`,
      );
    } finally {
      client.close();
    }
  });
});

describe('a file name where JSON text goes', () => {
  it.each(['service-config.json', 'config/Retry.JSON', './service-config', '../x', 'C:\\configs\\a.json'])(
    '%s: the syntax error advises loadServiceConfig',
    (name) => {
      for (const use of [() => createRetryInterceptor(name), () => createChannelOptions(name)]) {
        let error: unknown;
        try {
          use();
        } catch (e) {
          error = e;
        }
        expect(isServiceConfigError(error)).toBe(true);
        expect((error as Error).message).toContain(
          `looks like a file name: read the file with loadServiceConfig(${JSON.stringify(name)})`,
        );
      }
    },
  );

  it.each(['{"methodConfig": [}', 'methodConfig', 'not json at all.json', '[1, 2'])(
    '%s: no advice for text that is not a file name',
    (text) => {
      expect(() => createRetryInterceptor(text)).toThrow(/invalid JSON/);
      expect(() => createRetryInterceptor(text)).not.toThrow(/loadServiceConfig/);
    },
  );
});

describe('a config that is neither text nor an object', () => {
  it.each([
    [5, '5'],
    [undefined, 'nothing'],
    [null, 'null'],
    [true, 'true'],
  ])(
    'createRetryInterceptor(%j) names itself and what it got, as createChannelOptions does',
    (config, shown) => {
      // It said only "a service config must be a JSON object, got 5", naming no function.
      expect(() => createRetryInterceptor(config as never)).toThrow(
        new TypeError(
          `createRetryInterceptor: config must be JSON text or an object (a service config, or what parseServiceConfig or loadServiceConfig returned), got ${shown}`,
        ),
      );
    },
  );
});
