import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPackageDefinition, type ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { afterAll, describe, expect, it } from 'vitest';
import { type CheckReport, runCheck } from '../../src/cli/check.js';
import { findMethodPolicy } from '../../src/config/method-policy.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { listMethodIdempotency } from '../../src/idempotency/idempotency-level.js';
import {
  type IdempotencyPolicies,
  serviceConfigFromProtos,
} from '../../src/idempotency/service-config-from-protos.js';

const CATALOG_PROTO = 'protos/catalog_demo.proto';
const FLAKY_PROTO = 'protos/flaky_test.proto';
const CATALOG = 'catalog_demo.v1.Catalog';

const hedge = {
  hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.05s', nonFatalStatusCodes: ['UNAVAILABLE'] },
};
const retry = {
  retryPolicy: {
    maxAttempts: 4,
    initialBackoff: '0.1s',
    maxBackoff: '1s',
    backoffMultiplier: 2,
    retryableStatusCodes: ['UNAVAILABLE'],
  },
};

// The configs `check` writes go under one scratch directory, removed when the file's tests end.
const SCRATCH = mkdtempSync(join(tmpdir(), 'grh-idem-'));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

async function check(configJson: object, proto: string): Promise<{ code: number; report: CheckReport }> {
  const dir = mkdtempSync(join(SCRATCH, 'config-'));
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(configJson));
  let stdout = '';
  const code = await runCheck([file, '--proto', proto, '--json'], {
    stdout: (s) => {
      stdout += s;
    },
    stderr: () => {},
  });
  return { code, report: JSON.parse(stdout) as CheckReport };
}

describe('listMethodIdempotency', () => {
  const expected = [
    { method: 'GetItem', level: 'NO_SIDE_EFFECTS', requestStream: false, responseStream: false },
    { method: 'ListItems', level: 'NO_SIDE_EFFECTS', requestStream: false, responseStream: true },
    { method: 'PutItem', level: 'IDEMPOTENT', requestStream: false, responseStream: false },
    { method: 'AddStock', level: 'IDEMPOTENCY_UNKNOWN', requestStream: false, responseStream: false },
  ].map((m) => ({ service: CATALOG, path: `/${CATALOG}/${m.method}`, ...m }));

  it('reads option idempotency_level from a proto-loader PackageDefinition, whatever the load options', () => {
    expect(listMethodIdempotency(loadSync(CATALOG_PROTO))).toEqual(expected);
    expect(
      listMethodIdempotency(loadSync(CATALOG_PROTO, { keepCase: true, enums: String, defaults: true })),
    ).toEqual(expected);
  });

  it('reads it from a protobufjs Root too, including levels written as numbers', () => {
    expect(listMethodIdempotency(protobuf.loadSync(CATALOG_PROTO))).toEqual(expected);
    const root = protobuf.Root.fromJSON({
      nested: {
        a: {
          nested: {
            S: {
              methods: {
                Read: {
                  requestType: 'M',
                  responseType: 'M',
                  comment: '',
                  options: { idempotency_level: 1 },
                },
                Write: {
                  requestType: 'M',
                  responseType: 'M',
                  comment: '',
                  options: { idempotency_level: 2 },
                },
              },
            },
            M: { fields: {} },
          },
        },
      },
    });
    expect(listMethodIdempotency(root).map((m) => [m.path, m.level])).toEqual([
      ['/a.S/Read', 'NO_SIDE_EFFECTS'],
      ['/a.S/Write', 'IDEMPOTENT'],
    ]);
  });

  it('rejects an unknown level and a source that is not protos', () => {
    const root = protobuf.Root.fromJSON({
      nested: {
        S: {
          methods: {
            X: {
              requestType: 'M',
              responseType: 'M',
              comment: '',
              options: { idempotency_level: 'SOMETIMES' },
            },
          },
        },
        M: { fields: {} },
      },
    });
    expect(() => listMethodIdempotency(root)).toThrow(
      'listMethodIdempotency: S/X has idempotency_level "SOMETIMES", expected one of IDEMPOTENCY_UNKNOWN, NO_SIDE_EFFECTS, IDEMPOTENT',
    );
    expect(() => listMethodIdempotency(null as never)).toThrow(TypeError);
  });
});

