/**
 * The server side shared by the integration examples: a flaky test server scripted for two calls, and what it saw.
 * In your project this is your own server; the examples differ only in how each framework builds its client.
 */
import { fileURLToPath } from 'node:url';
import { status } from '@grpc/grpc-js';
import { loadServiceConfig, type ServiceConfig } from 'grpc-retry-hedging';
import { FlakyServer } from 'grpc-retry-hedging/testing';

/** Call id (metadata `x-flaky-call-id`) of the unary call that fails twice with UNAVAILABLE, then succeeds. */
export const FAILS_TWICE = 'fails-twice';
/** Call id of the hedged server-streaming read whose first attempt hangs for 10 s while a hedge answers at once. */
export const SLOW_FIRST_ATTEMPT = 'slow-first-attempt';

/** Retries for FlakyTest/Unary, hedging for FlakyTest/ServerStream (examples/integrations/service-config.json). */
export function integrationServiceConfig(): ServiceConfig {
  return loadServiceConfig(fileURLToPath(new URL('service-config.json', import.meta.url)));
}

export async function startFlakyBackend(): Promise<FlakyServer> {
  const server = await FlakyServer.start();
  server.script(FAILS_TWICE, [{ status: 'UNAVAILABLE' }, { status: 'UNAVAILABLE' }, {}]);
  server.script(SLOW_FIRST_ATTEMPT, [{ delayMs: 10_000 }, {}]);
  return server;
}

/** What one integration example observed, client side and server side. */
export interface IntegrationResult {
  /** The unary call's response: `attempt` is the server's attempt number that answered. */
  retried: { payload: string; attempt: number };
  /** The hedged read's responses. */
  hedged: Array<{ payload: string; attempt: number }>;
  /** How each attempt of the unary call ended, as the server saw it (`CANCELLED` when the client cancelled it). */
  retriedAttempts: string[];
  /** The same for the hedged read. */
  hedgedAttempts: string[];
}

/**
 * What the server saw of both calls (once every attempt has ended: the losing hedge is cancelled asynchronously),
 * with the client's responses; printed, then returned for the tests.
 */
export async function report(
  name: string,
  server: FlakyServer,
  client: Pick<IntegrationResult, 'retried' | 'hedged'>,
  print: (line: string) => void,
): Promise<IntegrationResult> {
  await server.waitFor(() => server.allAttempts().every((a) => a.cancelled || a.endedWith !== undefined));
  const ends = (callId: string) =>
    server
      .attempts(callId)
      .map((a) => (a.cancelled ? 'CANCELLED' : (status[a.endedWith ?? -1] ?? String(a.endedWith))));
  const result = { ...client, retriedAttempts: ends(FAILS_TWICE), hedgedAttempts: ends(SLOW_FIRST_ATTEMPT) };
  print(`${name}: unary call answered by attempt ${result.retried.attempt}`);
  print(`  server saw: ${result.retriedAttempts.join(', ')}`);
  print(`${name}: hedged read answered by attempt ${result.hedged.map((r) => r.attempt).join(', ')}`);
  print(`  server saw: ${result.hedgedAttempts.join(', ')}`);
  return result;
}
