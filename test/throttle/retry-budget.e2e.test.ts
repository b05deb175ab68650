import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RetryEvent } from '../../src/retry/events.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { FlakyServer, loadFlakyTestService } from '../../src/testing/index.js';
import { RetryBudget } from '../../src/throttle/retry-budget.js';
import { eventsOf, type FlakyClient, retryConfig, testClient, unary } from '../helpers/harness.js';

const UNAVAILABLE = grpc.status.UNAVAILABLE;
const _Service = loadFlakyTestService();
let server: FlakyServer;
let n = 0;
const id = () => `budget-${++n}`;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

function client(interceptors: grpc.Interceptor[]): FlakyClient {
  return testClient(server.address, interceptors);
}

describe('RetryBudget with the retry interceptor, against a real server', () => {
  it('a RetryBudget passed as the throttle is fed by the engine: each call deposits, each retry withdraws', async () => {
    // No reserve, maxExtraLoad 0.5, no fractional retries (random 0.99): two calls deposit one retry between them.
    const budget = new RetryBudget({ minPerSecond: 0, maxExtraLoad: 0.5, random: () => 0.99 });
    const events: RetryEvent[] = [];
    const c = client([
      createRetryInterceptor(retryConfig(), { gate: budget, onEvent: (e) => events.push(e) }),
    ]);
    const a = id();
    const b = id();
    server.script(a, [{ status: UNAVAILABLE }]);
    server.script(b, [{ status: UNAVAILABLE }]);
    await unary(c, a); // deposits 0.5: no retry yet
    await unary(c, b); // deposits 0.5 more: one retry, then refused
    expect(server.attempts(a)).toHaveLength(1);
    expect(server.attempts(b)).toHaveLength(2);
    expect(budget.denied).toBe(2);
    const throttled = eventsOf(events, 'throttled');
    expect(throttled).toHaveLength(2);
    expect(throttled[0]).toMatchObject({ gate: 'retry-budget' });
    c.close();
  });
});
