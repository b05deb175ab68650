import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { likelyConfigMistakes } from '../../src/config/likely-config-mistakes.js';
import { loadServiceConfig } from '../../src/config/load-service-config.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { validateServiceConfig } from '../../src/config/validate-service-config.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { RetryBudget } from '../../src/throttle/retry-budget.js';
import { RETRY_UNAVAILABLE_POLICY, unchecked } from '../helpers/service-configs.js';

const mistakes = (input: string | object) => likelyConfigMistakes(input, parseServiceConfig(input));

describe('likely mistakes in a service config handed to the interceptor', () => {
  it('names a misspelled field, at any depth, with the field it was likely meant to be', () => {
    expect(mistakes({ methodConfigs: [{ name: [{}] }] })).toEqual([
      'the service config\'s methodConfigs is not a service-config field (did you mean "methodConfig"?)',
    ]);
    expect(mistakes('{"methodConfig": [{"name": [{}], "retryPolcy": {}}]}')).toEqual([
      'the service config\'s methodConfig[0].retryPolcy is not a service-config field (did you mean "retryPolicy"?)',
    ]);
  });

  it('names a service or method that looks like a pattern or a path, which no call matches', () => {
    const config = {
      methodConfig: [
        {
          name: [{ service: 'pkg.*' }, { service: 'pkg.Svc', method: '*' }, { service: '/pkg.Svc' }],
          waitForReady: true,
        },
      ],
    };
    expect(mistakes(config)).toEqual([
      'the service config\'s methodConfig[0].name[0].service: service "pkg.*" is matched exactly, as a name no call has: service-config names have no wildcards (name each service, and leave "method" out to cover all of its methods; {} covers every method)',
      'the service config\'s methodConfig[0].name[1].method: method "*" is matched exactly, as a name no call has: service-config names have no wildcards (leave "method" out to cover the whole service)',
      'the service config\'s methodConfig[0].name[2].service: service "/pkg.Svc" holds a "/", which no service name has: a name is {"service": "package.Service", "method": "Method"}, not a path',
    ]);
    expect(mistakes({ methodConfig: [{ name: [{ service: 'pkg.Svc', method: 'Get' }, {}] }] })).toEqual([]);
    const validation = validateServiceConfig(JSON.stringify(config, null, 2));
    expect(validation.errors).toEqual([]);
    expect(validation.warnings.map((w) => [w.path, w.line])).toEqual([
      ['methodConfig[0].name[0].service', 6],
      ['methodConfig[0].name[1].method', 10],
      ['methodConfig[0].name[2].service', 13],
    ]);
  });

  it('says when what it was handed configures nothing and is not a service config at all', () => {
    expect(mistakes(new RetryBudget())).toEqual([
      expect.stringMatching(
        /^the service config has no methodConfig, only fields a service config does not have \(name, maxExtraLoad, .*\), so every call passes straight through$/,
      ),
    ]);
  });

  it('names an entry without a name, or with an empty one, which applies to no call (its policy never runs)', () => {
    const { retryPolicy } = RETRY_UNAVAILABLE_POLICY;
    expect(
      mistakes({ methodConfig: [{ retryPolicy }, { name: [], timeout: '1s' }, { name: [{}] }] }),
    ).toEqual([
      "the service config's methodConfig[0].name is missing, so the entry matches no call: this entry applies to nothing (name a service, or write [{}] for every method)",
      "the service config's methodConfig[1].name is an empty list, which matches no call: this entry applies to nothing (name a service, or write [{}] for every method)",
    ]);
    const text = '{\n  "methodConfig": [\n    { "retryPolicy": %s }\n  ]\n}'.replace(
      '%s',
      JSON.stringify(retryPolicy),
    );
    expect(likelyConfigMistakes(text, parseServiceConfig(text), () => ' (at c.json:3:5)')).toEqual([
      "the service config's methodConfig[0].name (at c.json:3:5) is missing, so the entry matches no call: this entry applies to nothing (name a service, or write [{}] for every method)",
    ]);
  });

  it("says that grpc-js's channel options hold the config as text, when they are handed over for it", () => {
    const channelOptions = { 'grpc.service_config': JSON.stringify({ methodConfig: [{ name: [{}] }] }) };
    expect(mistakes(channelOptions)).toEqual([
      'the service config\'s ["grpc.service_config"] is not a service-config field: these are grpc-js channel options, whose "grpc.service_config" holds the service config as JSON text: pass that text (options["grpc.service_config"]) instead, and leave its retryPolicy and hedgingPolicy out of the channel\'s own options, or grpc-js retries each attempt too',
    ]);
  });

  it('leaves alone the fields of newer gRPC versions in a config that configures something', () => {
    const config = {
      methodConfig: [{ name: [{}], futureField: 1 }],
      healthCheckConfig: { serviceName: 'x' },
    };
    expect(mistakes(config)).toEqual([]);
    expect(mistakes({ methodConfig: [] })).toEqual([]);
  });
});

