import 'reflect-metadata';
import { Metadata } from '@grpc/grpc-js';
import { NestFactory } from '@nestjs/core';
import { type ClientGrpc, ClientsModule, Transport } from '@nestjs/microservices';
import { createRetryInterceptor } from 'grpc-retry-hedging';
import { FlakyServer, flakyTestProtoPath } from 'grpc-retry-hedging/testing';
import { firstValueFrom, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { main } from '../../examples/integrations/nestjs.js';
import { retryConfig } from '../helpers/harness.js';
import { expectRetriedAndHedged } from './integration-result.js';

describe('NestJS ClientsModule (Transport.GRPC) with the interceptor in channelOptions', () => {
  it('retries a call that fails twice and hedges a read, as the server saw', async () => {
    expectRetriedAndHedged(await main(() => {}));
  });

  it('ignores an interceptor put in options.interceptors (nestjs/nest#9079): the call is not retried', async () => {
    const server = await FlakyServer.start();
    const clients = ClientsModule.register([
      {
        name: 'MISPLACED',
        transport: Transport.GRPC,
        options: {
          url: server.address,
          package: 'grpc_retry_hedging.testing.v1',
          protoPath: flakyTestProtoPath(),
          // Not a GrpcOptions key, and Nest never reads it; TypeScript lets it through (register() also takes
          // CustomClientOptions, whose options are Record<string, any>), so this compiles as a user would write it.
          interceptors: [createRetryInterceptor(retryConfig())],
        },
      },
    ]);
    const app = await NestFactory.createApplicationContext(clients, { logger: false });
    try {
      const service = app
        .get<ClientGrpc>('MISPLACED')
        .getService<{ Unary(r: object, md: Metadata): Observable<unknown> }>('FlakyTest');
      server.script('misplaced', [{ status: 'UNAVAILABLE' }, {}]);
      const md = new Metadata();
      md.set('x-flaky-call-id', 'misplaced');
      await expect(firstValueFrom(service.Unary({ payload: 'x' }, md))).rejects.toMatchObject({ code: 14 });
      expect(server.attempts('misplaced')).toHaveLength(1);
    } finally {
      await app.close();
      await server.stop();
    }
  });
});
