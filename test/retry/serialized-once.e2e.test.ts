/**
 * A request written before the commit is serialized once, as without the interceptor: the engine's snapshot of it
 * (its size for the replay buffer, what a resend is checked against) is what grpc-js sends, in place of a second
 * serialization at the bottom of the chain (src/retry/request-serializer.ts). Each client here has method
 * definitions of its own, whose serializer counts its calls and stamps each output with its count (and, for some
 * tests, throws on chosen runs).
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAdaptiveThrottleInterceptor,
  createRetryInterceptor,
  retryOutcomeOf,
} from '../../src/index.js';
import { FlakyServer, loadFlakyTestService } from '../../src/testing/index.js';
import {
  clientStream,
  type FlakyClient,
  hedgingConfig,
  retryConfig,
  type TestRequest,
  unary,
} from '../helpers/harness.js';

let server: FlakyServer;
let n = 0;
const id = () => `once-${++n}`;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

interface Counted {
  client: FlakyClient;
  /** Serializations of request messages so far. */
  serialized(): number;
}

/**
 * A FlakyTest client on definitions of its own. Its request serializer stamps each serialization of a message's
 * `payload` with its count (`a#1`), so the server's records say which serialization went on the wire.
 */
function countedClient(interceptors: grpc.Interceptor[], throwsAt: readonly number[] = []): Counted {
  let count = 0;
  const service = loadFlakyTestService().service;
  const methods: Record<string, (typeof service)[string]> = {};
  for (const [name, method] of Object.entries(service)) {
    const definition = {
      ...method,
      requestSerialize: (request: TestRequest): Buffer => {
        count++;
        if (throwsAt.includes(count)) {
          throw new Error(`cannot serialize ${request.payload} (run ${count})`);
        }
        const payload = request.payload === undefined ? undefined : `${request.payload}#${count}`;
        return method.requestSerialize({ ...request, payload });
      },
    };
    methods[name] = definition;
  }
  const Client = grpc.makeGenericClientConstructor(methods, 'CountedFlakyTest');
  const client = new Client(server.address, grpc.credentials.createInsecure(), {
    interceptors,
    'grpc.enable_retries': 0,
  }) as unknown as FlakyClient;
  return { client, serialized: () => count };
}

const retrying = () => [createRetryInterceptor(retryConfig({ maxAttempts: 3 }))];

