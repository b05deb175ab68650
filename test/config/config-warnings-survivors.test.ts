/**
 * Behaviour of the warnings about a valid config that mutation testing (stryker, src/config/config-warnings.ts)
 * found no test pinned down: the kind each warning carries (what `check --json` labels it), and an entry without
 * names when the config as written is not at hand.
 */

import { describe, expect, it } from 'vitest';
import { findConfigWarnings } from '../../src/config/config-warnings.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { validate } from '../../src/config/validate-service-config.js';

const APPLIES_TO_NOTHING = 'this entry applies to nothing (name a service, or write [{}] for every method)';
const MISSING = `is missing, so the entry matches no call: ${APPLIES_TO_NOTHING}`;

describe('the kind of each warning', () => {
  it('an entry without names is an ineffective policy, a timeout over the limit is timeout-over-limit', () => {
    const { warnings } = validate({ methodConfig: [{ name: [], timeout: '3000000s' }] }, true);
    expect(warnings.map(({ path, kind }) => ({ path, kind }))).toEqual([
      { path: 'methodConfig[0].name', kind: 'ineffective-policy' },
      { path: 'methodConfig[0].timeout', kind: 'timeout-over-limit' },
    ]);
  });

  it('findConfigWarnings gives the same kinds', () => {
    const raw = { methodConfig: [{ timeout: '3000000s' }] };
    expect(findConfigWarnings(parseServiceConfig(raw), raw).map((w) => w.kind)).toEqual([
      'ineffective-policy',
      'timeout-over-limit',
    ]);
  });
});

describe('an entry without names, when the config as written is not at hand', () => {
  const config = parseServiceConfig({ methodConfig: [{ name: [] }] });

  it.each([
    ['nothing', undefined],
    ['null', null],
    ['JSON text', '{"methodConfig": [{"name": []}]}'],
    ['an object without a methodConfig list', {}],
    ['an object whose methodConfig is not a list', { methodConfig: { 0: { name: [] } } }],
  ])('%s: its name is said to be missing', (_, raw) => {
    expect(findConfigWarnings(config, raw)).toEqual([
      { path: ['methodConfig', 0, 'name'], message: MISSING, kind: 'ineffective-policy' },
    ]);
  });

  it('with the config as written, an empty list is told from a missing name', () => {
    expect(findConfigWarnings(config, { methodConfig: [{ name: [] }] })[0]?.message).toBe(
      `is an empty list, which matches no call: ${APPLIES_TO_NOTHING}`,
    );
  });
});
