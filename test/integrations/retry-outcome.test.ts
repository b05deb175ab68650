/**
 * `retryOutcomeOf` through the frameworks of docs/integrations.md: it reads grpc-js's own error (by its trailers
 * object), so it works where the framework hands the application grpc-js's error, and not where it builds an error
 * of its own from the status (nice-grpc's ClientError, protobuf-ts's RpcError): there, a per-call or interceptor
 * `onEvent` says the same. The table in docs/integrations.md says which is which; this keeps it true.
 */
import 'reflect-metadata';
import { ChannelCredentials, credentials, Metadata } from '@grpc/grpc-js';
import { NestFactory } from '@nestjs/core';
import { type ClientGrpc, ClientsModule, Transport } from '@nestjs/microservices';
import { GrpcTransport } from '@protobuf-ts/grpc-transport';
import { createRetryInterceptor, interceptChannel, retryOutcomeOf } from 'grpc-retry-hedging';
import { FlakyServer, flakyTestProtoPath } from 'grpc-retry-hedging/testing';
import { createChannel, createClient, Metadata as NiceMetadata, Status } from 'nice-grpc';
import { firstValueFrom, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integrationServiceConfig } from '../../examples/integrations/flaky-backend.js';
import { FlakyTestClient as ProtobufTsClient } from '../../examples/integrations/generated/protobuf-ts/flaky_test.client.js';
import {
  FlakyTestService,
  TestRequest,
  FlakyTestClient as TsProtoClient,
} from '../../examples/integrations/generated/ts-proto/flaky_test.js';
import { retryOutcomeTrailers } from '../../examples/integrations/nice-grpc.js';

/** The integration config retries Unary up to 4 attempts on UNAVAILABLE; this call fails every one. */
const ALWAYS_FAILS = 'always-fails';
const EXHAUSTED = { attempts: 4, reason: 'attempts-exhausted' };

let server: FlakyServer;
beforeAll(async () => {
  server = await FlakyServer.start();
  server.script(ALWAYS_FAILS, [{ status: 'UNAVAILABLE' }]);
});
afterAll(async () => {
  await server.stop();
});

function callIdMetadata(): Metadata {
  const md = new Metadata();
  md.set('x-flaky-call-id', ALWAYS_FAILS);
  return md;
}

/** The error a failing promise rejects with. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('the call did not fail');
}

describe('retryOutcomeOf through the frameworks', () => {
  it("ts-proto (grpc-js output): the callback error is grpc-js's, and tells", async () => {
    const client = new TsProtoClient(server.address, credentials.createInsecure(), {
      interceptors: [createRetryInterceptor(integrationServiceConfig())],
    });
    try {
      const error = await rejectionOf(
        new Promise((resolve, reject) =>
          client.unary(TestRequest.fromPartial({ payload: 'x' }), callIdMetadata(), (e, r) =>
            e ? reject(e) : resolve(r),
          ),
        ),
      );
      expect(retryOutcomeOf(error)).toEqual(EXHAUSTED);
    } finally {
      client.close();
    }
  });

  it("NestJS: the Observable's error is grpc-js's, and tells", async () => {
    const clients = ClientsModule.register([
      {
        name: 'FLAKY',
        transport: Transport.GRPC,
        options: {
          url: server.address,
          package: 'grpc_retry_hedging.testing.v1',
          protoPath: flakyTestProtoPath(),
          channelOptions: { interceptors: [createRetryInterceptor(integrationServiceConfig())] },
        },
      },
    ]);
    const app = await NestFactory.createApplicationContext(clients, { logger: false });
    try {
      const service = app
        .get<ClientGrpc>('FLAKY')
        .getService<{ Unary(r: object, md: Metadata): Observable<unknown> }>('FlakyTest');
      const error = await rejectionOf(firstValueFrom(service.Unary({ payload: 'x' }, callIdMetadata())));
      expect(retryOutcomeOf(error)).toEqual(EXHAUSTED);
    } finally {
      await app.close();
    }
  });

  it('protobuf-ts: its RpcError is its own, and does not tell', async () => {
    const transport = new GrpcTransport({
      host: server.address,
      channelCredentials: ChannelCredentials.createInsecure(),
      clientOptions: { interceptors: [createRetryInterceptor(integrationServiceConfig())] },
    });
    const client = new ProtobufTsClient(transport);
    try {
      const call = client.unary(
        { payload: 'x', blob: new Uint8Array(), requestId: '' },
        { meta: { 'x-flaky-call-id': ALWAYS_FAILS } },
      );
      const error = await rejectionOf(call.response);
      expect(error).toMatchObject({ name: 'RpcError', code: 'UNAVAILABLE' });
      expect(retryOutcomeOf(error)).toBeUndefined();
    } finally {
      transport.close();
    }
  });

  it('nice-grpc: its ClientError is its own, and does not tell', async () => {
    const channel = interceptChannel(createChannel(server.address), [
      createRetryInterceptor(integrationServiceConfig()),
    ]);
    const client = createClient(FlakyTestService, channel);
    try {
      const error = await rejectionOf(
        client.unary(TestRequest.fromPartial({ payload: 'x' }), {
          metadata: NiceMetadata({ 'x-flaky-call-id': ALWAYS_FAILS }),
        }),
      );
      expect(error).toMatchObject({ name: 'ClientError' });
      expect(retryOutcomeOf(error)).toBeUndefined();
    } finally {
      channel.close();
    }
  });

  it('nice-grpc: an interceptor before the retry interceptor hands the outcome to onTrailer', async () => {
    const channel = interceptChannel(createChannel(server.address), [
      retryOutcomeTrailers,
      createRetryInterceptor(integrationServiceConfig()),
    ]);
    const client = createClient(FlakyTestService, channel);
    try {
      const trailers: Array<[string | undefined, string | undefined]> = [];
      const error = await rejectionOf(
        client.unary(TestRequest.fromPartial({ payload: 'x' }), {
          metadata: NiceMetadata({ 'x-flaky-call-id': ALWAYS_FAILS }),
          onTrailer: (t) => trailers.push([t.get('x-retry-attempts'), t.get('x-retry-reason')]),
        }),
      );
      expect(error).toMatchObject({ name: 'ClientError', code: Status.UNAVAILABLE });
      expect(trailers).toEqual([['4', 'attempts-exhausted']]);

      // A call answered at its first attempt has no outcome: its trailers are left as they were.
      const answered: Array<string | undefined> = [];
      await client.unary(TestRequest.fromPartial({ payload: 'x' }), {
        onTrailer: (t) => answered.push(t.get('x-retry-attempts')),
      });
      expect(answered).toEqual([undefined]);
    } finally {
      channel.close();
    }
  });
});
