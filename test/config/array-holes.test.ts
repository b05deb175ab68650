/**
 * A config given as an object may have arrays with holes (JSON text cannot): each is an error naming the array and
 * the index, before any rule runs, where the rules used to skip holes and pass the config on.
 */
import { describe, expect, it } from 'vitest';
import { createChannelOptions } from '../../src/config/channel-options.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { validateServiceConfig } from '../../src/config/validate-service-config.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const { retryPolicy } = RETRY_UNAVAILABLE_POLICY;

// biome-ignore lint/suspicious/noSparseArray: the hole is the point
const codesWithHole = ['UNAVAILABLE', , 'ABORTED'];

describe('arrays with holes in a config object', () => {
  it.each([
    ['methodConfig', { methodConfig: new Array(2) }, 0],
    ['methodConfig[0].name', { methodConfig: [{ name: new Array(2), retryPolicy }] }, 0],
    [
      'methodConfig[0].retryPolicy.retryableStatusCodes',
      {
        methodConfig: [{ name: [{}], retryPolicy: { ...retryPolicy, retryableStatusCodes: codesWithHole } }],
      },
      1,
    ],
  ])('%s: an error at the array, naming the index', (path, config, index) => {
    const { config: valid, errors } = validateServiceConfig(config);
    expect(valid).toBeUndefined();
    expect(errors).toEqual([{ path, message: expect.stringContaining(`has a hole at index ${index}`) }]);
    expect(() => parseServiceConfig(config)).toThrow(`${path}: has a hole at index ${index}`);
    expect(() => createChannelOptions(config)).toThrow(`${path}: has a hole`);
    expect(() => createRetryInterceptor(config)).toThrow(`${path}: has a hole`);
  });

  it('a sparse array of length 1e9 is refused at once', () => {
    const started = Date.now();
    expect(() => parseServiceConfig({ methodConfig: new Array(1e9) })).toThrow(
      'methodConfig: has a hole at index 0',
    );
    // A generous bound for a loaded machine: the rules took minutes over this array.
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('explicit null and undefined elements keep their own errors', () => {
    expect(() => parseServiceConfig({ methodConfig: [null] })).toThrow(/methodConfig\[0\]/);
    expect(() => parseServiceConfig({ methodConfig: [undefined] })).toThrow(/methodConfig\[0\]/);
    expect(() => parseServiceConfig({ methodConfig: [undefined] })).not.toThrow(/hole/);
  });
});
