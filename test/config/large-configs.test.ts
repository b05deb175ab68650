/**
 * Configs far larger than any real one (a hostile or broken file handed to `check`, or to the interceptor): time
 * and the warnings' length grow with the input, no faster. The time bounds are generous (a loaded 2-core machine);
 * the code before took 1.2 s for one 100 KB unknown key and 51 s to validate 1 MB of unknown keys.
 */
import { describe, expect, it } from 'vitest';
import { parseJsonSource } from '../../src/config/json-source.js';
import { likelyConfigMistakes } from '../../src/config/likely-config-mistakes.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { validateServiceConfig } from '../../src/config/validate-service-config.js';
import { closestName } from '../../src/util/closest-name.js';

function timed<T>(run: () => T): { result: T; ms: number } {
  const started = performance.now();
  const result = run();
  return { result, ms: performance.now() - started };
}

describe('names far from every candidate', () => {
  it('a 1 MB unknown name is compared in linear time, and near misses are still found', () => {
    const candidates = ['methodConfig', 'retryThrottling', 'loadBalancingConfig', 'healthCheckConfig'];
    const { result, ms } = timed(() => closestName('x'.repeat(1_000_000), candidates));
    expect(result).toBeUndefined();
    expect(ms).toBeLessThan(2000);
    expect(closestName('methodConfigss', candidates)).toBe('methodConfig');
    expect(closestName('retryThrotling', candidates)).toBe('retryThrottling');
  });

  it('a 300 KB unknown key or status name: parsed well within a second', () => {
    const longKey = `{"${'x'.repeat(300_000)}": 1}`;
    const longStatus = `{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":3,"initialBackoff":"0.1s","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":["${'U'.repeat(300_000)}"]}}]}`;
    expect(timed(() => parseServiceConfig(longKey)).ms).toBeLessThan(1000);
    const status = timed(() => validateServiceConfig(longStatus));
    expect(status.result.errors).toHaveLength(1);
    expect(status.ms).toBeLessThan(1000);
  });
});

describe('an object of many keys', () => {
  const manyKeys = (count: number) =>
    `{${Array.from({ length: count }, (_, i) => `"k${i}x": 1`).join(',\n')}}`;

  it('every unknown key is located in linear time', () => {
    const { result, ms } = timed(() => validateServiceConfig(manyKeys(40_000)));
    expect(result.warnings).toHaveLength(40_000);
    expect(result.warnings.at(-1)).toMatchObject({ path: 'k39999x', line: 40_000 });
    expect(ms).toBeLessThan(10_000);
  });

  it('a key written twice in a large object is located where JSON.parse takes it from: the last one', () => {
    const keys = Array.from({ length: 40 }, (_, i) => `"k${i}": ${i}`);
    const text = `{${[...keys, '"k3": "last"'].join(',\n')}}`;
    const source = parseJsonSource(text);
    if (!source.ok) throw new Error('does not parse');
    expect(source.locate(['k3'])).toMatchObject({ line: 41 });
    expect(source.locate(['k39'])).toMatchObject({ line: 40 });
  });

  it("the interceptor's warning lists ten mistakes, then how many more", () => {
    const config = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`methodConfig${i}x`, []]));
    const listed = likelyConfigMistakes(config, parseServiceConfig(config));
    expect(listed).toHaveLength(11);
    expect(listed.at(-1)).toMatch(
      /^and 15 more \(`grpc-retry-hedging check` on the config lists them all\)$/,
    );
    const noneKnown = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`zz${i}`, 1]));
    const [only] = likelyConfigMistakes(noneKnown, parseServiceConfig(noneKnown));
    expect(only).toMatch(/\(zz0, zz1, .*, zz9, and 15 more\)/);
  });
});
