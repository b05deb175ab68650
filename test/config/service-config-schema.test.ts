/**
 * The shipped JSON Schema (schema/service-config.schema.json) must accept and reject exactly what the parser
 * does, except for the rules JSON Schema cannot state (listed in the schema's description and here).
 */

import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import { describe, expect, it } from 'vitest';
import { validateServiceConfig } from '../../src/config/validate-service-config.js';
import { seededRandom } from '../../src/testing/seeded-random.js';

const schema = JSON.parse(readFileSync('schema/service-config.schema.json', 'utf8')) as object;
const ajv = new Ajv({ allErrors: true, allowUnionTypes: true, strict: true });
const schemaAccepts = ajv.compile(schema);

function parserAccepts(value: unknown): boolean {
  return validateServiceConfig(value as object).errors.length === 0;
}

/** Problems only the parser can find: a name used twice (across entries, after normalization). */
function isParserOnly(value: unknown): boolean {
  return validateServiceConfig(value as object).errors.some((e) => e.message.startsWith('duplicate name'));
}

type Json = Record<string, unknown>;
const retry = (overrides: Json = {}): Json => ({
  maxAttempts: 3,
  initialBackoff: '0.1s',
  maxBackoff: '1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
  ...overrides,
});
const hedging = (overrides: Json = {}): Json => ({ maxAttempts: 2, hedgingDelay: '0.05s', ...overrides });
const entry = (fields: Json): Json => ({ methodConfig: [{ name: [{ service: 'a.S' }], ...fields }] });
const withRetry = (overrides: Json): Json => entry({ retryPolicy: retry(overrides) });
const withHedging = (overrides: Json): Json => entry({ hedgingPolicy: hedging(overrides) });
const throttling = (value: unknown): Json => ({ retryThrottling: value });