describe('a request serialized once', () => {
  it('unary: one serialization, as a bare client makes, and it is the one sent', async () => {
    for (const interceptors of [[], retrying()]) {
      const { client, serialized } = countedClient(interceptors);
      try {
        const callId = id();
        const outcome = await unary(client, callId, { payload: 'a' });
        expect(outcome.code).toBe(grpc.status.OK);
        expect(serialized()).toBe(1);
        expect(server.attempts(callId).map((a) => a.messages)).toEqual([['a#1']]);
      } finally {
        client.close();
      }
    }
  });

  it('an upload: one serialization per message, each the one sent', async () => {
    const requests = [{ payload: 'a' }, { payload: 'b' }, { payload: 'c' }];
    for (const interceptors of [[], retrying()]) {
      const { client, serialized } = countedClient(interceptors);
      try {
        const callId = id();
        const outcome = await clientStream(client, callId, requests);
        expect(outcome.code).toBe(grpc.status.OK);
        expect(serialized()).toBe(3);
        expect(server.attempts(callId).map((a) => a.messages)).toEqual([['a#1', 'b#2', 'c#3']]);
      } finally {
        client.close();
      }
    }
  });

  it('a retry resends the bytes the first attempt sent', async () => {
    const { client, serialized } = countedClient(retrying());
    try {
      const callId = id();
      server.script(callId, [{ status: 'UNAVAILABLE' }, {}]);
      const outcome = await clientStream(client, callId, [{ payload: 'a' }, { payload: 'b' }]);
      expect(outcome.code).toBe(grpc.status.OK);
      // Written: a#1, b#2. The checks that each is unchanged serialize them again (a stamp that differs each time
      // reads as a serializer's nonce, not a change), and the retry sends what was written, as grpc-js's own
      // retries resend the bytes of the first attempt.
      expect(server.attempts(callId).map((a) => a.messages)).toEqual([
        ['a#1', 'b#2'],
        ['a#1', 'b#2'],
      ]);
      expect(serialized()).toBeGreaterThan(2);
    } finally {
      client.close();
    }
  });

  it('with checkResentRequests: false, the retry carries the bytes first written, serialized no more', async () => {
    const interceptor = createRetryInterceptor(retryConfig({ maxAttempts: 3 }), {
      checkResentRequests: false,
    });
    const { client, serialized } = countedClient([interceptor]);
    try {
      const callId = id();
      server.script(callId, [{ status: 'UNAVAILABLE' }, {}]);
      const outcome = await clientStream(client, callId, [{ payload: 'a' }, { payload: 'b' }]);
      expect(outcome.code).toBe(grpc.status.OK);
      expect(server.attempts(callId).map((a) => a.messages)).toEqual([
        ['a#1', 'b#2'],
        ['a#1', 'b#2'],
      ]);
      expect(serialized()).toBe(2);
    } finally {
      client.close();
    }
  });

  it('a hedge carries the bytes first written', async () => {
    const interceptor = createRetryInterceptor(hedgingConfig({ maxAttempts: 2, hedgingDelay: '0.02s' }), {
      checkResentRequests: false,
    });
    const { client, serialized } = countedClient([interceptor]);
    try {
      const callId = id();
      server.script(callId, [{ delayMs: 2000 }, {}]);
      const outcome = await unary(client, callId, { payload: 'h' });
      expect(outcome.code).toBe(grpc.status.OK);
      expect(server.attempts(callId).map((a) => a.messages)).toEqual([['h#1'], ['h#1']]);
      expect(serialized()).toBe(1);
    } finally {
      client.close();
    }
  });

  it('an interceptor above that hands down a copy of the method definition: serialized twice, as before', async () => {
    // grpc-js serializes with the definition it made for the call, whatever an interceptor hands down: the wrapper
    // is then put on the copy, which nothing serializes with, and grpc-js serializes the message itself.
    const handingDown =
      (
        copy: (
          definition: grpc.InterceptorOptions['method_definition'],
        ) => grpc.InterceptorOptions['method_definition'],
      ): grpc.Interceptor =>
      (options, next) =>
        new grpc.InterceptingCall(next({ ...options, method_definition: copy(options.method_definition) }));
    for (const interceptors of [
      [handingDown((definition) => Object.freeze({ ...definition })), ...retrying()],
      [handingDown((definition) => ({ ...definition })), ...retrying()],
    ]) {
      const { client, serialized } = countedClient(interceptors);
      try {
        const callId = id();
        const outcome = await unary(client, callId, { payload: 'f' });
        expect(outcome.code).toBe(grpc.status.OK);
        expect(serialized()).toBe(2);
        expect(server.attempts(callId).map((a) => a.messages)).toEqual([['f#2']]);
      } finally {
        client.close();
      }
    }
  });

  it('two retry interceptors in one chain (a mistake, warned of): the inner one arms, each snapshot once', async () => {
    // The outer one's attempts are the inner one's calls, which it does not know to leave messages alone, so it
    // does not arm; the inner one finds the outer one's wrapper, does not wrap it again, and arms its snapshot.
    const { client, serialized } = countedClient([...retrying(), ...retrying()]);
    try {
      const callId = id();
      const outcome = await unary(client, callId, { payload: 'n' });
      expect(outcome.code).toBe(grpc.status.OK);
      expect(serialized()).toBe(2);
      expect(server.attempts(callId).map((a) => a.messages)).toEqual([['n#2']]);
    } finally {
      client.close();
    }
  });

  it('raw bytes go to grpc-js as they are, a change made before the write callback included, as bare', async () => {
    // A method whose serializer hands back the message's own bytes: grpc-js reads them when it frames the message
    // (after the call returns, with compression too), so a change made right after the call reaches the server
    // without the interceptor. The interceptor's snapshot is a copy, which is not what grpc-js gets.
    const service = loadFlakyTestService().service;
    const unaryMethod = service.Unary!;
    const raw = { ...unaryMethod, requestSerialize: (bytes: Buffer): Buffer => bytes };
    const Raw = grpc.makeGenericClientConstructor({ Unary: raw }, 'RawFlakyTest');
    const seen: Record<string, string[][]> = {};
    for (const compression of [{}, { 'grpc.default_compression_algorithm': 2 }]) {
      for (const [name, interceptors] of [
        ['bare', []],
        ['retrying', retrying()],
      ] as const) {
        const client = new Raw(server.address, grpc.credentials.createInsecure(), {
          interceptors,
          'grpc.enable_retries': 0,
          ...compression,
        }) as unknown as FlakyClient;
        try {
          const callId = id();
          const request = unaryMethod.requestSerialize({ payload: 'AAAA' }) as Buffer;
          const call = unary(client, callId, request as unknown as TestRequest);
          request.fill('Z'.charCodeAt(0), request.length - 4); // the payload's four bytes, at the end
          expect((await call).code).toBe(grpc.status.OK);
          seen[`${name}, compression ${JSON.stringify(compression)}`] = server
            .attempts(callId)
            .map((a) => a.messages);
        } finally {
          client.close();
        }
      }
    }
    const bare = seen['bare, compression {}'];
    expect(Object.values(seen).every((messages) => JSON.stringify(messages) === JSON.stringify(bare))).toBe(
      true,
    );
    expect(seen).toMatchObject({ 'retrying, compression {}': [[expect.any(String)]] });
  });

  it('an interceptor after the retry interceptor that changes the message in place: its change goes out', async () => {
    // grpc-js serializes what such an interceptor hands on; a snapshot taken above it would leave its change out.
    const stamping: grpc.Interceptor = (options, next) =>
      new grpc.InterceptingCall(next(options), {
        sendMessage(message: TestRequest, send) {
          message.payload = `${message.payload}+stamp`;
          send(message);
        },
      });
    const { client, serialized } = countedClient([...retrying(), stamping]);
    try {
      const callId = id();
      const outcome = await clientStream(client, callId, [{ payload: 'a' }, { payload: 'b' }]);
      expect(outcome.code).toBe(grpc.status.OK);
      expect(server.attempts(callId).map((a) => a.messages)).toEqual([['a+stamp#2', 'b+stamp#4']]);
      expect(serialized()).toBe(4);
    } finally {
      client.close();
    }
  });

  it("the package's adaptive throttle after the retry interceptor (its advised place) passes messages on: once", async () => {
    const { client, serialized } = countedClient([...retrying(), createAdaptiveThrottleInterceptor()]);
    try {
      const callId = id();
      const outcome = await clientStream(client, callId, [{ payload: 'a' }, { payload: 'b' }]);
      expect(outcome.code).toBe(grpc.status.OK);
      expect(server.attempts(callId).map((a) => a.messages)).toEqual([['a#1', 'b#2']]);
      expect(serialized()).toBe(2);
    } finally {
      client.close();
    }
  });

  it('a serializer that reads `this` (the method definition, as grpc-js calls it) makes the same bytes', async () => {
    const service = loadFlakyTestService().service;
    const unaryMethod = service.Unary!;
    const readsThis = {
      ...unaryMethod,
      requestSerialize(this: { path?: string }, request: TestRequest): Buffer {
        return unaryMethod.requestSerialize({
          ...request,
          payload: `${request.payload}@${this?.path}`,
        }) as Buffer;
      },
    };
    const ReadsThis = grpc.makeGenericClientConstructor({ Unary: readsThis }, 'ThisFlakyTest');
    const path = unaryMethod.path;
    for (const interceptors of [[], retrying()]) {
      const client = new ReadsThis(server.address, grpc.credentials.createInsecure(), {
        interceptors,
        'grpc.enable_retries': 0,
      }) as unknown as FlakyClient;
      try {
        const callId = id();
        server.script(callId, [{ status: 'UNAVAILABLE' }, {}]);
        const outcome = await unary(client, callId, { payload: 't' });
        const attempts = server.attempts(callId).map((a) => a.messages);
        if (interceptors.length === 0) {
          expect(outcome.code).toBe(grpc.status.UNAVAILABLE); // no retries without the interceptor
          expect(attempts).toEqual([[`t@${path}`]]);
        } else {
          expect(outcome.code).toBe(grpc.status.OK);
          expect(attempts).toEqual([[`t@${path}`], [`t@${path}`]]);
        }
      } finally {
        client.close();
      }
    }
  });
});

