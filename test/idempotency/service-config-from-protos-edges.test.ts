/**
 * serviceConfigFromProtos and listMethodIdempotency at their edges (found by their first mutation run): policies
 * that are not an object or an `include` that is not a function, the round_robin added only for hedging, streaming
 * methods, a service reached twice, and the words of the warning when no method gets a policy.
 */
import { loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { describe, expect, it } from 'vitest';
import {
  listMethodIdempotency,
  type ProtoMethodIdempotency,
} from '../../src/idempotency/idempotency-level.js';
import { serviceConfigFromProtos, whyNoMethod } from '../../src/idempotency/service-config-from-protos.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const FLAKY_PROTO = 'protos/flaky_test.proto';
const CATALOG_PROTO = 'protos/catalog_demo.proto';
const retry = RETRY_UNAVAILABLE_POLICY;
const hedge = { hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.05s' } };

describe('serviceConfigFromProtos: its policies argument', () => {
  it.each([
    ['null', null, 'null'],
    ['undefined', undefined, 'nothing'],
    ['a string', 'idempotent', '"idempotent"'],
    ['a number', 5, '5'],
    // an array was taken as an object with keys "0", "1": the error named policies.0 as an unknown option
    ['an array', [retry], '[{"retryPolicy":{"maxAttempts":3,"initialBackoff":"0.1s",...'],
  ])('refuses policies that are %s, saying what they got', (_name, policies, shown) => {
    expect(() => serviceConfigFromProtos(loadSync(CATALOG_PROTO), policies as never)).toThrow(
      new TypeError(
        `serviceConfigFromProtos: policies must be an object (of policies by idempotency level), got ${shown}`,
      ),
    );
  });

  it('refuses an include that is not a function, and lists the known keys for an unknown one', () => {
    expect(() =>
      serviceConfigFromProtos(loadSync(CATALOG_PROTO), { idempotent: retry, include: 'Get*' as never }),
    ).toThrow(new TypeError('serviceConfigFromProtos: policies.include must be a function, got "Get*"'));
    expect(() => serviceConfigFromProtos(loadSync(CATALOG_PROTO), { zzz: retry } as never)).toThrow(
      new TypeError(
        'serviceConfigFromProtos: policies.zzz is not an option (known: noSideEffects, idempotent, unknown, retryThrottling, include)',
      ),
    );
  });

  it.each([
    ['a number', 5, '5'],
    ['null', null, 'null'],
    ['an array', [{ maxTokens: 10, tokenRatio: 0.1 }], '[{"maxTokens":10,"tokenRatio":0.1}]'],
  ])('refuses a retryThrottling that is %s, naming what it is', (_name, retryThrottling, shown) => {
    // It was spread into an object first, so the error said maxTokens was missing ("got nothing").
    expect(() =>
      serviceConfigFromProtos(loadSync(CATALOG_PROTO), {
        idempotent: retry,
        retryThrottling: retryThrottling as never,
      }),
    ).toThrow(`policies.retryThrottling: must be an object, got ${shown}`);
  });

  it('adds round_robin only when an entry hedges', () => {
    const retried = serviceConfigFromProtos(loadSync(CATALOG_PROTO), {
      idempotent: retry,
      noSideEffects: retry,
    });
    expect(retried.loadBalancingConfig).toBeUndefined();
    const hedged = serviceConfigFromProtos(loadSync(CATALOG_PROTO), {
      idempotent: retry,
      noSideEffects: hedge,
    });
    expect(hedged.loadBalancingConfig).toEqual([{ round_robin: {} }]);
  });
});

describe('listMethodIdempotency', () => {
  it('says which methods stream requests and which stream responses', () => {
    const found = listMethodIdempotency(loadSync(FLAKY_PROTO)).map((m) => [
      m.method,
      m.requestStream,
      m.responseStream,
    ]);
    expect(found).toEqual([
      ['Unary', false, false],
      ['ServerStream', false, true],
      ['ClientStream', true, false],
      ['Bidi', true, true],
    ]);
  });

  it('lists a service reached twice in the source once', () => {
    const definition = loadSync(FLAKY_PROTO);
    const both = { definition, clients: loadPackageDefinition(definition) };
    expect(listMethodIdempotency(both).map((m) => m.method)).toEqual([
      'Unary',
      'ServerStream',
      'ClientStream',
      'Bidi',
    ]);
  });
});

describe('whyNoMethod: the words of the warning', () => {
  const method = (service: string, name: string): ProtoMethodIdempotency => ({
    service,
    method: name,
    path: `/${service}/${name}`,
    level: 'IDEMPOTENCY_UNKNOWN',
    requestStream: false,
    responseStream: false,
  });
  const withPolicy = new Map([['IDEMPOTENT', retry]] as const);

  it('one method, in the singular', () => {
    expect(whyNoMethod([method('a.S', 'M')], [], withPolicy)).toBe(
      'no method gets a policy: policies.include returned false for the 1 method of a.S',
    );
  });

  it('up to three services by name; past that, the first three and an ellipsis', () => {
    const three = ['a.A', 'b.B', 'c.C'].map((s) => method(s, 'M'));
    expect(whyNoMethod(three, [], withPolicy)).toBe(
      'no method gets a policy: policies.include returned false for the 3 methods of a.A, b.B, c.C',
    );
    const four = [...three, method('d.D', 'M')];
    expect(whyNoMethod(four, [], withPolicy)).toBe(
      'no method gets a policy: policies.include returned false for the 4 methods of a.A, b.B, c.C, …',
    );
  });
});

describe('listMethodIdempotency: what is not loaded protos', () => {
  it.each([
    ['null', null, 'null'],
    ['an array', [loadSync(FLAKY_PROTO)], 'an array'],
    ['a number', 7, 'number'],
    ['a boolean', true, 'boolean'],
  ])('%s is named in the error', (_name, source, shown) => {
    expect(() => listMethodIdempotency(source as never)).toThrow(
      new TypeError(
        `listMethodIdempotency: expected loaded protos (a @grpc/proto-loader PackageDefinition, a GrpcObject from grpc.loadPackageDefinition, or a protobufjs Root), got ${shown}`,
      ),
    );
  });

  it("a client instance whose class has no serviceName is named by its class, or as a service's", () => {
    const methods = { getChannel: () => ({}), waitForReady: () => {}, close: () => {} };
    class InventoryClient {
      getChannel = methods.getChannel;
      waitForReady = methods.waitForReady;
      close = methods.close;
    }
    const hint =
      "; pass its class (the service's client constructor) or the PackageDefinition it was made from";
    expect(() => listMethodIdempotency(new InventoryClient() as never)).toThrow(
      new TypeError(
        `listMethodIdempotency: expected loaded protos, got a grpc-js client (of InventoryClient)${hint}`,
      ),
    );
    expect(() => listMethodIdempotency(Object.assign(Object.create(null), methods) as never)).toThrow(
      new TypeError(
        `listMethodIdempotency: expected loaded protos, got a grpc-js client (of a service)${hint}`,
      ),
    );
  });
});