describe('retryPolicy fields in a hedgingPolicy', () => {
  const hedging = { maxAttempts: 3, hedgingDelay: '0.2s', nonFatalStatusCodes: ['UNAVAILABLE'] };

  it('say why they do nothing there, so the interceptor warns of them at creation', () => {
    const config = {
      methodConfig: [
        {
          name: [{}],
          hedgingPolicy: { ...hedging, perAttemptRecvTimeout: '0.05s', retryableStatusCodes: [] },
        },
      ],
    };
    expect(mistakes(config)).toEqual([
      "the service config's methodConfig[0].hedgingPolicy.perAttemptRecvTimeout is not a service-config field: it is a retryPolicy field: hedging has no per-attempt timeout (a hedge goes after hedgingDelay whatever the attempts before it do), so no attempt is cut",
      "the service config's methodConfig[0].hedgingPolicy.retryableStatusCodes is not a service-config field: it is a retryPolicy field: a hedgingPolicy names the statuses that send the next hedge at once in nonFatalStatusCodes",
    ]);
  });

  it('an inherited name is no field with advice', () => {
    const config = {
      methodConfig: [{ name: [{}], hedgingPolicy: { ...hedging, constructor: 1 } }],
      toString: 1,
    };
    expect(mistakes(config)).toEqual([]);
  });
});

describe('createRetryInterceptor reports them once, at creation', () => {
  const original = process.emitWarning;
  afterEach(() => {
    process.emitWarning = original;
  });

  it('as one warning with its code, and nothing for a clean or parsed config', () => {
    const emitted: { message: string; code: string | undefined }[] = [];
    process.emitWarning = ((message: string | Error, options?: { code?: string }) => {
      emitted.push({ message: String(message), code: options?.code });
    }) as typeof process.emitWarning;
    createRetryInterceptor(unchecked({ methodConfigs: [] }));
    createRetryInterceptor({ methodConfig: [{ name: [{}] }] });
    createRetryInterceptor(parseServiceConfig({ methodConfig: [] }));
    expect(emitted).toEqual([
      {
        message:
          'grpc-retry-hedging: createRetryInterceptor: the service config\'s methodConfigs is not a service-config field (did you mean "methodConfig"?)',
        code: 'GRPC_RETRY_HEDGING_CONFIG_FIELD',
      },
    ]);
  });
});

describe('where the mistake is written', () => {
  const original = process.emitWarning;
  afterEach(() => {
    process.emitWarning = original;
  });

  it('names the file, line and column of a config loaded from a file, and the line and column of JSON text', () => {
    const emitted: string[] = [];
    process.emitWarning = ((message: string | Error) => {
      emitted.push(String(message));
    }) as typeof process.emitWarning;
    const dir = mkdtempSync(join(tmpdir(), 'grh-mistakes-'));
    try {
      const text =
        '{\n  "methodConfig": [{\n    "name": [{ "service": "a.B" }],\n    "retryPolcy": {},\n    "name2": [{ "service": "a.*" }]\n  }]\n}\n';
      const file = join(dir, 'service-config.json');
      writeFileSync(file, text);
      createRetryInterceptor(loadServiceConfig(file));
      createRetryInterceptor(text);
      createRetryInterceptor(JSON.parse(text) as object);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(emitted).toHaveLength(3);
    expect(emitted[0]).toContain(
      `the service config's methodConfig[0].retryPolcy (at ${join(dir, 'service-config.json')}:4:5) is not a service-config field (did you mean "retryPolicy"?)`,
    );
    expect(emitted[1]).toContain(
      `the service config's methodConfig[0].retryPolcy (at line 4, column 5) is not a service-config field`,
    );
    // A config object has no text to point into.
    expect(emitted[2]).toContain(
      `the service config's methodConfig[0].retryPolcy is not a service-config field`,
    );
  });
});

describe('a config put together in another shape', () => {
  const inner = { methodConfig: [{ name: [{ service: 'a.B' }], ...RETRY_UNAVAILABLE_POLICY }] };

  it('wrapped in {"serviceConfig": ...}, or a policy at the root: the warnings say what to write', () => {
    expect(mistakes({ serviceConfig: inner })).toEqual([
      'the service config\'s serviceConfig is not a service-config field: the config is wrapped in {"serviceConfig": ...}, as DNS TXT records and grpc_config choices hold it: pass the object inside it',
    ]);
    expect(validateServiceConfig({ serviceConfig: inner }).warnings.map((w) => w.message)).toEqual([
      'unknown field "serviceConfig" is ignored; the config is wrapped in {"serviceConfig": ...}, as DNS TXT records and grpc_config choices hold it: pass the object inside it',
    ]);
    expect(mistakes({ hedgingPolicy: {} })).toEqual([
      'the service config\'s hedgingPolicy is not a service-config field: a policy goes in a methodConfig entry: {"methodConfig": [{"name": [{"service": "pkg.Service"}], "hedgingPolicy": ...}]}',
    ]);
  });

  it('a methodConfig list or a grpc_config choice list as the whole config: the error says how to write it', () => {
    expect(() => parseServiceConfig(inner.methodConfig)).toThrow(
      '; this is a list of methodConfig entries: write it as {"methodConfig": [...]}',
    );
    expect(() => parseServiceConfig([{ serviceConfig: inner }])).toThrow(
      '; this is a grpc_config choice list (as a DNS TXT record holds it): pass the serviceConfig of one choice',
    );
    expect(() => parseServiceConfig([1, 2])).toThrow(/a service config must be a JSON object, got \[1,2\]$/);
  });
});
