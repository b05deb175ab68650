/**
 * The gRPC interop test cases (grpc/grpc doc/interop-test-descriptions.md) against a `grpc.testing.TestService`
 * server on 127.0.0.1, run bare and through the retry interceptor in each mode of ./interop-modes.ts. A case that
 * passes bare must pass, unchanged, through every mode: the interceptor is transparent to calls its policy does
 * not retry. In each mode the engine's own events are checked against what the application saw.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTEROP_CASES } from './interop-cases.js';
import { INTEROP_MODES, type ModeRun } from './interop-modes.js';
import { type InteropServer, startInteropServer } from './interop-server.js';

let server: InteropServer;

beforeAll(async () => {
  server = await startInteropServer();
});
afterAll(async () => {
  await server?.stop();
});

describe.each(INTEROP_MODES)('$name', (mode) => {
  let run: ModeRun;

  beforeAll(() => {
    run = mode.start(server.address);
  });
  afterAll(() => {
    run?.close();
  });

  it.each(INTEROP_CASES)('$name', async (interopCase) => {
    run.beforeCase();
    const handledBefore = server.handled.length;
    const codes = await interopCase.run(run.ctx);
    run.afterCase(codes, server.handled.slice(handledBefore));
  });

  it('the mode took part in the calls', async () => {
    await run.afterAll();
    expect(server.handled.length).toBeGreaterThan(0);
  });
});
