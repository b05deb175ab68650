/**
 * Edges of `createChannelOptions` that mutation testing (stryker, src/config, stop 47) found no test pinned down:
 * each bad option and input named, what leaves the config for grpc-js, and how message-size limits are read.
 */
import { describe, expect, it } from 'vitest';
import { createChannelOptions } from '../../src/config/channel-options.js';
import { ServiceConfigError } from '../../src/config/service-config-error.js';
import { unchecked } from '../helpers/service-configs.js';

const SERVICE = 'a.S';
const quiet = { onWarning: () => {} };
const sent = (options: Record<string, unknown>): Record<string, unknown> =>
  JSON.parse(String(options['grpc.service_config'])) as Record<string, unknown>;

describe('createChannelOptions: inputs and options it refuses', () => {
  it('names each bad option', () => {
    expect(() => createChannelOptions({}, null as never)).toThrow(
      'createChannelOptions: options must be an object, got null',
    );
    expect(() => createChannelOptions({}, 5 as never)).toThrow(
      'createChannelOptions: options must be an object, got 5',
    );
    expect(() => createChannelOptions({}, { avoidTriedReplicas: 'yes' as never })).toThrow(
      'createChannelOptions: options.avoidTriedReplicas must be true or false, got "yes"',
    );
    expect(() => createChannelOptions({}, { onWarning: 5 as never })).toThrow(
      'createChannelOptions: options.onWarning must be a function, got 5',
    );
  });

  it('names a config that is neither JSON text nor an object, and a normalized one', () => {
    for (const config of [null, 42, true, undefined]) {
      expect(() => createChannelOptions(config as never)).toThrow(
        /^createChannelOptions: config must be JSON text or an object, got /,
      );
    }
  });

  it('names a loadBalancingConfig entry that names no policy, or is an array', () => {
    expect(() => createChannelOptions({ loadBalancingConfig: [{}] })).toThrow(
      'loadBalancingConfig[0]: must name exactly one load-balancing policy, got none',
    );
    expect(() => createChannelOptions(unchecked({ loadBalancingConfig: [[]] }))).toThrow(
      /loadBalancingConfig\[0\]: must be an object/,
    );
    expect(() => createChannelOptions(unchecked({ loadBalancingConfig: [null] }))).toThrow(
      ServiceConfigError,
    );
  });
});

describe('createChannelOptions: what grpc-js is given', () => {
  it('drops retryThrottling, null fields and the retry fields of entries; keeps the rest as written', () => {
    const config = {
      retryThrottling: { maxTokens: 10, tokenRatio: 0.1 },
      healthCheckConfig: { serviceName: 'x' },
      loadBalancingConfig: null,
      methodConfig: [
        {
          name: [{ service: SERVICE }],
          retryPolicy: {
            maxAttempts: 2,
            initialBackoff: '1s',
            maxBackoff: '1s',
            backoffMultiplier: 1,
            retryableStatusCodes: ['UNAVAILABLE'],
          },
          timeout: '1s',
          waitForReady: true,
          somethingNewer: { kept: true },
          maxRequestBytes: null,
        },
      ],
    };
    const out = sent(createChannelOptions(unchecked(config), quiet));
    expect(out).toEqual({
      healthCheckConfig: { serviceName: 'x' },
      methodConfig: [{ name: [{ service: SERVICE }], somethingNewer: { kept: true } }],
    });
  });

  it('sends no methodConfig when the config has none (grpc-js takes an empty list as none too)', () => {
    expect(sent(createChannelOptions({ methodConfig: [] }, quiet))).toEqual({});
  });
});

describe('createChannelOptions: limits as written', () => {
  const limit = (value: unknown, extra: object = {}) =>
    createChannelOptions(
      unchecked({ methodConfig: [{ name: [{}], maxRequestMessageBytes: value, ...extra }] }),
      quiet,
    )['grpc.max_send_message_length'];

  it('reads 0, whole numbers and decimal strings', () => {
    expect(limit(0)).toBe(0);
    expect(limit(1024)).toBe(1024);
    expect(limit('2048')).toBe(2048);
    expect(limit(5, { maxRequestBytes: 5 })).toBe(5);
  });

  it.each([1.5, '12a', 'a12', '-1', '', true, Number.MAX_SAFE_INTEGER + 2])('refuses %j', (value) => {
    expect(() => limit(value)).toThrow(
      'methodConfig[0].maxRequestMessageBytes: must be a non-negative integer',
    );
  });

  it('with a default entry, grpc-js default does not count: the widest entry sets the channel limit', () => {
    const options = createChannelOptions(
      {
        methodConfig: [
          { name: [{}], maxResponseMessageBytes: 1000 },
          { name: [{ service: SERVICE }], maxResponseMessageBytes: 2000 },
        ],
      },
      quiet,
    );
    expect(options['grpc.max_receive_message_length']).toBe(2000);
  });

  it('warns about an entry whose limit is below the channel-wide one, naming it and the option', () => {
    const warnings: string[] = [];
    createChannelOptions(
      {
        methodConfig: [
          { name: [{}], maxResponseMessageBytes: 1000 },
          { name: [{ service: SERVICE }], maxResponseMessageBytes: 2000 },
        ],
      },
      { onWarning: (m) => warnings.push(m) },
    );
    expect(warnings).toEqual([
      'createChannelOptions: methodConfig[0].maxResponseMessageBytes (1000) is not enforced: grpc-js has only channel-wide message size limits, and grpc.max_receive_message_length is 2000 so that no method is refused a message its own entry allows',
    ]);
  });

  it("names the limit as the entry wrote it, grpc-js's spelling included", () => {
    const warnings: string[] = [];
    createChannelOptions(
      {
        methodConfig: [
          { name: [{}], maxRequestBytes: 1000 },
          { name: [{ service: SERVICE }], maxRequestMessageBytes: 2000 },
        ],
      },
      { onWarning: (m) => warnings.push(m) },
    );
    expect(warnings).toEqual([
      expect.stringMatching(
        /^createChannelOptions: methodConfig\[0\]\.maxRequestBytes \(1000\) is not enforced: .* grpc\.max_send_message_length is 2000 /,
      ),
    ]);
  });
});
