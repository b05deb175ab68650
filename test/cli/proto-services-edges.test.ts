/**
 * Edges of the proto service discovery behind `check --proto`: exactly the methods the files declare, each once
 * however many times its file is given or imported.
 */
import { describe, expect, it } from 'vitest';
import type { CheckReport } from '../../src/cli/check.js';
import { loadProtos } from '../../src/cli/proto-services.js';
import { check } from '../helpers/check-run.js';

const DEMO_PROTO = 'protos/idempotency_demo.proto';
const ITEMS = 'grpc_retry_hedging.demo.v1.Items';
const DEMO_METHODS = [
  { service: ITEMS, method: 'GetItem', idempotency: 'NO_SIDE_EFFECTS' },
  { service: ITEMS, method: 'PutItem', idempotency: 'IDEMPOTENT' },
  { service: ITEMS, method: 'CreateItem', idempotency: 'IDEMPOTENCY_UNKNOWN' },
];

describe('loadProtos', () => {
  it('finds the services and methods a proto declares, with their idempotency levels, and nothing else', () => {
    const { services, methods } = loadProtos([DEMO_PROTO], []);
    expect([...services].map(([name, names]) => [name, [...names]])).toEqual([
      [ITEMS, ['GetItem', 'PutItem', 'CreateItem']],
    ]);
    expect(methods).toEqual(DEMO_METHODS);
  });

  it('lists a method once when its proto is given twice', () => {
    expect(loadProtos([DEMO_PROTO, DEMO_PROTO], []).methods).toEqual(DEMO_METHODS);
  });
});

describe('check --proto', () => {
  it('warns once about a method that is not idempotent when its proto is given twice', async () => {
    const once = await check('test/cli/fixtures/idempotency-config.json', '--proto', DEMO_PROTO, '--json');
    const twice = await check(
      'test/cli/fixtures/idempotency-config.json',
      '--proto',
      DEMO_PROTO,
      '--proto',
      DEMO_PROTO,
      '--json',
    );
    expect(twice.code).toBe(0);
    const warnings = (JSON.parse(twice.stdout) as CheckReport).warnings;
    expect(warnings.map((w) => [w.kind, w.path])).toEqual([['not-idempotent', 'methodConfig[0].name[0]']]);
    expect(twice.stdout).toBe(once.stdout);
  });
});
