import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { createChannelOptions } from '../../src/config/channel-options.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { ServiceConfigError } from '../../src/config/service-config-error.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { CALL_ID_METADATA_KEY, FlakyServer, loadFlakyTestService } from '../../src/testing/index.js';
import { unchecked } from '../helpers/service-configs.js';

const SERVICE = 'grpc_retry_hedging.testing.v1.FlakyTest';
const retryPolicy = {
  maxAttempts: 3,
  initialBackoff: '0.01s',
  maxBackoff: '0.02s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};

function serviceConfigOf(options: grpc.ChannelOptions): Record<string, unknown> {
  return JSON.parse(options['grpc.service_config'] as string) as Record<string, unknown>;
}

const noWarnings = (message: string) => {
  throw new Error(`unexpected warning: ${message}`);
};

describe('createChannelOptions: what reaches grpc.service_config', () => {
  it('removes what the interceptor owns and keeps everything else as written', () => {
    const config = {
      loadBalancingConfig: [{ round_robin: {} }],
      healthCheckConfig: { serviceName: 'x' },
      methodConfig: [
        {
          name: [{ service: SERVICE }],
          retryPolicy,
          timeout: '0.3s',
          waitForReady: true,
          futureField: { a: 1 },
        },
        { name: [{ service: SERVICE, method: 'Unary' }], hedgingPolicy: { maxAttempts: 2 } },
      ],
      retryThrottling: { maxTokens: 10, tokenRatio: 0.1 },
    };
    const options = createChannelOptions(config, { onWarning: noWarnings });
    expect(Object.keys(options)).toEqual(['grpc.service_config']);
    expect(serviceConfigOf(options)).toEqual({
      loadBalancingConfig: [{ round_robin: {} }],
      healthCheckConfig: { serviceName: 'x' },
      methodConfig: [
        { name: [{ service: SERVICE }], futureField: { a: 1 } },
        { name: [{ service: SERVICE, method: 'Unary' }] },
      ],
    });
  });

  it('reads JSON text (with a BOM) the same way, drops nulls and normalizes names for grpc-js', () => {
    const text = `\uFEFF${JSON.stringify({
      loadBalancingPolicy: null,
      methodConfig: [
        { name: [{ service: SERVICE, method: null }, { service: '' }], waitForReady: null, retryPolicy },
        { retryPolicy },
      ],
    })}`;
    const options = createChannelOptions(text, { onWarning: noWarnings });
    expect(serviceConfigOf(options)).toEqual({
      methodConfig: [{ name: [{ service: SERVICE }, {}] }, { name: [] }],
    });
    // grpc-js's own parser accepts it (it throws from the client constructor otherwise) ...
    expect(() =>
      new grpc.Client('127.0.0.1:1', grpc.credentials.createInsecure(), options).close(),
    ).not.toThrow();
    // ... which it would not have done with the nulls left in.
    expect(
      () =>
        new grpc.Client('127.0.0.1:1', grpc.credentials.createInsecure(), {
          'grpc.service_config': text.slice(1),
        }),
    ).toThrow(/Invalid/);
  });

  it('gives the same errors as parseServiceConfig', () => {
    const bad = {
      methodConfig: [{ name: [{ service: SERVICE }], retryPolicy: { ...retryPolicy, maxAttempts: 1 } }],
    };
    let expected: unknown;
    try {
      parseServiceConfig(bad);
    } catch (error) {
      expected = error;
    }
    expect(expected).toBeInstanceOf(ServiceConfigError);
    expect(() => createChannelOptions(bad)).toThrow((expected as Error).message);
    expect(() => createChannelOptions('{"methodConfig": [}')).toThrow(/invalid JSON at line 1, column 19/);
  });

  it('checks loadBalancingConfig as grpc-js will, naming the path', () => {
    expect(() => createChannelOptions(unchecked({ loadBalancingConfig: {} }))).toThrow(
      'loadBalancingConfig: must be an array',
    );
    expect(() =>
      createChannelOptions({ loadBalancingConfig: [{ round_robin: {} }, { a: {}, b: {} }] }),
    ).toThrow('loadBalancingConfig[1]: must name exactly one load-balancing policy, got a, b');
    expect(() => createChannelOptions(unchecked({ loadBalancingConfig: [5] }))).toThrow(
      /loadBalancingConfig\[0\]: must be an object/,
    );
  });

  it('takes a parsed config as its source, and refuses bad options with a TypeError naming them', () => {
    expect(createChannelOptions(parseServiceConfig({ loadBalancingConfig: [{ round_robin: {} }] }))).toEqual(
      createChannelOptions({ loadBalancingConfig: [{ round_robin: {} }] }),
    );
    expect(() => createChannelOptions({}, { transparentRetries: 'no' as unknown as boolean })).toThrow(
      'options.transparentRetries must be true or false',
    );
    expect(() => createChannelOptions({}, { retries: false } as never)).toThrow(
      'options.retries is not an option',
    );
    expect(() => createChannelOptions(42 as unknown as object)).toThrow(TypeError);
  });

  it('turns grpc-js transparent retries off only when asked', () => {
    expect(createChannelOptions({})['grpc.enable_retries']).toBeUndefined();
    expect(createChannelOptions({}, { transparentRetries: false })['grpc.enable_retries']).toBe(0);
  });
});

describe('createChannelOptions: message size limits', () => {
  it('maps the limits of a default entry to the channel-wide options', () => {
    const options = createChannelOptions(
      {
        methodConfig: [
          { name: [{}], maxRequestMessageBytes: 1000, maxResponseMessageBytes: '2000' },
          {
            name: [{ service: SERVICE }],
            maxRequestMessageBytes: 1000,
            maxResponseMessageBytes: 2000,
            retryPolicy,
          },
        ],
      },
      { onWarning: noWarnings },
    );
    expect(options['grpc.max_send_message_length']).toBe(1000);
    expect(options['grpc.max_receive_message_length']).toBe(2000);
    expect(serviceConfigOf(options).methodConfig).toEqual([{ name: [{}] }, { name: [{ service: SERVICE }] }]);
  });

  it('never refuses a message that an entry allows, and warns about the limits it cannot enforce', () => {
    const warnings: string[] = [];
    const options = createChannelOptions(
      {
        methodConfig: [
          { name: [{}], maxResponseMessageBytes: 1000 },
          { name: [{ service: SERVICE }], maxResponseMessageBytes: 5000, maxRequestBytes: 10 },
        ],
      },
      { onWarning: (m) => warnings.push(m) },
    );
    expect(options['grpc.max_receive_message_length']).toBe(5000);
    // methods under the default entry have no send limit, so the channel cannot have one either
    expect(options['grpc.max_send_message_length']).toBeUndefined();
    expect(warnings).toEqual([
      expect.stringContaining('methodConfig[1].maxRequestBytes (10) is not enforced'),
      expect.stringContaining('methodConfig[0].maxResponseMessageBytes (1000) is not enforced'),
    ]);
  });

  it('warns when loadBalancingConfig names no policy grpc-js knows (grpc-js would run pick_first)', () => {
    const warnings: string[] = [];
    const config = { loadBalancingConfig: [{ round_robbin: {} }] };
    const options = createChannelOptions(config, { onWarning: (m) => warnings.push(m) });
    expect(serviceConfigOf(options).loadBalancingConfig).toEqual([{ round_robbin: {} }]);
    expect(warnings).toEqual([
      'createChannelOptions: loadBalancingConfig names no load-balancing policy this grpc-js knows ("round_robbin" ' +
        '(did you mean round_robin?)): grpc-js skips every entry and runs pick_first, which sends every attempt of a ' +
        'call down one connection to one server',
    ]);
    // A list may name other implementations' policies before one grpc-js has: nothing to say then.
    createChannelOptions(
      { loadBalancingConfig: [{ grpclb: {} }, { round_robin: {} }] },
      { onWarning: noWarnings },
    );
  });

  it('sends its warnings to process.emitWarning by default, each with its code', () => {
    const emitted: unknown[][] = [];
    const original = process.emitWarning;
    process.emitWarning = ((...args: unknown[]) => {
      emitted.push(args);
    }) as typeof process.emitWarning;
    try {
      createChannelOptions({ loadBalancingConfig: [{ round_robbin: {} }] });
      createChannelOptions({
        methodConfig: [{ name: [{ service: SERVICE }], maxResponseMessageBytes: 1024 }],
      });
    } finally {
      process.emitWarning = original;
    }
    expect(emitted.map((args) => (args[1] as { code: string }).code)).toEqual([
      'GRPC_RETRY_HEDGING_LB_POLICY',
      'GRPC_RETRY_HEDGING_MESSAGE_LIMIT',
    ]);
  });

  it('counts grpc-js default (4 MiB receive) for methods no entry names', () => {
    const warnings: string[] = [];
    const options = createChannelOptions(
      { methodConfig: [{ name: [{ service: SERVICE }], maxResponseMessageBytes: 1024 }] },
      { onWarning: (m) => warnings.push(m) },
    );
    expect(options['grpc.max_receive_message_length']).toBe(4 * 1024 * 1024);
    expect(warnings).toHaveLength(1);
    const larger = createChannelOptions(
      { methodConfig: [{ name: [{ service: SERVICE }], maxResponseBytes: 8 * 1024 * 1024 }] },
      { onWarning: noWarnings },
    );
    expect(larger['grpc.max_receive_message_length']).toBe(8 * 1024 * 1024);
  });

  it('rejects an invalid limit or two spellings that disagree', () => {
    expect(() => createChannelOptions({ methodConfig: [{ name: [{}], maxRequestBytes: -1 }] })).toThrow(
      'methodConfig[0].maxRequestBytes: must be a non-negative integer',
    );
    expect(() =>
      createChannelOptions({ methodConfig: [{ name: [{}], maxRequestBytes: 5, maxRequestMessageBytes: 6 }] }),
    ).toThrow('methodConfig[0].maxRequestBytes: is 5 but maxRequestMessageBytes says 6; give one limit');
  });

  it('the mapped receive limit is enforced by grpc-js', async () => {
    const server = await FlakyServer.start();
    const Client = loadFlakyTestService();
    const client = new Client(server.address, grpc.credentials.createInsecure(), {
      ...createChannelOptions({ methodConfig: [{ name: [{}], maxResponseMessageBytes: 10 }] }),
    }) as unknown as {
      Unary: (req: object, cb: (e: grpc.ServiceError | null) => void) => void;
      close(): void;
    };
    try {
      const error = await new Promise<grpc.ServiceError | null>((resolve) =>
        client.Unary({ payload: 'a payload longer than ten bytes' }, (e: grpc.ServiceError | null) =>
          resolve(e),
        ),
      );
      expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    } finally {
      client.close();
      await server.stop();
    }
  });
});

describe('createChannelOptions end to end', () => {
  const servers: FlakyServer[] = [];
  const clients: grpc.Client[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  const Client = loadFlakyTestService();
  type Unary = (req: object, md: grpc.Metadata, cb: (e: grpc.ServiceError | null) => void) => void;

  function unary(client: grpc.Client, callId: string): Promise<grpc.ServiceError | null> {
    const md = new grpc.Metadata();
    md.set(CALL_ID_METADATA_KEY, callId);
    return new Promise((resolve) =>
      (client as unknown as { Unary: Unary }).Unary({ payload: 'x' }, md, resolve),
    );
  }

  const config = { methodConfig: [{ name: [{ service: SERVICE }], retryPolicy }] };

  it('with the interceptor, a call makes exactly maxAttempts attempts (the raw config on the channel makes 9)', async () => {
    const server = await FlakyServer.start();
    servers.push(server);
    server.script('split', [{ status: grpc.status.UNAVAILABLE }]);
    server.script('raw', [{ status: grpc.status.UNAVAILABLE }]);

    const split = new Client(server.address, grpc.credentials.createInsecure(), {
      ...createChannelOptions(config),
      interceptors: [createRetryInterceptor(config)],
    });
    const raw = new Client(server.address, grpc.credentials.createInsecure(), {
      'grpc.service_config': JSON.stringify(config),
      interceptors: [createRetryInterceptor(config)],
    });
    clients.push(split, raw);

    expect((await unary(split, 'split'))?.code).toBe(grpc.status.UNAVAILABLE);
    expect((await unary(raw, 'raw'))?.code).toBe(grpc.status.UNAVAILABLE);
    expect(server.attempts('split')).toHaveLength(3);
    expect(server.attempts('raw')).toHaveLength(9);
  });

  it('loadBalancingConfig reaches grpc-js: round_robin spreads calls over two servers', async () => {
    const a = await FlakyServer.start();
    const b = await FlakyServer.start();
    servers.push(a, b);
    const target = `ipv4:127.0.0.1:${a.port},127.0.0.1:${b.port}`;
    const withLb = { ...config, loadBalancingConfig: [{ round_robin: {} }] };
    const roundRobin = new Client(target, grpc.credentials.createInsecure(), {
      ...createChannelOptions(withLb),
      interceptors: [createRetryInterceptor(withLb)],
    });
    clients.push(roundRobin);
    for (let i = 0; i < 10; i++) expect(await unary(roundRobin, `rr-${i}`)).toBeNull();
    expect(a.allAttempts().length).toBeGreaterThanOrEqual(3);
    expect(b.allAttempts().length).toBeGreaterThanOrEqual(3);
    expect(a.allAttempts().length + b.allAttempts().length).toBe(10);

    // Control: without it grpc-js picks the first address for every call.
    a.reset();
    b.reset();
    const pickFirst = new Client(target, grpc.credentials.createInsecure(), {
      ...createChannelOptions(config),
      interceptors: [createRetryInterceptor(config)],
    });
    clients.push(pickFirst);
    for (let i = 0; i < 10; i++) expect(await unary(pickFirst, `pf-${i}`)).toBeNull();
    expect([a.allAttempts().length, b.allAttempts().length].sort()).toEqual([0, 10]);
  });
});
