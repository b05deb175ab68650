/**
 * End to end: grpc-js puts the clients of one target on one HTTP/2 connection (its global subchannel pool), and a
 * Node.js server's rapid-reset guard counts resets per connection. So the cancel-rate limit is kept per connection:
 * two clients, each with an interceptor of its own, share the limit of the server they both reach; a client of
 * another server has its own. (Audit 60b's L1: four such clients, each with its own limit, reset past the guard
 * together, and 240 of 12,000 hedged calls failed 13 INTERNAL.)
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import type { RetryEvent } from '../../src/retry/events.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { PREVIOUS_RPC_ATTEMPTS_METADATA_KEY } from '../../src/shared/headers.js';
import { FlakyServer } from '../../src/testing/index.js';
import { type FlakyClient, hedgingConfig, testClient, unary } from '../helpers/harness.js';

/** Five cancels at once, then none for the test's length: the same settings in every interceptor. */
const LIMIT = { burst: 5, ratePerSecond: 0.001 };
const CALLS_PER_CLIENT = 8;

const servers: FlakyServer[] = [];
const clients: FlakyClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

/** A server whose first attempts answer after 150 ms and hedges at once: every call's first attempt loses. */
async function slowFirstAttempts(): Promise<FlakyServer> {
  const server = await FlakyServer.start({
    onAttempt: (info) =>
      info.metadata.get(PREVIOUS_RPC_ATTEMPTS_METADATA_KEY).length === 0 ? { delayMs: 150 } : { delayMs: 1 },
  });
  servers.push(server);
  return server;
}

/** A client with an interceptor of its own, and the events it saw. */
function hedgingClient(address: string): { client: FlakyClient; events: RetryEvent[] } {
  const events: RetryEvent[] = [];
  const interceptor = createRetryInterceptor(hedgingConfig({ maxAttempts: 2, hedgingDelay: '0.005s' }), {
    cancelRateLimit: { ...LIMIT },
    onEvent: (e) => events.push(e),
  });
  const client = testClient(address, [interceptor]);
  clients.push(client);
  return { client, events };
}

/** Losers cancelled at the commit, and losers left running (their own end comes later, when they answer). */
function losers(events: RetryEvent[]): { cancelled: number; leftRunning: number } {
  const cancelled = events.filter(
    (e) => e.type === 'attempt-end' && e.cancelReason === 'other-attempt-committed' && !e.leftRunning,
  ).length;
  return { cancelled, leftRunning: events.filter((e) => e.type === 'attempt-left-running').length };
}

describe('the cancel-rate limit per connection, against real grpc-js servers', () => {
  it('two clients of one server share its limit; a client of another server has its own', async () => {
    const shared = await slowFirstAttempts();
    const other = await slowFirstAttempts();
    const first = hedgingClient(shared.address);
    const second = hedgingClient(shared.address);
    const elsewhere = hedgingClient(other.address);

    const codes = await Promise.all(
      [first, second, elsewhere].flatMap(({ client }, c) =>
        Array.from({ length: CALLS_PER_CLIENT }, (_, i) =>
          unary(client, `client${c}-call${i}`, undefined, { deadlineMs: 10_000 }).then((o) => o.code),
        ),
      ),
    );
    expect(codes.every((code) => code === grpc.status.OK)).toBe(true);

    const onShared = [losers(first.events), losers(second.events)] as const;
    // Each client's calls all hedged and lost their first attempt; the two clients' losers together got the burst.
    expect(onShared.map((l) => l.cancelled + l.leftRunning)).toEqual([CALLS_PER_CLIENT, CALLS_PER_CLIENT]);
    expect(onShared[0].cancelled + onShared[1].cancelled).toBe(LIMIT.burst);
    expect(losers(elsewhere.events)).toEqual({
      cancelled: LIMIT.burst,
      leftRunning: CALLS_PER_CLIENT - LIMIT.burst,
    });
  });
});
