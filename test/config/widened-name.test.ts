/**
 * A misspelled field in a methodConfig name (`servce`) is ignored, as every unknown field is; when the name holds
 * nothing else, it is then `{}`, the default entry, and applies to every call no other entry names. The warnings
 * say so, at check time and when the interceptor is made.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { likelyConfigMistakes } from '../../src/config/likely-config-mistakes.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { validateServiceConfig } from '../../src/config/validate-service-config.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { RETRY_UNAVAILABLE_POLICY, unchecked } from '../helpers/service-configs.js';
import { captureWarnings } from '../helpers/warnings.js';

const WIDENED = 'the name is then {}, which matches every method of every service';

function configWithName(name: object): object {
  return {
    methodConfig: [{ name: [{ service: 'a.Other' }] }, { name: [name], ...RETRY_UNAVAILABLE_POLICY }],
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a name left empty by a misspelled field', () => {
  it('is the default entry, and validateServiceConfig says so beside the "did you mean"', () => {
    const config = configWithName({ servce: 'a.Svc' });
    expect(parseServiceConfig(config).methodConfig[1]?.name).toEqual([{}]);
    const [warning] = validateServiceConfig(config).warnings;
    expect(warning?.path).toBe('methodConfig[1].name[0].servce');
    expect(warning?.message).toBe(
      `unknown field "servce" is ignored; did you mean "service"?; ${WIDENED}: this entry applies to all calls no other entry names`,
    );
  });

  it('is reported by the interceptor at creation, even when no known field is near', () => {
    const warnings = captureWarnings();
    createRetryInterceptor(unchecked(configWithName({ svc: 'a.Svc' })));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.code).toBe('GRPC_RETRY_HEDGING_CONFIG_FIELD');
    expect(warnings[0]?.message).toContain(
      `methodConfig[1].name[0].svc is not a service-config field: ${WIDENED}`,
    );
  });

  it('is not reported when the name keeps its service, or for a field beside a method of a named service', () => {
    for (const name of [
      { service: 'a.Svc', servce: 'a.Svc' },
      { service: 'a.Svc', method: 'M', metod: 'M' },
    ]) {
      const config = configWithName(name);
      expect(
        validateServiceConfig(config)
          .warnings.map((w) => w.message)
          .join('\n'),
      ).not.toContain(WIDENED);
      expect(likelyConfigMistakes(config, parseServiceConfig(config)).join('\n')).not.toContain(WIDENED);
    }
  });

  it('is not reported for an unknown field elsewhere in the entry', () => {
    const config = { methodConfig: [{ name: [{}], colour: 'blue', ...RETRY_UNAVAILABLE_POLICY }] };
    expect(validateServiceConfig(config).warnings.map((w) => w.message)).toEqual([
      'unknown field "colour" is ignored',
    ]);
  });
});
