import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isServiceConfigError } from '../../src/config/service-config-error.js';
import type { RetryPolicyJson } from '../../src/config/service-config-json.js';
import { withRetryOptions } from '../../src/retry/call-options.js';
import type { RetryEvent } from '../../src/retry/events.js';
import { FlakyServer } from '../../src/testing/index.js';
import {
  callMetadata,
  eventsOf,
  type FlakyClient,
  retryConfig,
  startHarness,
  type TestResponse,
  unary,
} from '../helpers/harness.js';

const UNAVAILABLE = status.UNAVAILABLE;
let server: FlakyServer;
let n = 0;
const id = () => `ctl-${++n}`;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

/** A unary call with explicit call options. */
function unaryWith(
  client: FlakyClient,
  callId: string,
  options: object,
): Promise<{ code: number; trailers: unknown }> {
  return new Promise((resolve) => {
    const call = client.Unary(
      { payload: 'x' },
      callMetadata(callId),
      options,
      (_e: unknown, _r: TestResponse) => {},
    );
    (call as NodeJS.EventEmitter).on('status', (s: { code: number; metadata: { get(k: string): unknown } }) =>
      resolve({ code: s.code, trailers: s.metadata.get('grpc-previous-rpc-attempts') }),
    );
  });
}

describe('per-call control', () => {
  it('enabled: false sends a single attempt', async () => {
    const h = await startHarness(retryConfig(), {}, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      const out = await unaryWith(h.client, c, withRetryOptions({ enabled: false }));
      expect(out.code).toBe(UNAVAILABLE);
      expect(server.attempts(c)).toHaveLength(1);
      expect(h.events).toEqual([]);
    } finally {
      await h.close();
    }
  });

  it('keeps the ordinary call options (deadline) it is given', async () => {
    const h = await startHarness(retryConfig({ initialBackoff: '5s', maxBackoff: '5s' }), {}, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      const out = await unaryWith(h.client, c, withRetryOptions({}, { deadline: Date.now() + 200 }));
      expect(out.code).toBe(status.DEADLINE_EXCEEDED);
    } finally {
      await h.close();
    }
  });

  it('a policy override replaces the method policy for one call, clamped to the limit', async () => {
    const h = await startHarness(retryConfig({ maxAttempts: 2 }), { maxAttemptsLimit: 4 }, server);
    try {
      const c = id();
      server.script(c, [{ status: status.ABORTED }]);
      const options = withRetryOptions({
        policy: {
          retryPolicy: {
            maxAttempts: 9,
            initialBackoff: '0.001s',
            maxBackoff: '0.001s',
            backoffMultiplier: 1,
            retryableStatusCodes: ['aborted'],
          },
        },
      });
      const out = await unaryWith(h.client, c, options);
      expect(out.code).toBe(status.ABORTED);
      expect(server.attempts(c)).toHaveLength(4);
    } finally {
      await h.close();
    }
  });

  it('withRetryOptions on options that already carry some merges them: the later wins, both listeners hear', async () => {
    const h = await startHarness({ methodConfig: [] }, {}, server);
    try {
      const c = id();
      server.script(c, [{ status: status.ABORTED }, {}]);
      const inner: RetryEvent[] = [];
      const outer: RetryEvent[] = [];
      const policy = {
        retryPolicy: {
          maxAttempts: 3,
          initialBackoff: '0.001s',
          maxBackoff: '0.001s',
          backoffMultiplier: 1,
          retryableStatusCodes: ['ABORTED'],
        },
      };
      const options = withRetryOptions(
        { onEvent: (e) => outer.push(e) },
        withRetryOptions({ policy, onEvent: (e) => inner.push(e) }, { deadline: Date.now() + 5000 }),
      );
      const out = await unaryWith(h.client, c, options);
      expect(out.code).toBe(status.OK);
      expect(server.attempts(c)).toHaveLength(2);
      expect(inner.map((e) => e.type)).toContain('retry-scheduled');
      expect(outer.map((e) => e.type)).toEqual(inner.map((e) => e.type));
      // The later call's enabled: false wins over the earlier one's policy.
      const d = id();
      server.script(d, [{ status: status.ABORTED }, {}]);
      const off = withRetryOptions({ enabled: false }, withRetryOptions({ policy }));
      expect((await unaryWith(h.client, d, off)).code).toBe(status.ABORTED);
      expect(server.attempts(d)).toHaveLength(1);
    } finally {
      await h.close();
    }
  });

  it('a policy override can turn on hedging for a method that has no policy', async () => {
    const h = await startHarness({ methodConfig: [] }, {}, server);
    try {
      const c = id();
      server.script(c, [{ delayMs: 2000 }, {}]);
      const out = await unaryWith(
        h.client,
        c,
        withRetryOptions({ policy: { hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.03s' } } }),
      );
      expect(out.code).toBe(status.OK);
      expect(server.attempts(c)).toHaveLength(2);
    } finally {
      await h.close();
    }
  });

  it('rejects an invalid override with a ServiceConfigError naming the path', () => {
    let error: unknown;
    try {
      // An invalid policy, as an untyped caller (JSON read at run time) could pass it.
      withRetryOptions({ policy: { retryPolicy: { maxAttempts: 1 } as RetryPolicyJson } });
    } catch (e) {
      error = e;
    }
    expect(isServiceConfigError(error)).toBe(true);
    expect((error as { path: string }).path).toBe('policy.retryPolicy.maxAttempts');
    expect(() => withRetryOptions({ policy: {} as never })).toThrow(
      /exactly one of retryPolicy and hedgingPolicy/,
    );
    expect(() => withRetryOptions({ enabled: 'no' as never })).toThrow(TypeError);
  });

  it('a per-call onEvent sees that call only, after the interceptor listener', async () => {
    const order: string[] = [];
    const h = await startHarness(
      retryConfig(),
      { onEvent: (e) => order.push(`interceptor:${e.type}`) },
      server,
    );
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      const mine: RetryEvent[] = [];
      await unaryWith(
        h.client,
        c,
        withRetryOptions({
          onEvent: (e) => {
            mine.push(e);
            order.push(`call:${e.type}`);
          },
        }),
      );
      await unary(h.client, id());
      expect(eventsOf(mine, 'call-end')).toHaveLength(1);
      expect(new Set(mine.map((e) => e.callId)).size).toBe(1);
      expect(order.slice(0, 4)).toEqual([
        'interceptor:call-start',
        'call:call-start',
        'interceptor:attempt-start',
        'call:attempt-start',
      ]);
    } finally {
      await h.close();
    }
  });
});

describe('attempt count visible to the caller', () => {
  it('the trailers carry grpc-previous-rpc-attempts', async () => {
    const h = await startHarness(retryConfig(), {}, server);
    try {
      const c1 = id();
      server.script(c1, [{ status: UNAVAILABLE }, { status: UNAVAILABLE }, {}]);
      expect((await unary(h.client, c1)).trailers?.get('grpc-previous-rpc-attempts')).toEqual(['2']);
      const c2 = id();
      server.script(c2, [{}]);
      // absent when the call made a single attempt
      expect((await unary(h.client, c2)).trailers?.get('grpc-previous-rpc-attempts')).toEqual([]);
      const c3 = id();
      server.script(c3, [{ status: status.NOT_FOUND }]);
      const failed = await unary(h.client, c3);
      expect(failed.error?.metadata.get('grpc-previous-rpc-attempts')).toEqual([]);
      const c4 = id();
      server.script(c4, [{ status: UNAVAILABLE }, { status: UNAVAILABLE }]);
      const exhausted = await unary(h.client, c4);
      expect(exhausted.error?.metadata.get('grpc-previous-rpc-attempts')).toEqual(['4']);
    } finally {
      await h.close();
    }
  });
});

describe('deadline-aware backoff (opt-in)', () => {
  it('ends at once with the real status when the backoff would outlast the deadline', async () => {
    const config = retryConfig({ initialBackoff: '2s', maxBackoff: '2s' });
    const aware = await startHarness(config, { deadlineAwareBackoff: true }, server);
    const plain = await startHarness(config, {}, server);
    try {
      const c1 = id();
      server.script(c1, [{ status: UNAVAILABLE, details: 'real cause' }, {}]);
      const started = Date.now();
      const out = await unary(aware.client, c1, undefined, { deadlineMs: 1000 });
      expect(out.code).toBe(UNAVAILABLE);
      expect(out.error?.details).toBe('real cause');
      expect(Date.now() - started).toBeLessThan(900);
      expect(eventsOf(aware.events, 'retry-scheduled')).toEqual([]);

      const c2 = id();
      server.script(c2, [{ status: UNAVAILABLE }, {}]);
      const waited = await unary(plain.client, c2, undefined, { deadlineMs: 300 });
      expect(waited.code).toBe(status.DEADLINE_EXCEEDED);
      expect(waited.error?.details).toMatch(/last attempt: UNAVAILABLE/);
    } finally {
      await aware.close();
      await plain.close();
    }
  });

  it('still retries when the backoff fits before the deadline', async () => {
    const h = await startHarness(retryConfig(), { deadlineAwareBackoff: true }, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      const out = await unary(h.client, c, undefined, { deadlineMs: 5000 });
      expect(out.code).toBe(status.OK);
      expect(server.attempts(c)).toHaveLength(2);
    } finally {
      await h.close();
    }
  });
});
