/**
 * NestJS: a gRPC client registered with `ClientsModule` (Transport.GRPC), with the retry interceptor, making a call
 * that fails twice and a hedged read against the flaky test server.
 *
 * The interceptor goes under `options.channelOptions.interceptors`: Nest passes `channelOptions` to the grpc-js
 * client constructor, which reads `interceptors` from there. An `options.interceptors` key is not part of Nest's
 * GrpcOptions and is ignored (nestjs/nest#9079).
 *
 * Run: npm run build && node --import tsx examples/integrations/nestjs.ts
 */
import 'reflect-metadata';
import { fileURLToPath } from 'node:url';
import { Metadata } from '@grpc/grpc-js';
import { NestFactory } from '@nestjs/core';
import { type ClientGrpc, ClientsModule, Transport } from '@nestjs/microservices';
import { createRetryInterceptor } from 'grpc-retry-hedging';
import { flakyTestProtoPath } from 'grpc-retry-hedging/testing';
import { firstValueFrom, type Observable, toArray } from 'rxjs';
import {
  FAILS_TWICE,
  type IntegrationResult,
  integrationServiceConfig,
  report,
  SLOW_FIRST_ATTEMPT,
  startFlakyBackend,
} from './flaky-backend.js';

interface TestResponse {
  payload: string;
  attempt: number;
}
/** The service as Nest's ClientGrpc.getService returns it: every method returns an Observable. */
interface FlakyTestService {
  Unary(request: { payload: string }, metadata: Metadata): Observable<TestResponse>;
  ServerStream(request: { payload: string }, metadata: Metadata): Observable<TestResponse>;
}

export async function main(print: (line: string) => void = console.log): Promise<IntegrationResult> {
  const server = await startFlakyBackend();
  const serviceConfig = integrationServiceConfig();

  // recipe: nestjs
  const clients = ClientsModule.register([
    {
      name: 'FLAKY_TEST',
      transport: Transport.GRPC,
      options: {
        url: server.address,
        package: 'grpc_retry_hedging.testing.v1',
        protoPath: flakyTestProtoPath(),
        // Here, not in `options.interceptors`: Nest hands channelOptions to the grpc-js client.
        channelOptions: { interceptors: [createRetryInterceptor(serviceConfig)] },
      },
    },
  ]);
  const app = await NestFactory.createApplicationContext(clients, { logger: false });
  const flakyTest = app.get<ClientGrpc>('FLAKY_TEST').getService<FlakyTestService>('FlakyTest');
  // end recipe

  const metadata = (callId: string) => {
    const md = new Metadata();
    md.set('x-flaky-call-id', callId);
    return md;
  };
  try {
    const retried = await firstValueFrom(flakyTest.Unary({ payload: 'write' }, metadata(FAILS_TWICE)));
    const hedged = await firstValueFrom(
      flakyTest.ServerStream({ payload: 'read' }, metadata(SLOW_FIRST_ATTEMPT)).pipe(toArray()),
    );
    return await report('NestJS', server, { retried, hedged }, print);
  } finally {
    await app.close();
    await server.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
