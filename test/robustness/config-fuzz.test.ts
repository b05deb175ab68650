/**
 * The service-config parser fed random and mutated JSON (seeded): it either returns a config or throws a
 * ServiceConfigError, never anything else; whatever it accepts, createRetryInterceptor accepts too; and mutations
 * that keep a config valid are accepted.
 */
import { describe, expect, it } from 'vitest';
import { isServiceConfigError, parseServiceConfig } from '../../src/config/index.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { pick, randomInt, seededRandom } from './helpers.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const BASE: Json = {
  loadBalancingPolicy: 'round_robin',
  methodConfig: [
    {
      name: [
        { service: 'pkg.Svc', method: 'Get' },
        { service: 'pkg.Svc', method: 'List' },
      ],
      retryPolicy: {
        maxAttempts: 4,
        initialBackoff: '0.1s',
        maxBackoff: '1s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE', 'resource_exhausted', 4],
      },
      timeout: '5s',
      waitForReady: true,
      maxRequestMessageBytes: 1024,
      maxResponseMessageBytes: '2048',
    },
    {
      name: [{ service: 'pkg.Svc' }],
      hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.5s', nonFatalStatusCodes: ['UNAVAILABLE', 13] },
    },
    {
      name: [{}],
      retryPolicy: {
        maxAttempts: 2,
        initialBackoff: '0.5s',
        maxBackoff: '2.000000001s',
        backoffMultiplier: 1.5,
        retryableStatusCodes: [14],
      },
    },
  ],
  retryThrottling: { maxTokens: 10, tokenRatio: 0.5466 },
};

const KEYS = [
  'methodConfig',
  'name',
  'service',
  'method',
  'retryPolicy',
  'hedgingPolicy',
  'maxAttempts',
  'initialBackoff',
  'maxBackoff',
  'backoffMultiplier',
  'retryableStatusCodes',
  'hedgingDelay',
  'nonFatalStatusCodes',
  'retryThrottling',
  'maxTokens',
  'tokenRatio',
  'timeout',
  'waitForReady',
  'loadBalancingPolicy',
  'maxRequestMessageBytes',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '',
  'x',
];
const STRINGS = [
  '',
  ' ',
  '0s',
  '-1s',
  '1s',
  '.5s',
  '1.s',
  '0.1',
  '1e3s',
  '315576000001s',
  '99999999999999999999s',
  'NaN',
  's',
  'UNAVAILABLE',
  'unavailable',
  'Ok',
  'OK ',
  '14',
  'constructor',
  '__proto__',
  'toString',
  'pkg.Svc',
  'Get',
  '\u0000',
  '\uD800',
  '🙂',
  '١٢٣',
  'null',
  'true',
  '[]',
  '{}',
  '1000',
];
const NUMBERS = [
  0,
  -0,
  1,
  2,
  5,
  16,
  17,
  -1,
  0.5,
  0.0001,
  0.001,
  1.5,
  999,
  1000,
  1001,
  2 ** 31,
  2 ** 53,
  2 ** 53 + 2,
  1e21,
  1e308,
  -1e308,
  5e-324,
  1e-7,
  3.000000000000001,
];

function randomJson(random: () => number, depth: number): Json {
  const r = random();
  if (depth <= 0 || r < 0.45) {
    const leaf = random();
    if (leaf < 0.1) return null;
    if (leaf < 0.2) return random() < 0.5;
    if (leaf < 0.55)
      return random() < 0.7 ? pick(random, NUMBERS) : (random() - 0.5) * 10 ** randomInt(random, 0, 12);
    return random() < 0.8
      ? pick(random, STRINGS)
      : String.fromCharCode(
          ...Array.from({ length: randomInt(random, 0, 6) }, () => randomInt(random, 0, 0xffff)),
        );
  }
  if (r < 0.7) return Array.from({ length: randomInt(random, 0, 4) }, () => randomJson(random, depth - 1));
  const obj: { [key: string]: Json } = {};
  for (let i = randomInt(random, 0, 5); i > 0; i--) obj[pick(random, KEYS)] = randomJson(random, depth - 1);
  return obj;
}