describe('a serializer that throws when a message is written, and would not on a second run', () => {
  // Without the interceptor the message is serialized once: the throw fails the call (INTERNAL, "Request message
  // serialization failure: ..."). The interceptor's snapshot is that one run, and grpc-js's serialization throws
  // the same error again rather than running the serializer a second time, so the call fails alike.
  const policies: readonly (readonly [string, () => grpc.Interceptor[]])[] = [
    ['bare', () => []],
    [
      'retry, INTERNAL retryable',
      () => [createRetryInterceptor(retryConfig({ retryableStatusCodes: ['UNAVAILABLE', 'INTERNAL'] }))],
    ],
    [
      'hedging, INTERNAL non-fatal',
      () => [
        createRetryInterceptor(
          hedgingConfig({ hedgingDelay: '0.02s', nonFatalStatusCodes: ['UNAVAILABLE', 'INTERNAL'] }),
        ),
      ],
    ],
  ];

  it('unary: fails as bare, with the same status and details, and nothing reaches the server', async () => {
    for (const [name, interceptors] of policies) {
      const { client, serialized } = countedClient(interceptors(), [1]);
      try {
        const callId = id();
        const outcome = await unary(client, callId, { payload: 'u' });
        expect({ name, code: outcome.code, details: outcome.error?.details }).toEqual({
          name,
          code: grpc.status.INTERNAL,
          details: 'Request message serialization failure: cannot serialize u (run 1)',
        });
        expect(serialized()).toBe(1);
        expect(server.attempts(callId).flatMap((a) => a.messages)).toEqual([]);
        expect(outcome.error && retryOutcomeOf(outcome.error)).toEqual(
          name === 'bare' ? undefined : { attempts: 1, reason: 'request-unserializable' },
        );
      } finally {
        client.close();
      }
    }
  });

  it('an upload whose second message throws: fails as bare', async () => {
    const seen: Record<string, unknown> = {};
    for (const [name, interceptors] of policies) {
      const { client } = countedClient(interceptors(), [2]);
      try {
        const callId = id();
        const outcome = await clientStream(client, callId, [
          { payload: 'a' },
          { payload: 'b' },
          { payload: 'c' },
        ]);
        seen[name] = {
          code: outcome.code,
          details: outcome.error?.details,
          statusEvents: outcome.statusEvents,
        };
      } finally {
        client.close();
      }
    }
    const bare = {
      code: grpc.status.INTERNAL,
      details: 'Request message serialization failure: cannot serialize b (run 2)',
      statusEvents: 1,
    };
    expect(seen).toEqual(Object.fromEntries(policies.map(([name]) => [name, bare])));
  });
});