describe('serviceConfigFromProtos', () => {
  it('hedges NO_SIDE_EFFECTS reads, retries IDEMPOTENT writes and leaves the rest alone', () => {
    const config = serviceConfigFromProtos(loadSync(CATALOG_PROTO), {
      noSideEffects: hedge,
      idempotent: retry,
    });
    expect(config).toEqual({
      methodConfig: [
        {
          name: [
            { service: CATALOG, method: 'GetItem' },
            { service: CATALOG, method: 'ListItems' },
          ],
          ...hedge,
        },
        { name: [{ service: CATALOG, method: 'PutItem' }], ...retry },
      ],
      // Some method is hedged: round_robin, so that a hedge can reach another server.
      loadBalancingConfig: [{ round_robin: {} }],
    });
    const parsed = parseServiceConfig(config);
    expect(findMethodPolicy(parsed, `/${CATALOG}/GetItem`)?.policy.kind).toBe('hedging');
    expect(findMethodPolicy(parsed, `/${CATALOG}/PutItem`)?.policy.kind).toBe('retry');
    expect(findMethodPolicy(parsed, `/${CATALOG}/AddStock`)).toBeUndefined();
    // the result is a copy: editing it leaves the caller's policies alone
    config.methodConfig[0]!.hedgingPolicy!.maxAttempts = 5;
    expect(hedge.hedgingPolicy.maxAttempts).toBe(3);
  });

  it('passes the check CLI cleanly against its proto', async () => {
    const config = serviceConfigFromProtos(protobuf.loadSync(CATALOG_PROTO), {
      noSideEffects: hedge,
      idempotent: retry,
      retryThrottling: { maxTokens: 10, tokenRatio: 0.1 },
    });
    const { code, report } = await check(config, CATALOG_PROTO);
    expect(code).toBe(0);
    expect(report.valid).toBe(true);
    expect(report.warnings).toEqual([]);
    expect(report.entries.map((e) => [e.names, e.policy?.kind])).toEqual([
      [[`${CATALOG}/GetItem`, `${CATALOG}/ListItems`], 'hedging'],
      [[`${CATALOG}/PutItem`], 'retry'],
    ]);
  });

  it('NO_SIDE_EFFECTS methods take the idempotent policy unless told otherwise', () => {
    const definition = loadSync(CATALOG_PROTO);
    const inherited = serviceConfigFromProtos(definition, { idempotent: retry });
    expect(inherited.methodConfig).toEqual([
      {
        name: [
          { service: CATALOG, method: 'GetItem' },
          { service: CATALOG, method: 'ListItems' },
        ],
        ...retry,
      },
      { name: [{ service: CATALOG, method: 'PutItem' }], ...retry },
    ]);
    const alone = serviceConfigFromProtos(definition, { idempotent: retry, noSideEffects: false });
    expect(alone.methodConfig.map((e) => e.name)).toEqual([[{ service: CATALOG, method: 'PutItem' }]]);
  });

  it('an explicit unknown policy covers unmarked methods; include filters methods', () => {
    const definition = loadSync(CATALOG_PROTO);
    const all = serviceConfigFromProtos(definition, { unknown: { ...retry, timeout: '2s' } });
    expect(all.methodConfig).toEqual([
      { name: [{ service: CATALOG, method: 'AddStock' }], ...retry, timeout: '2s' },
    ]);
    const filtered = serviceConfigFromProtos(definition, {
      noSideEffects: hedge,
      include: (m) => !m.responseStream,
    });
    expect(filtered.methodConfig.map((e) => e.name)).toEqual([[{ service: CATALOG, method: 'GetItem' }]]);
  });

  it("from the repository's own flaky_test.proto (every method IDEMPOTENT): retried, and check is clean", async () => {
    const definition = loadSync(FLAKY_PROTO);
    const service = 'grpc_retry_hedging.testing.v1.FlakyTest';
    const safe = serviceConfigFromProtos(definition, { noSideEffects: hedge, idempotent: retry });
    expect(safe.methodConfig).toEqual([
      {
        name: ['Unary', 'ServerStream', 'ClientStream', 'Bidi'].map((method) => ({ service, method })),
        ...retry,
      },
    ]);
    const { code, report } = await check(safe, FLAKY_PROTO);
    expect(code).toBe(0);
    expect(report.entries[0]?.names).toHaveLength(4);
    expect(report.warnings ?? []).toEqual([]);
    // Asked for nothing on IDEMPOTENT methods: nothing is generated.
    expect(serviceConfigFromProtos(definition, { unknown: retry })).toEqual({ methodConfig: [] });
  });

  it('names the bad field as the caller wrote it', () => {
    const definition = loadSync(CATALOG_PROTO);
    const badRetry = { retryPolicy: { ...retry.retryPolicy, maxAttempts: 1 } };
    expect(() => serviceConfigFromProtos(definition, { idempotent: badRetry })).toThrow(
      'policies.idempotent.retryPolicy.maxAttempts: must be an integer greater than 1, got 1; for a single attempt, leave the retryPolicy out (without a policy, a call makes one attempt)',
    );
    expect(() => serviceConfigFromProtos(definition, { idempotent: { ...retry, timeout: 'soon' } })).toThrow(
      /^policies\.idempotent\.timeout: /,
    );
    expect(() =>
      serviceConfigFromProtos(definition, {
        idempotent: { ...retry, ...hedge },
      } as unknown as IdempotencyPolicies),
    ).toThrow('policies.idempotent: must have exactly one of retryPolicy and hedgingPolicy');
    expect(() =>
      serviceConfigFromProtos(definition, {
        idempotent: { ...retry, name: [] },
      } as unknown as IdempotencyPolicies),
    ).toThrow(
      'policies.idempotent.name: is not a field of this policy (retryPolicy, hedgingPolicy, timeout, waitForReady)',
    );
    expect(() =>
      serviceConfigFromProtos(definition, { retryThrottling: { maxTokens: 0, tokenRatio: 0.1 } }),
    ).toThrow(/^policies\.retryThrottling\.maxTokens: must be an integer greater than 0/);
    expect(() =>
      serviceConfigFromProtos(definition, { readOnly: hedge } as unknown as IdempotencyPolicies),
    ).toThrow('serviceConfigFromProtos: policies.readOnly is not an option (known:');
    expect(() =>
      serviceConfigFromProtos(definition, { idempotnt: retry } as unknown as IdempotencyPolicies),
    ).toThrow('serviceConfigFromProtos: policies.idempotnt is not an option; did you mean "idempotent"?');
  });

  it('takes what grpc.loadPackageDefinition returns, a client constructor, and one service definition', () => {
    const definition = loadSync(CATALOG_PROTO);
    const policies = { noSideEffects: hedge, idempotent: retry };
    const expected = serviceConfigFromProtos(definition, policies);
    expect(expected.methodConfig.flatMap((entry) => entry.name)).toHaveLength(3);
    expect(serviceConfigFromProtos(loadPackageDefinition(definition), policies)).toEqual(expected);
    expect(serviceConfigFromProtos(definition[CATALOG] as never, policies)).toEqual(expected);
    const grpcObject = loadPackageDefinition(definition) as unknown as {
      catalog_demo: { v1: { Catalog: ServiceClientConstructor } };
    };
    expect(serviceConfigFromProtos(grpcObject.catalog_demo.v1.Catalog, policies)).toEqual(expected);
    expect(listMethodIdempotency(loadPackageDefinition(definition))).toEqual(
      listMethodIdempotency(definition),
    );
  });

  it('names a file name passed as the source, and protos without a service', () => {
    expect(() => serviceConfigFromProtos(CATALOG_PROTO as never, { idempotent: retry })).toThrow(
      `serviceConfigFromProtos: expected loaded protos, got the string "${CATALOG_PROTO}"; load the file first: serviceConfigFromProtos(protoLoader.loadSync("${CATALOG_PROTO}"), ...)`,
    );
    expect(() => serviceConfigFromProtos(42 as never, { idempotent: retry })).toThrow(
      'serviceConfigFromProtos: expected loaded protos (a @grpc/proto-loader PackageDefinition, a GrpcObject from grpc.loadPackageDefinition, or a protobufjs Root), got number',
    );
    const messagesOnly = protobuf.Root.fromJSON({ nested: { M: { fields: {} } } });
    expect(() => serviceConfigFromProtos(messagesOnly, { idempotent: retry })).toThrow(
      'serviceConfigFromProtos: the loaded protos hold no service',
    );
    expect(() => serviceConfigFromProtos({}, { idempotent: retry })).toThrow(
      'serviceConfigFromProtos: the loaded protos hold no service',
    );
  });
});