/** Every path (list of keys/indices) inside a JSON value, the root excluded. */
function paths(value: Json, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [];
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push([...prefix, i], ...paths(v, [...prefix, i]));
    });
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push([...prefix, k], ...paths(v, [...prefix, k]));
  }
  return out;
}

function clone(value: Json): Json {
  return JSON.parse(JSON.stringify(value)) as Json;
}

function parentOf(root: Json, path: Array<string | number>): { parent: Json; key: string | number } {
  let node = root;
  for (const k of path.slice(0, -1)) node = (node as Record<string, Json>)[k as string] as Json;
  return { parent: node, key: path[path.length - 1]! };
}

function retype(random: () => number, value: Json): Json {
  if (typeof value === 'number') return random() < 0.5 ? String(value) : [value];
  if (typeof value === 'string') return random() < 0.5 ? Number(value.replace(/s$/, '')) : { value };
  if (typeof value === 'boolean') return random() < 0.5 ? Number(value) : String(value);
  if (Array.isArray(value))
    return random() < 0.5 ? Object.fromEntries(value.map((v, i) => [String(i), v])) : (value[0] ?? null);
  if (value === null) return random() < 0.5 ? 0 : '';
  return random() < 0.5 ? Object.values(value) : JSON.stringify(value);
}

/** One to three random structural mutations of a copy of `base`. */
function mutate(random: () => number, base: Json): Json {
  const root = clone(base);
  for (let n = randomInt(random, 1, 3); n > 0; n--) {
    const all = paths(root);
    if (all.length === 0) break;
    const { parent, key } = parentOf(root, pick(random, all));
    const list = Array.isArray(parent) ? parent : undefined;
    const record = parent as Record<string, Json>;
    const op = randomInt(random, 0, 6);
    const current = record[key as string] as Json;
    if (op === 6 && typeof current === 'number') {
      record[key as string] = pick(random, NUMBERS); // a boundary value where a number belongs
    } else if (op === 0) {
      if (list) list.splice(key as number, 1);
      else delete record[key as string];
    } else if (op === 1) record[key as string] = randomJson(random, 2);
    else if (op === 2) record[key as string] = retype(random, current);
    else if (op === 3) record[key as string] = null;
    else if (op === 4 && list)
      list.push(clone(current)); // duplicates (a duplicate name is invalid)
    else if (!list) record[pick(random, KEYS)] = randomJson(random, 2);
  }
  return root;
}

const GARBAGE = [
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  '"',
  '\\',
  'x',
  '\u0000',
  '\uD800',
  'NaN',
  '1e999',
  '-',
  '//',
  '\n',
  '\uFEFF',
  'true',
  '0x1',
];

function garble(random: () => number, text: string): string {
  const at = randomInt(random, 0, text.length);
  switch (randomInt(random, 0, 3)) {
    case 0:
      return text.slice(0, at) + pick(random, GARBAGE) + text.slice(at);
    case 1:
      return text.slice(0, at) + text.slice(at + randomInt(random, 1, 8));
    case 2:
      return text.slice(0, at);
    default:
      return text.slice(0, at) + String.fromCharCode(randomInt(random, 0, 0xffff)) + text.slice(at + 1);
  }
}

/**
 * A6 says nothing bounds tokenRatio from above, but a ratio so large that ×1000 overflows to Infinity is turned
 * into Infinity by the parser and then rejected by RetryThrottle (see the skipped test below). Left out of the
 * "interceptor accepts what the parser accepts" check so that the rest of it keeps running.
 */
function hasInfiniteTokenRatio(config: ReturnType<typeof parseServiceConfig>): boolean {
  return config.retryThrottling !== undefined && !Number.isFinite(config.retryThrottling.tokenRatio);
}

interface Verdict {
  ok: boolean;
  problem?: string;
}

