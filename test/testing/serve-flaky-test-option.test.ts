/** `serveFlakyTest: false`: the flaky server serves the user's services alone (first-hour audit F9). */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterEach, describe, expect, it } from 'vitest';
import { FlakyServer } from '../../src/testing/flaky-server.js';
import { createFlakyTestClient } from '../../src/testing/flaky-test-client.js';
import { greeterProtoPath } from '../../src/testing/proto-path.js';

const started: FlakyServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});

async function start(options: Parameters<typeof FlakyServer.start>[0]): Promise<FlakyServer> {
  const server = await FlakyServer.start(options);
  started.push(server);
  return server;
}

describe('FlakyServer option serveFlakyTest', () => {
  it('false: only the protos given are served, listed and scriptable; FlakyTest is UNIMPLEMENTED', async () => {
    const server = await start({ proto: greeterProtoPath(), serveFlakyTest: false });
    expect(server.servedMethods()).toEqual([
      '/helloworld.Greeter/SayHello',
      '/helloworld.Greeter/GetCached',
      '/helloworld.Greeter/StreamHellos',
    ]);
    expect(() => server.scriptMethod('grpc_retry_hedging.testing.v1.FlakyTest/Unary', [{}])).toThrow(
      /no served method "grpc_retry_hedging.testing.v1.FlakyTest\/Unary" \(served: helloworld\.Greeter\/SayHello, helloworld\.Greeter\/GetCached, helloworld\.Greeter\/StreamHellos\)/,
    );
    server.scriptMethod('helloworld.Greeter/SayHello', [{ response: { message: 'hi' } }]);
    const { helloworld } = grpc.loadPackageDefinition(
      protoLoader.loadSync(greeterProtoPath()),
    ) as unknown as {
      helloworld: { Greeter: grpc.ServiceClientConstructor };
    };
    const greeter = new helloworld.Greeter(server.address, grpc.credentials.createInsecure());
    const reply = await new Promise((resolve, reject) => {
      greeter.SayHello!({ name: 'x' }, (error: grpc.ServiceError | null, r: unknown) =>
        error ? reject(error) : resolve(r),
      );
    });
    greeter.close();
    expect(reply).toEqual({ message: 'hi' });

    const flaky = createFlakyTestClient(server.address);
    const code = await new Promise((resolve) => {
      flaky.Unary({ payload: 'p' }, (error) => resolve(error?.code));
    });
    flaky.close();
    expect(code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it('true (the default): FlakyTest is served beside the protos', async () => {
    const server = await start({ proto: greeterProtoPath() });
    expect(server.servedMethods()).toContain('/grpc_retry_hedging.testing.v1.FlakyTest/Unary');
    expect(server.servedMethods()).toContain('/helloworld.Greeter/SayHello');
  });

  it('refuses a value that is not a boolean, and false with nothing else to serve', async () => {
    await expect(FlakyServer.start({ serveFlakyTest: 'no' as unknown as boolean })).rejects.toThrow(
      'FlakyServer: option "serveFlakyTest" must be a boolean; got "no"',
    );
    await expect(FlakyServer.start({ serveFlakyTest: false })).rejects.toThrow(
      'FlakyServer: option "serveFlakyTest" is false and neither "proto" nor "services" is given: the server would serve nothing',
    );
  });
});
