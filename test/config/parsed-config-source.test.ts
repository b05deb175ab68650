/**
 * A parsed config (what `parseServiceConfig` and `loadServiceConfig` return) keeps its source: the config as
 * written, so that `createChannelOptions` takes it as well as the JSON, and the likely mistakes found in it, so that
 * `createRetryInterceptor` reports them whichever form it is handed. And a forgotten `await` is an error, not a
 * config that configures nothing.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createChannelOptions } from '../../src/config/channel-options.js';
import { loadServiceConfigAsync } from '../../src/config/load-service-config.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { validateServiceConfig } from '../../src/config/validate-service-config.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { oneEntryConfig, RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';
import { captureWarnings } from '../helpers/warnings.js';

const config = oneEntryConfig(
  'helloworld.Greeter',
  RETRY_UNAVAILABLE_POLICY,
  {},
  {
    loadBalancingConfig: [{ round_robin: {} }],
  },
);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('createChannelOptions with a parsed config', () => {
  it('gives what the config as written gives, from an object or from JSON text', () => {
    expect(createChannelOptions(parseServiceConfig(config))).toEqual(createChannelOptions(config));
    const text = JSON.stringify(config);
    expect(createChannelOptions(parseServiceConfig(text), { avoidTriedReplicas: true })).toEqual(
      createChannelOptions(text, { avoidTriedReplicas: true }),
    );
  });

  it("keeps a copy: the caller's object changed after parsing does not change the channel's config", () => {
    const mine = structuredClone(config);
    const parsed = parseServiceConfig(mine);
    Object.assign(mine, { loadBalancingConfig: [{ pick_first: {} }] });
    expect(JSON.parse(String(createChannelOptions(parsed)['grpc.service_config']))).toMatchObject({
      loadBalancingConfig: [{ round_robin: {} }],
    });
  });

  it('says why it cannot use a config parsed from an object that is not JSON (a cycle, a BigInt)', () => {
    // The parser ignores the unknown field, but the config as written cannot be copied for the channel: the error
    // said the config "came from another version of grpc-retry-hedging", and the object itself gave a bare
    // "Converting circular structure to JSON".
    const cyclic: Record<string, unknown> = { ...config };
    cyclic.self = cyclic;
    const withBigInt = { ...config, big: 1n };
    for (const written of [cyclic, withBigInt]) {
      const expected = expect.objectContaining({
        name: 'TypeError',
        message: expect.stringMatching(
          /^createChannelOptions: the service config is not JSON \(JSON\.stringify: .+\)/,
        ),
      });
      expect(() => createChannelOptions(parseServiceConfig(written))).toThrow(expected);
      expect(() => createChannelOptions(written)).toThrow(expected);
    }
  });

  it('keeps the parsed config reading and serializing as before (the source is not an enumerable field)', () => {
    const parsed = parseServiceConfig(config);
    expect(Object.keys(parsed).sort()).toEqual(['methodConfig']);
    expect(JSON.stringify(parsed)).not.toContain('round_robin');
  });
});

describe('likely mistakes, whichever form the interceptor is handed', () => {
  it('a misspelled field in a config parsed beforehand is still reported', () => {
    const warnings = captureWarnings();
    createRetryInterceptor(parseServiceConfig({ methodConfigs: [{ name: [{}] }] }));
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringContaining('methodConfigs is not a service-config field'),
    ]);
  });

  it('a clean config says nothing', () => {
    const warnings = captureWarnings();
    createRetryInterceptor(parseServiceConfig(config));
    expect(warnings).toEqual([]);
  });
});

describe('a forgotten await', () => {
  it('a Promise is not a config: every entry point says so', async () => {
    const promise = loadServiceConfigAsync('examples/greeter-service-config.json');
    expect(() => createRetryInterceptor(promise as never)).toThrow(
      'is a Promise, not a service config: await loadServiceConfigAsync(...) before passing its result',
    );
    expect(() => parseServiceConfig(promise as never)).toThrow(/is a Promise/);
    expect(validateServiceConfig(promise as never).errors).toEqual([
      expect.objectContaining({ path: '', message: expect.stringMatching(/^is a Promise/) }),
    ]);
    await promise;
  });
});
