/**
 * Minimal FlakyTest server for bench/overhead.ts, run in its own process:
 *   node --import tsx bench/overhead-server.ts [--stream-messages=20]
 *
 * Unary answers at once; ServerStream writes `streamMessages` responses and ends OK; ClientStream reads every
 * message and answers once the client half-closes. Nothing is recorded, so the
 * server costs as little as grpc-js allows. Prints `PORT <n>` on stdout; answers `ping` and `calls` over IPC.
 */
import * as grpc from '@grpc/grpc-js';
import { loadFlakyTestService } from 'grpc-retry-hedging/testing';
import { numericArgs } from './lib/args.js';
import { serveControl } from './lib/child-server.js';
import type { TestRequest, TestResponse } from './lib/grpc-calls.js';

const opts = numericArgs({ streamMessages: 20, port: 0 });

let calls = 0;
const server = new grpc.Server();
server.addService(loadFlakyTestService().service, {
  Unary: (
    call: grpc.ServerUnaryCall<TestRequest, TestResponse>,
    callback: grpc.sendUnaryData<TestResponse>,
  ) => {
    calls++;
    callback(null, { payload: call.request.payload ?? '', attempt: 1, messagesReceived: 0, index: 0 });
  },
  ServerStream: (call: grpc.ServerWritableStream<TestRequest, TestResponse>) => {
    calls++;
    const payload = call.request.payload ?? '';
    for (let index = 0; index < opts.streamMessages; index++) {
      call.write({ payload, attempt: 1, messagesReceived: 0, index });
    }
    call.end();
  },
  ClientStream: (
    call: grpc.ServerReadableStream<TestRequest, TestResponse>,
    callback: grpc.sendUnaryData<TestResponse>,
  ) => {
    calls++;
    let received = 0;
    call.on('data', () => {
      received++;
    });
    call.on('error', () => {});
    call.on('end', () => callback(null, { payload: '', attempt: 1, messagesReceived: received, index: 0 }));
  },
  Bidi: (call: grpc.ServerDuplexStream<TestRequest, TestResponse>) => {
    call.emit('error', { code: grpc.status.UNIMPLEMENTED, details: 'not used by the overhead benchmark' });
  },
});

const port = await new Promise<number>((resolve, reject) => {
  server.bindAsync(`127.0.0.1:${opts.port}`, grpc.ServerCredentials.createInsecure(), (error, bound) =>
    error ? reject(error) : resolve(bound),
  );
});

serveControl(
  port,
  {
    ping: () => 'pong',
    calls: () => calls,
  },
  () =>
    new Promise<void>((resolve) => {
      server.tryShutdown(() => resolve());
    }),
);
