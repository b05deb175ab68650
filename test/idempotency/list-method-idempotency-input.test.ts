/**
 * listMethodIdempotency refuses what serviceConfigFromProtos refuses, with the same check: a Promise (a forgotten
 * `await` of protoLoader.load), `{}`, or a grpc-js client instance hold no service, and returning [] for them read
 * as protos whose methods are all unmarked.
 */
import { credentials, loadPackageDefinition, type ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { describe, expect, it } from 'vitest';
import { listMethodIdempotency } from '../../src/idempotency/idempotency-level.js';
import { serviceConfigFromProtos } from '../../src/idempotency/service-config-from-protos.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const CATALOG_PROTO = 'protos/catalog_demo.proto';
const retry = RETRY_UNAVAILABLE_POLICY;

function catalogClient() {
  const grpcObject = loadPackageDefinition(loadSync(CATALOG_PROTO)) as unknown as {
    catalog_demo: { v1: { Catalog: ServiceClientConstructor } };
  };
  const Client = grpcObject.catalog_demo.v1.Catalog;
  return { Client, client: new Client('localhost:1', credentials.createInsecure()) };
}

describe('listMethodIdempotency(source) refuses what serviceConfigFromProtos does', () => {
  const both = (source: unknown) =>
    [
      ['listMethodIdempotency', () => listMethodIdempotency(source as never)],
      ['serviceConfigFromProtos', () => serviceConfigFromProtos(source as never, { idempotent: retry })],
    ] as const;

  it('a Promise: await it', () => {
    const pending = Promise.resolve(loadSync(CATALOG_PROTO));
    for (const [name, call] of both(pending)) {
      expect(call).toThrow(
        new TypeError(
          `${name}: expected loaded protos, got a Promise; await protoLoader.load(...) first, or use protoLoader.loadSync(...)`,
        ),
      );
    }
  });

  it('{}: no service', () => {
    const [[, list], [, fromProtos]] = both({});
    expect(list).toThrow(
      new TypeError(
        'listMethodIdempotency: the loaded protos hold no service (pass the PackageDefinition of the files that declare the services)',
      ),
    );
    expect(fromProtos).toThrow(
      new TypeError(
        'serviceConfigFromProtos: the loaded protos hold no service, so no method would get a policy (pass the PackageDefinition of the files that declare the services)',
      ),
    );
  });

  it('a client instance: pass its class', () => {
    const { Client, client } = catalogClient();
    try {
      for (const [name, call] of both(client)) {
        expect(call).toThrow(
          new TypeError(
            `${name}: expected loaded protos, got a grpc-js client (of the service Catalog); pass its class (the service's client constructor) or the PackageDefinition it was made from`,
          ),
        );
      }
      expect(listMethodIdempotency(Client).length).toBeGreaterThan(0);
    } finally {
      client.close();
    }
  });
});
