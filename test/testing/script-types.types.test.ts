/**
 * What the flaky server's script API admits in its types, as a user writes scripts: a response typed by an
 * interface of theirs (as proto-loader-gen-types and ts-proto declare messages), scripts kept in readonly arrays or
 * written `as const`, and typed requests from every way of reading the log. `npm run typecheck` checks these lines;
 * the tests run them against a server.
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { findMethodPolicy } from '../../src/config/method-policy.js';
import type { ServiceConfigJson } from '../../src/config/service-config-json.js';
import { type AttemptScriptInput, FlakyServer, type RecordedAttempt } from '../../src/testing/index.js';

interface Reply {
  message: string;
}

let server: FlakyServer;
beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

describe('script types', () => {
  it('a response typed by an interface, and readonly scripts, are taken as they are', () => {
    const reply: Reply = { message: 'hi' };
    const readonlyScript: readonly AttemptScriptInput[] = [
      { status: 'UNAVAILABLE' },
      { response: { payload: 'x' } },
    ];
    const asConst = [{ status: 'UNAVAILABLE' }, {}] as const;
    server.script('typed-1', readonlyScript);
    server.script('typed-2', asConst);
    const withInterface: AttemptScriptInput = { status: 0, response: reply };
    expect(withInterface.response).toBe(reply);
  });

  it('waitForAttempts and allAttempts type the requests, as attempts and attemptsOf do', () => {
    expectTypeOf(server.allAttempts<{ payload: string }>()).toEqualTypeOf<
      readonly RecordedAttempt<{ payload: string }>[]
    >();
    expectTypeOf(server.waitForAttempts<{ payload: string }>('c', 1)).resolves.toEqualTypeOf<
      readonly RecordedAttempt<{ payload: string }>[]
    >();
  });

  it('findMethodPolicy takes service-config JSON, as the interceptor does', () => {
    const json: ServiceConfigJson = {
      methodConfig: [
        {
          name: [{ service: 'pkg.Svc' }],
          hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.01s', nonFatalStatusCodes: ['UNAVAILABLE'] },
        },
      ],
    };
    expect(findMethodPolicy(json, '/pkg.Svc/Get')).toMatchObject({
      policy: { kind: 'hedging' },
      matchedBy: 'service',
    });
  });
});