const FIXTURES: readonly [string, unknown, boolean][] = [
  ['an empty config', {}, true],
  ['the example', JSON.parse(readFileSync('examples/service-config.json', 'utf8')), true],
  ['the hedging example', JSON.parse(readFileSync('examples/hedging-config.json', 'utf8')), true],
  ['a root array', [], false],
  ['a root string', 'x', false],
  [
    'a $schema line and unknown fields',
    { $schema: './s.json', other: 1, methodConfig: [{ extra: true }] },
    true,
  ],
  [
    'nulls for optional fields',
    { methodConfig: null, retryThrottling: null, loadBalancingPolicy: null },
    true,
  ],
  ['loadBalancingPolicy 5', { loadBalancingPolicy: 5 }, false],
  ['loadBalancingConfig null', { loadBalancingConfig: null }, true],
  ['loadBalancingConfig []', { loadBalancingConfig: [] }, true],
  [
    'loadBalancingConfig with a fallback',
    { loadBalancingConfig: [{ round_robin: {} }, { pick_first: {} }] },
    true,
  ],
  ['loadBalancingConfig "round_robin"', { loadBalancingConfig: 'round_robin' }, false],
  ['loadBalancingConfig {"round_robin": {}}', { loadBalancingConfig: { round_robin: {} } }, false],
  ['loadBalancingConfig [null]', { loadBalancingConfig: [null] }, false],
  ['loadBalancingConfig ["round_robin"]', { loadBalancingConfig: ['round_robin'] }, false],
  ['loadBalancingConfig [[]]', { loadBalancingConfig: [[]] }, false],
  ['loadBalancingConfig [{}] (names no policy)', { loadBalancingConfig: [{}] }, false],
  [
    'loadBalancingConfig naming two policies in one object',
    { loadBalancingConfig: [{ round_robin: {}, pick_first: {} }] },
    false,
  ],
  ['methodConfig {}', { methodConfig: {} }, false],
  ['an entry that is a string', { methodConfig: ['x'] }, false],
  ['name {}', { methodConfig: [{ name: {} }] }, false],
  ['a name that is a string', { methodConfig: [{ name: ['a.S'] }] }, false],
  ['service 5', { methodConfig: [{ name: [{ service: 5 }] }] }, false],
  ['method without service', { methodConfig: [{ name: [{ method: 'M' }] }] }, false],
  ['method with an empty service', { methodConfig: [{ name: [{ service: '', method: 'M' }] }] }, false],
  ['method with a null service', { methodConfig: [{ name: [{ service: null, method: 'M' }] }] }, false],
  ['an empty method and service', { methodConfig: [{ name: [{ service: '', method: '' }] }] }, true],
  ['a null method', { methodConfig: [{ name: [{ service: 'a.S', method: null }] }] }, true],
  ['both policies', entry({ retryPolicy: retry(), hedgingPolicy: hedging() }), false],
  ['both policies, one null', entry({ retryPolicy: retry(), hedgingPolicy: null }), true],
  ['waitForReady "yes"', entry({ waitForReady: 'yes' }), false],
  ['waitForReady true', entry({ waitForReady: true }), true],
  ['timeout "0s"', entry({ timeout: '0s' }), true],
  ['timeout "-0s"', entry({ timeout: '-0s' }), true],
  ['timeout "-0.000s"', entry({ timeout: '-0.000s' }), true],
  ['timeout "-1s"', entry({ timeout: '-1s' }), false],
  ['timeout "1"', entry({ timeout: '1' }), false],
  ['timeout ".5s" (grpc-js refuses it)', entry({ timeout: '.5s' }), false],
  ['timeout "1.s"', entry({ timeout: '1.s' }), false],
  ['timeout "s"', entry({ timeout: 's' }), false],
  ['timeout "1.0000000001s" (10 decimals)', entry({ timeout: '1.0000000001s' }), false],
  ['timeout at the Duration limit', entry({ timeout: '315576000000.999999999s' }), true],
  ['timeout with leading zeros at the limit', entry({ timeout: '000315576000000s' }), true],
  ['timeout past the Duration limit', entry({ timeout: '315576000001s' }), false],
  ['timeout of 12 digits under the limit', entry({ timeout: '299999999999s' }), true],
  ['timeout of 13 digits', entry({ timeout: '1000000000000s' }), false],
  ['maxRequestMessageBytes "1024"', entry({ maxRequestMessageBytes: '1024' }), true],
  ['maxRequestMessageBytes -1', entry({ maxRequestMessageBytes: -1 }), false],
  ['maxResponseMessageBytes 1.5', entry({ maxResponseMessageBytes: 1.5 }), false],
  ['maxResponseMessageBytes "1.5"', entry({ maxResponseMessageBytes: '1.5' }), false],
  ['maxRequestMessageBytes 2^53 - 1', entry({ maxRequestMessageBytes: 2 ** 53 - 1 }), true],
  ['maxRequestMessageBytes 2^53 (past a safe integer)', entry({ maxRequestMessageBytes: 2 ** 53 }), false],
  ['maxRequestMessageBytes 1e300', entry({ maxRequestMessageBytes: 1e300 }), false],
  ['maxRequestMessageBytes "9007199254740991"', entry({ maxRequestMessageBytes: '9007199254740991' }), true],
  ['maxRequestMessageBytes "9007199254740992"', entry({ maxRequestMessageBytes: '9007199254740992' }), false],
  [
    'maxRequestMessageBytes "0009007199254740991"',
    entry({ maxRequestMessageBytes: '0009007199254740991' }),
    true,
  ],
  ['maxRequestMessageBytes "8999999999999999"', entry({ maxRequestMessageBytes: '8999999999999999' }), true],
  ['maxRequestMessageBytes "9007199254740990"', entry({ maxRequestMessageBytes: '9007199254740990' }), true],
  ['maxRequestMessageBytes "9007199254741000"', entry({ maxRequestMessageBytes: '9007199254741000' }), false],
  [
    'maxRequestMessageBytes "10000000000000000"',
    entry({ maxRequestMessageBytes: '10000000000000000' }),
    false,
  ],
  ["maxRequestBytes (grpc-js's spelling) 1024", entry({ maxRequestBytes: 1024 }), true],
  ["maxRequestBytes (grpc-js's spelling) -1", entry({ maxRequestBytes: -1 }), false],
  ["maxResponseBytes (grpc-js's spelling) 1.5", entry({ maxResponseBytes: 1.5 }), false],
  ['maxResponseBytes (grpc-js\'s spelling) "1.5"', entry({ maxResponseBytes: '1.5' }), false],
  ['retryPolicy []', entry({ retryPolicy: [] }), false],
  ['a full retry policy', withRetry({}), true],
  ['maxAttempts 1', withRetry({ maxAttempts: 1 }), false],
  ['maxAttempts 2.5', withRetry({ maxAttempts: 2.5 }), false],
  [
    'maxAttempts 2.0 (an integer)',
    JSON.parse(
      '{"methodConfig":[{"retryPolicy":{"maxAttempts":2.0,"initialBackoff":"1s","maxBackoff":"1s","backoffMultiplier":1,"retryableStatusCodes":[14]}}]}',
    ),
    true,
  ],
  ['maxAttempts "3"', withRetry({ maxAttempts: '3' }), false],
  ['maxAttempts 100 (clamped later)', withRetry({ maxAttempts: 100 }), true],
  ['maxAttempts missing', withRetry({ maxAttempts: undefined }), false],
  ['initialBackoff "0s"', withRetry({ initialBackoff: '0s' }), false],
  ['initialBackoff "0.000000001s"', withRetry({ initialBackoff: '0.000000001s' }), true],
  ['initialBackoff "-1s"', withRetry({ initialBackoff: '-1s' }), false],
  ['initialBackoff 0.1', withRetry({ initialBackoff: 0.1 }), false],
  ['maxBackoff "1ms"', withRetry({ maxBackoff: '1ms' }), false],
  ['backoffMultiplier 0', withRetry({ backoffMultiplier: 0 }), false],
  ['backoffMultiplier 0.5', withRetry({ backoffMultiplier: 0.5 }), true],
  ['backoffMultiplier "2"', withRetry({ backoffMultiplier: '2' }), false],
  ['retryableStatusCodes []', withRetry({ retryableStatusCodes: [] }), false],
  ['retryableStatusCodes missing', withRetry({ retryableStatusCodes: undefined }), false],
  ['retryableStatusCodes null', withRetry({ retryableStatusCodes: null }), false],
  [
    'codes in any case and numbers',
    withRetry({ retryableStatusCodes: ['unavailable', 'Deadline_Exceeded', 8, 0] }),
    true,
  ],
  ['code 17', withRetry({ retryableStatusCodes: [17] }), false],
  ['code -1', withRetry({ retryableStatusCodes: [-1] }), false],
  ['code "14"', withRetry({ retryableStatusCodes: ['14'] }), false],
  ['code "NOPE"', withRetry({ retryableStatusCodes: ['NOPE'] }), false],
  ['code " UNAVAILABLE"', withRetry({ retryableStatusCodes: [' UNAVAILABLE'] }), false],
  [
    'perAttemptRecvTimeout with no codes',
    withRetry({ retryableStatusCodes: undefined, perAttemptRecvTimeout: '1s' }),
    true,
  ],
  [
    'perAttemptRecvTimeout with []',
    withRetry({ retryableStatusCodes: [], perAttemptRecvTimeout: '0.3s' }),
    true,
  ],
  [
    'perAttemptRecvTimeout null with []',
    withRetry({ retryableStatusCodes: [], perAttemptRecvTimeout: null }),
    false,
  ],
  ['perAttemptRecvTimeout "0s"', withRetry({ perAttemptRecvTimeout: '0s' }), false],
  ['perAttemptRecvTimeout 1', withRetry({ perAttemptRecvTimeout: 1 }), false],
  [
    'perAttemptRecvTimeout with a bad code',
    withRetry({ retryableStatusCodes: ['X'], perAttemptRecvTimeout: '1s' }),
    false,
  ],
  ['hedgingPolicy "fast"', entry({ hedgingPolicy: 'fast' }), false],
  ['a minimal hedging policy', entry({ hedgingPolicy: { maxAttempts: 2 } }), true],
  ['hedging maxAttempts missing', withHedging({ maxAttempts: undefined }), false],
  ['hedgingDelay "0s"', withHedging({ hedgingDelay: '0s' }), true],
  ['hedgingDelay "-1s"', withHedging({ hedgingDelay: '-1s' }), false],
  ['nonFatalStatusCodes "UNAVAILABLE"', withHedging({ nonFatalStatusCodes: 'UNAVAILABLE' }), false],
  ['nonFatalStatusCodes []', withHedging({ nonFatalStatusCodes: [] }), true],
  ['nonFatalStatusCodes [14, 99]', withHedging({ nonFatalStatusCodes: [14, 99] }), false],
  ['retryThrottling 5', throttling(5), false],
  ['retryThrottling at the bounds', throttling({ maxTokens: 1000, tokenRatio: 0.001 }), true],
  ['maxTokens 0', throttling({ maxTokens: 0, tokenRatio: 0.1 }), false],
  ['maxTokens 1001', throttling({ maxTokens: 1001, tokenRatio: 0.1 }), false],
  ['maxTokens "10"', throttling({ maxTokens: '10', tokenRatio: 0.1 }), false],
  ['tokenRatio missing', throttling({ maxTokens: 10 }), false],
  ['tokenRatio 0.0009 (truncates to 0)', throttling({ maxTokens: 10, tokenRatio: 0.0009 }), false],
  ['tokenRatio 0.0019 (truncates to 0.001)', throttling({ maxTokens: 10, tokenRatio: 0.0019 }), true],
  ['tokenRatio 1e306', throttling({ maxTokens: 10, tokenRatio: 1e306 }), true],
];

