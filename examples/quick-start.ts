// The README's quick start, whole: it runs as pasted. CI compiles it with strict tsc against the packed package
// and runs it, as ESM and as CommonJS (test/package/packed-package.test.ts).
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createRetryInterceptor, type ServiceConfigJson } from 'grpc-retry-hedging';
import { FlakyServer, greeterProtoPath } from 'grpc-retry-hedging/testing';

// Stand-ins for your .proto and your server: gRPC's hello-world Greeter, served by the package's flaky test
// server, whose first answer is UNAVAILABLE and second is a reply.
const protoFile = greeterProtoPath();
const server = await FlakyServer.start({ proto: protoFile });
server.scriptMethod('helloworld.Greeter/SayHello', [
  { status: 'UNAVAILABLE' },
  { response: { message: 'Hello world' } },
]);

// The service config (from a JSON file: loadServiceConfig('service-config.json')): retry UNAVAILABLE.
const config: ServiceConfigJson = {
  methodConfig: [
    {
      name: [{ service: 'helloworld.Greeter' }],
      retryPolicy: {
        maxAttempts: 4,
        initialBackoff: '0.01s',
        maxBackoff: '0.1s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
};

// Your client, as usual, with the interceptor. (A code generator gives you its type: proto-loader-gen-types,
// ts-proto, grpc-tools.)
interface GreeterClient extends grpc.Client {
  sayHello(
    request: { name: string },
    callback: grpc.requestCallback<{ message: string }>,
  ): grpc.ClientUnaryCall;
}
const proto = grpc.loadPackageDefinition(protoLoader.loadSync(protoFile));
const Greeter = (proto.helloworld as grpc.GrpcObject).Greeter as unknown as new (
  ...args: ConstructorParameters<grpc.ServiceClientConstructor>
) => GreeterClient;
const client = new Greeter(server.address, grpc.credentials.createInsecure(), {
  interceptors: [createRetryInterceptor(config)],
});

client.sayHello({ name: 'world' }, (error, reply) => {
  const attempts = server.attemptsOf('helloworld.Greeter/SayHello').length;
  console.log(error ?? reply, `after ${attempts} attempts`); // { message: 'Hello world' } after 2 attempts
  client.close();
  void server.stop();
});
