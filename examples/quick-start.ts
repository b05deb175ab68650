/**
 * The README's example: a helloworld.Greeter client whose calls are retried and hedged as the service config says.
 * To run on its own it serves the Greeter with the package's flaky server, which fails the first attempt.
 *
 *   npm run build && node --import tsx examples/quick-start.ts
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createRetryInterceptor, loadServiceConfig } from 'grpc-retry-hedging';
import { FlakyServer } from 'grpc-retry-hedging/testing';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/**
 * The client type your code generator gives you (proto-loader-gen-types, ts-proto, grpc-tools), with the overloads
 * that take call options, where per-call retry options go (`withRetryOptions`, docs/configuration.md).
 */
interface GreeterClient extends grpc.Client {
  sayHello(
    request: { name: string },
    callback: grpc.requestCallback<{ message: string }>,
  ): grpc.ClientUnaryCall;
  sayHello(
    request: { name: string },
    options: grpc.CallOptions,
    callback: grpc.requestCallback<{ message: string }>,
  ): grpc.ClientUnaryCall;
  sayHello(
    request: { name: string },
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<{ message: string }>,
  ): grpc.ClientUnaryCall;
}
type GreeterConstructor = new (
  ...args: ConstructorParameters<grpc.ServiceClientConstructor>
) => GreeterClient;

export async function main(
  print: (line: string) => void = console.log,
): Promise<{ reply: unknown; attempts: number }> {
  const server = await FlakyServer.start({ proto: here('helloworld.proto') });
  server.scriptMethod('helloworld.Greeter/SayHello', [
    { status: 'UNAVAILABLE' },
    { response: { message: 'Hello' } },
  ]);
  const address = server.address;

  // Your client, as usual; the interceptor applies the service config's retryPolicy and hedgingPolicy.
  const proto = grpc.loadPackageDefinition(protoLoader.loadSync(here('helloworld.proto')));
  const Greeter = (proto.helloworld as grpc.GrpcObject).Greeter as unknown as GreeterConstructor;
  const config = loadServiceConfig(here('greeter-service-config.json'));
  const client = new Greeter(address, grpc.credentials.createInsecure(), {
    interceptors: [createRetryInterceptor(config)],
  });
  const reply = await new Promise((resolve, reject) => {
    client.sayHello({ name: 'world' }, (error, reply) => (error ? reject(error) : resolve(reply)));
  });
  print(`${JSON.stringify(reply)} after ${server.attemptsOf('helloworld.Greeter/SayHello').length} attempts`);

  client.close();
  await server.stop();
  return { reply, attempts: server.attemptsOf('helloworld.Greeter/SayHello').length };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