describe('the JSON Schema and the parser agree', () => {
  it('compiles in strict mode', () => {
    expect(typeof schemaAccepts).toBe('function');
  });

  it.each(FIXTURES)('%s', (_label, value, valid) => {
    expect(parserAccepts(value)).toBe(valid);
    expect(schemaAccepts(value)).toBe(valid);
  });

  it('on 3000 random mutations of valid configs (duplicate names aside)', () => {
    const random = seededRandom(0x5c4e);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const values: readonly unknown[] = [
      undefined,
      null,
      true,
      0,
      1,
      2,
      -1,
      1.5,
      1000,
      1001,
      0.0009,
      0.001,
      '',
      'x',
      '0s',
      '-0s',
      '0.1s',
      '1.5s',
      '-1s',
      '.5s',
      '1.s',
      '1',
      'UNAVAILABLE',
      'unavailable',
      14,
      17,
      [],
      ['UNAVAILABLE'],
      [14, 'nope'],
      {},
      { service: 'a.S' },
      { method: 'M' },
      [{ service: 'b.S', method: 'M' }],
      retry(),
      hedging(),
    ];
    const disagreements: string[] = [];
    let compared = 0;
    let accepted = 0;
    for (let i = 0; i < 3000; i++) {
      const base: Json = structuredClone(
        pick([
          withRetry({ perAttemptRecvTimeout: pick([undefined, '1s']) }),
          withHedging({}),
          { ...withRetry({}), retryThrottling: { maxTokens: 10, tokenRatio: 0.5 } },
          entry({ timeout: '1s', waitForReady: false, maxRequestMessageBytes: 10 }),
        ]),
      );
      mutate(base, pick, values);
      if (isParserOnly(base)) {
        continue;
      }
      compared++;
      accepted += parserAccepts(base) ? 1 : 0;
      if (parserAccepts(base) !== schemaAccepts(base)) {
        disagreements.push(
          `parser ${parserAccepts(base)}, schema ${schemaAccepts(base)}: ${JSON.stringify(base)}`,
        );
      }
    }
    expect(disagreements.slice(0, 5)).toEqual([]);
    expect(compared).toBeGreaterThan(2500);
    // Both verdicts are well represented, so agreement is not trivial.
    expect(accepted / compared).toBeGreaterThan(0.2);
    expect(accepted / compared).toBeLessThan(0.8);
  });
});

/** Sets one random field, at any depth, to a random value (or deletes it). */
function mutate(root: Json, pick: <T>(items: readonly T[]) => T, values: readonly unknown[]): void {
  const containers: Json[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'object' && value !== null) {
      if (!Array.isArray(value)) {
        containers.push(value as Json);
      }
      for (const child of Object.values(value)) {
        walk(child);
      }
    }
  };
  walk(root);
  const target = pick(containers);
  const key = pick([
    ...Object.keys(target),
    'perAttemptRecvTimeout',
    'hedgingPolicy',
    'retryableStatusCodes',
  ]);
  const value = pick(values);
  if (value === undefined) {
    delete target[key];
  } else {
    target[key] = structuredClone(value);
  }
}