function judge(input: unknown): Verdict {
  let config: ReturnType<typeof parseServiceConfig>;
  try {
    config = parseServiceConfig(input as object);
  } catch (error) {
    if (isServiceConfigError(error)) return { ok: false };
    return {
      ok: false,
      problem: `parser threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
    };
  }
  if (hasInfiniteTokenRatio(config)) return { ok: true };
  try {
    createRetryInterceptor(config);
  } catch (error) {
    return {
      ok: true,
      problem: `parser accepted, createRetryInterceptor threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
    };
  }
  return { ok: true };
}

function describeInput(input: unknown): string {
  const text = typeof input === 'string' ? input : JSON.stringify(input);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

describe('service-config parser fuzz', () => {
  it('random JSON values, structural mutations and garbled text: only ServiceConfigError', () => {
    const random = seededRandom(0xf022);
    const problems: string[] = [];
    const record = (input: unknown, verdict: Verdict) => {
      if (verdict.problem && problems.length < 10)
        problems.push(`${verdict.problem} <- ${describeInput(input)}`);
    };
    let accepted = 0;
    let total = 0;
    const run = (input: unknown) => {
      total += 1;
      const verdict = judge(input);
      if (verdict.ok) accepted += 1;
      record(input, verdict);
      return verdict;
    };
    for (let i = 0; i < 2000; i++) {
      const value = randomJson(random, 4);
      run(value);
      run(JSON.stringify(value));
    }
    for (let i = 0; i < 3000; i++) {
      const mutated = mutate(random, BASE);
      run(mutated); // may hold NaN or Infinity, which JSON cannot
      const normalized = clone(mutated);
      const asObject = run(normalized);
      const asText = run(JSON.stringify(normalized));
      // The same config as an object and as JSON text gets the same verdict.
      if (asObject.ok !== asText.ok && problems.length < 10) {
        problems.push(
          `object/text verdicts differ (${asObject.ok}/${asText.ok}) <- ${describeInput(mutated)}`,
        );
      }
    }
    // Every leaf of the valid config, set to every boundary number and tricky string.
    for (const path of paths(BASE)) {
      const { parent, key } = parentOf(BASE, path);
      const leaf = (parent as Record<string, Json>)[key as string];
      if (leaf !== null && typeof leaf === 'object') continue;
      for (const value of [...NUMBERS, ...STRINGS, null, true, [], {}]) {
        const copy = clone(BASE);
        const at = parentOf(copy, path);
        (at.parent as Record<string, Json>)[at.key as string] = value;
        run(copy);
      }
    }
    const baseText = JSON.stringify(BASE, null, 2);
    for (let i = 0; i < 3000; i++) {
      let text = baseText;
      for (let n = randomInt(random, 1, 3); n > 0; n--) text = garble(random, text);
      run(text);
    }
    // Pathological inputs.
    const deep = 50_000;
    for (const input of [
      '['.repeat(deep),
      `${'['.repeat(deep)}${']'.repeat(deep)}`,
      `{"x":${'['.repeat(deep)}${']'.repeat(deep)}}`,
      `{"methodConfig":${'['.repeat(deep)}${']'.repeat(deep)}}`,
      `{"methodConfig":[{"name":[${'{"service":"a"},'.repeat(2000)}{}]}]}`,
      `{"methodConfig":[${'{"name":[{}]},'.repeat(5)}{}]}`,
      `"${'a'.repeat(1_000_000)}`,
      '',
      '\uFEFF',
      '\uFEFF{}',
      'null',
      '{"__proto__":{"methodConfig":1}}',
      '{"methodConfig":[{"name":[{"service":"a","__proto__":{"method":"b"}}],"__proto__":{"retryPolicy":1}}]}',
    ]) {
      run(input);
    }
    for (const input of [
      null,
      undefined,
      0,
      1,
      true,
      false,
      [],
      [{}],
      Number.NaN,
      Symbol('x'),
      () => ({}),
      10n,
    ]) {
      run(input);
    }
    expect(problems).toEqual([]);
    // The corpus is not trivially all-rejected or all-accepted.
    expect(accepted).toBeGreaterThan(total * 0.05);
    expect(accepted).toBeLessThan(total * 0.9);
  }, 60_000);

  it('mutations that keep the config valid are accepted', () => {
    const random = seededRandom(0x7a11d);
    const codeForms = (code: string, n: number) =>
      pick(random, [code, code.toLowerCase(), code[0] + code.slice(1).toLowerCase(), n]);
    const duration = (positive: boolean) => {
      const whole = randomInt(random, positive ? 0 : 0, 100);
      const fraction =
        random() < 0.5
          ? ''
          : `.${String(randomInt(random, 1, 999_999_999))
              .padStart(randomInt(random, 1, 9), '0')
              .slice(0, 9)}`;
      const text = `${whole}${fraction}s`;
      return positive && /^0(?:\.0*)?s$/.test(text) ? '0.001s' : text;
    };
    const failures: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const config = clone(BASE) as Record<string, Json>;
      const entries = config.methodConfig as Array<Record<string, Json>>;
      const retry = entries[0]!.retryPolicy as Record<string, Json>;
      const hedging = entries[1]!.hedgingPolicy as Record<string, Json>;
      retry.maxAttempts = randomInt(random, 2, 1000);
      retry.initialBackoff = duration(true);
      retry.maxBackoff = duration(true);
      retry.backoffMultiplier = pick(random, [0.001, 0.5, 1, 2, 10, 1e6]);
      retry.retryableStatusCodes = [
        codeForms('UNAVAILABLE', 14),
        codeForms('ABORTED', 10),
        codeForms('UNAVAILABLE', 14),
      ];
      hedging.maxAttempts = randomInt(random, 2, 50);
      if (random() < 0.3) delete hedging.hedgingDelay;
      else hedging.hedgingDelay = duration(false);
      if (random() < 0.3) hedging.nonFatalStatusCodes = random() < 0.5 ? [] : null;
      if (random() < 0.3) delete config.retryThrottling;
      else
        config.retryThrottling = {
          maxTokens: randomInt(random, 1, 1000),
          tokenRatio: pick(random, [0.001, 0.1, 0.5466, 1, 2.5, 1000]),
        };
      if (random() < 0.3) config.loadBalancingPolicy = null;
      if (random() < 0.3) delete entries[0]!.timeout;
      if (random() < 0.3) entries[0]!.waitForReady = null;
      // Unknown fields are ignored anywhere.
      if (random() < 0.5) config[`unknown${i}`] = randomJson(random, 3);
      if (random() < 0.5) retry[`x-${i}`] = randomJson(random, 2);
      if (random() < 0.5) entries.push({ name: [], retryPolicy: clone(retry) }); // matches nothing, still valid
      if (random() < 0.3) entries.reverse();
      for (const input of [config, JSON.stringify(config)]) {
        try {
          const parsed = parseServiceConfig(input);
          createRetryInterceptor(parsed);
        } catch (error) {
          if (failures.length < 10)
            failures.push(
              `${error instanceof Error ? error.message : String(error)} <- ${describeInput(input)}`,
            );
        }
      }
    }
    expect(failures).toEqual([]);
  });

  // Found by this fuzzer: a finite tokenRatio whose ×1000 overflowed used to become Infinity.
  it('a huge tokenRatio is either a valid finite ratio or a ServiceConfigError', () => {
    const input = { retryThrottling: { maxTokens: 10, tokenRatio: 1e306 } };
    let config: ReturnType<typeof parseServiceConfig> | undefined;
    try {
      config = parseServiceConfig(input);
    } catch (error) {
      expect(isServiceConfigError(error)).toBe(true);
      return;
    }
    expect(Number.isFinite(config.retryThrottling?.tokenRatio)).toBe(true);
    expect(() => createRetryInterceptor(config)).not.toThrow();
  });
});
