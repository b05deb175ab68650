/**
 * Script fields only some kinds of method can play (responses, failOnFirstMessage, echo) are refused for another
 * kind, where they would be ignored and the attempt would play something else than the test meant.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { CALL_ID_METADATA_KEY, FlakyServer, flakyMethodPath } from '../../src/testing/index.js';
import { scriptFitProblem } from '../../src/testing/script-method-fit.js';
import { testClient } from '../helpers/harness.js';

const kind = (requestStream: boolean, responseStream: boolean) => ({
  path: '/p.S/M',
  requestStream,
  responseStream,
});
const UNARY = kind(false, false);
const SERVER_STREAM = kind(false, true);
const CLIENT_STREAM = kind(true, false);
const BIDI = kind(true, true);

describe('scriptFitProblem', () => {
  it('names a field the method kind would ignore', () => {
    expect(scriptFitProblem({ responses: 3 }, UNARY)).toBe(
      '"responses" is for methods that stream responses (server streaming, bidi), and /p.S/M is unary: it would be ignored',
    );
    expect(scriptFitProblem({ responses: 0 }, CLIENT_STREAM)).toMatch(/and \/p\.S\/M is client streaming/);
    expect(scriptFitProblem({ failOnFirstMessage: true }, SERVER_STREAM)).toBe(
      '"failOnFirstMessage" is for methods that stream requests (client streaming, bidi), and /p.S/M is server streaming: it would be ignored',
    );
    expect(scriptFitProblem({ endBeforeHalfClose: true }, UNARY)).toBe(
      '"endBeforeHalfClose" is for methods that stream requests (client streaming, bidi), and /p.S/M is unary: it would be ignored',
    );
    expect(scriptFitProblem({ echo: true }, CLIENT_STREAM)).toBe(
      '"echo" is for bidi streaming methods, and /p.S/M is client streaming: it would be ignored',
    );
  });

  it('lets every field through where it plays, and false flags anywhere', () => {
    expect(scriptFitProblem({ responses: 2 }, SERVER_STREAM)).toBeUndefined();
    expect(scriptFitProblem({ responses: 2, echo: true, failOnFirstMessage: true }, BIDI)).toBeUndefined();
    expect(scriptFitProblem({ failOnFirstMessage: true }, CLIENT_STREAM)).toBeUndefined();
    expect(scriptFitProblem({ endBeforeHalfClose: true }, BIDI)).toBeUndefined();
    expect(scriptFitProblem({ echo: false, failOnFirstMessage: false, status: 14 }, UNARY)).toBeUndefined();
  });
});

describe('the flaky server', () => {
  let server: FlakyServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('refuses a method script that does not fit at once, and ends a call-id attempt INTERNAL', async () => {
    server = await FlakyServer.start();
    const unary = flakyMethodPath('Unary').slice(1);
    expect(() => server?.scriptMethod(unary, [{}, { responses: 3 }])).toThrow(
      `scriptMethod("${unary}")[1]: "responses" is for methods that stream responses (server streaming, bidi), and /${unary} is unary: it would be ignored`,
    );
    server.script('c1', [{ echo: true }]);
    const client = testClient(server.address);
    try {
      const metadata = new grpc.Metadata();
      metadata.set(CALL_ID_METADATA_KEY, 'c1');
      const error = await new Promise<grpc.ServiceError | null>((resolve) => {
        (client.Unary as (...args: unknown[]) => unknown)(
          { payload: 'p' },
          metadata,
          (err: grpc.ServiceError | null) => resolve(err),
        );
      });
      expect(error?.code).toBe(grpc.status.INTERNAL);
      expect(error?.details).toBe(
        `flaky server: script of attempt 1: "echo" is for bidi streaming methods, and /${unary} is unary: it would be ignored`,
      );
    } finally {
      client.close();
    }
  });
});
