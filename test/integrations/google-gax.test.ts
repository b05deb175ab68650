import { Channel, type ChannelCredentials, type ChannelOptions, status } from '@grpc/grpc-js';
import type { CallOptions, ClientOptions } from 'google-gax';
import {
  createRetryInterceptor,
  interceptChannel,
  type RetryEvent,
  retryOutcomeOf,
  withRetryOptions,
} from 'grpc-retry-hedging';
import { FlakyServer } from 'grpc-retry-hedging/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { integrationServiceConfig } from '../../examples/integrations/flaky-backend.js';
import {
  FlakyTestClient,
  localServerOptions,
  readAll,
  type TestRequest,
} from '../../examples/integrations/gapic-client.js';
import { addInterceptor, gaxRetriesOff, main } from '../../examples/integrations/google-gax.js';
import { expectRetriedAndHedged } from './integration-result.js';

let server: FlakyServer;
const clients: FlakyTestClient[] = [];

/** A GAPIC-style client on the shared server, closed after the test. */
function gaxClient(options: ClientOptions): FlakyTestClient {
  const client = new FlakyTestClient({ ...localServerOptions(server.address), ...options });
  clients.push(client);
  return client;
}

/** Route E, as the example: the interceptor added to each call by 'grpc.callInvocationTransformer'. */
function withTransformer(options: ClientOptions = {}, onEvent?: (e: RetryEvent) => void): FlakyTestClient {
  const retry = createRetryInterceptor(integrationServiceConfig(), onEvent ? { onEvent } : {});
  return gaxClient({ 'grpc.callInvocationTransformer': addInterceptor(retry), ...options });
}

/** The unary call with `callId`; resolves with its response, or with the error it failed with. */
async function unary(client: FlakyTestClient, callId: string, options: CallOptions = {}): Promise<unknown> {
  const request: TestRequest = { payload: 'x' };
  const otherArgs = { ...options.otherArgs, headers: { 'x-flaky-call-id': callId } };
  try {
    const [response] = await client.unary(request, { ...options, otherArgs });
    return response;
  } catch (error) {
    return error;
  }
}

/** The grpc-retry-hedging warnings emitted while `run` ran. */
async function packageWarnings(run: () => Promise<void>): Promise<string[]> {
  const emit = vi.spyOn(process, 'emitWarning');
  try {
    await run();
    return emit.mock.calls
      .map((args) => JSON.stringify(args))
      .filter((w) => w.includes('GRPC_RETRY_HEDGING'));
  } finally {
    emit.mockRestore();
  }
}

describe('google-gax client (GAPIC-style) with the interceptor', () => {
  beforeAll(async () => {
    server = await FlakyServer.start();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await server.stop();
  });

  it('retries a call that fails twice and hedges a read, as the server saw (the example)', async () => {
    expectRetriedAndHedged(await main(() => {}));
  });

  it("with gax's own retries left on, the attempts multiply, and the package cannot tell", async () => {
    // A generated client's config retries UNAVAILABLE; gax's maxRetries: 2 makes two calls (and ends with
    // DEADLINE_EXCEEDED "Exceeded maximum number of retries"), each of which the interceptor tries 4 times.
    server.script('gax-on', [{ status: 'UNAVAILABLE' }]);
    let error: unknown;
    const warnings = await packageWarnings(async () => {
      error = await unary(withTransformer(), 'gax-on', { maxRetries: 2 });
    });
    expect(error).toMatchObject({ code: status.DEADLINE_EXCEEDED });
    expect(String((error as Error).message)).toMatch(/Exceeded maximum number of retries/);
    const attempts = server.attempts('gax-on');
    expect(attempts).toHaveLength(8);
    // gax's second call is a new call: no grpc-previous-rpc-attempts, so no GRPC_RETRY_HEDGING_NESTED_RETRIES.
    expect(attempts.map((a) => a.previousRpcAttempts)).toEqual([undefined, 1, 2, 3, undefined, 1, 2, 3]);
    expect(warnings).toEqual([]);

    // With gax's retries off, in the client config or per call, the policy's 4 attempts are all.
    server.script('gax-off', [{ status: 'UNAVAILABLE' }]);
    expect(await unary(withTransformer({ clientConfig: gaxRetriesOff }), 'gax-off')).toMatchObject({
      code: status.UNAVAILABLE,
    });
    expect(server.attempts('gax-off')).toHaveLength(4);
    server.script('gax-off-per-call', [{ status: 'UNAVAILABLE' }]);
    expect(await unary(withTransformer(), 'gax-off-per-call', { retry: { retryCodes: [] } })).toMatchObject({
      code: status.UNAVAILABLE,
    });
    expect(server.attempts('gax-off-per-call')).toHaveLength(4);
  });

  it("retryOutcomeOf: with gax's retries off, the error gax hands back tells what retrying did", async () => {
    server.script('gax-outcome', [{ status: 'UNAVAILABLE' }]);
    const error = await unary(withTransformer({ clientConfig: gaxRetriesOff }), 'gax-outcome');
    expect(error).toMatchObject({ code: status.UNAVAILABLE });
    expect(retryOutcomeOf(error)).toEqual({ attempts: 4, reason: 'attempts-exhausted' });
  });

  it("with gax's own retries left on, gax retries a unary call after its response headers (A6 commits it)", async () => {
    server.script('after-headers', [{ sendHeaders: true, status: 'UNAVAILABLE' }, {}]);
    expect(await unary(withTransformer(), 'after-headers')).toMatchObject({ attempt: 2 });
    server.script('after-headers-off', [{ sendHeaders: true, status: 'UNAVAILABLE' }, {}]);
    expect(await unary(withTransformer({ clientConfig: gaxRetriesOff }), 'after-headers-off')).toMatchObject({
      code: status.UNAVAILABLE,
    });
    expect(server.attempts('after-headers-off')).toHaveLength(1);
  });

  it('per-call withRetryOptions in otherArgs.options reach the interceptor on the transformer route only', async () => {
    const once = withRetryOptions({ enabled: false });

    server.script('transformer', [{ status: 'UNAVAILABLE' }, {}]);
    const transformed = withTransformer({ clientConfig: gaxRetriesOff });
    expect(await unary(transformed, 'transformer', { otherArgs: { options: once } })).toMatchObject({
      code: status.UNAVAILABLE,
    });
    expect(server.attempts('transformer')).toHaveLength(1);

    // 'grpc.channelFactoryOverride' + interceptChannel: retries work, but the per-call options never arrive.
    server.script('channel', [{ status: 'UNAVAILABLE' }, {}]);
    const retry = createRetryInterceptor(integrationServiceConfig());
    const onChannel = gaxClient({
      'grpc.channelFactoryOverride': (address: string, creds: ChannelCredentials, options: ChannelOptions) =>
        interceptChannel(new Channel(address, creds, options), [retry]),
      clientConfig: gaxRetriesOff,
    });
    expect(await unary(onChannel, 'channel', { otherArgs: { options: once } })).toMatchObject({ attempt: 2 });
    expect(server.attempts('channel')).toHaveLength(2);
  });

  it("server streaming: with gaxServerStreamingRetries gax's stream.cancel() cancels nothing; retryRequestOptions off instead, it cancels", async () => {
    /** Reads `callId`, cancels the read once the server has its attempts, and says how the read ended. */
    const cancelledRead = async (client: FlakyTestClient, callId: string, options: CallOptions = {}) => {
      const stream = client.serverStream(
        { payload: 'x' },
        { ...options, otherArgs: { headers: { 'x-flaky-call-id': callId } } },
      );
      const read = readAll(stream).then(
        (responses) => ({ responses: responses.length }),
        (error: { code?: unknown }) => ({ code: error.code }),
      );
      await server.waitForAttempts(callId, 2); // the original and its hedge
      stream.cancel();
      return read;
    };

    // The recipe's gaxServerStreamingRetries: gax copies the grpc-js stream's cancel() onto its own retry stream
    // unbound, so the call goes on: the server answers it 1.2 s later and the read ends with the answer.
    server.script('cancel-gax-retries', [{ delayMs: 1200 }]);
    const recipe = withTransformer({ clientConfig: gaxRetriesOff, gaxServerStreamingRetries: true });
    expect(await cancelledRead(recipe, 'cancel-gax-retries')).toEqual({ responses: 1 });
    expect(server.attempts('cancel-gax-retries')[0]!.cancelled).toBe(false);

    // Without it, and with retry-request's retries off for the call: the cancel ends the read, and every attempt.
    server.script('cancel-retry-request-off', [{ delayMs: 1200 }]);
    const plain = withTransformer({ clientConfig: gaxRetriesOff });
    expect(
      await cancelledRead(plain, 'cancel-retry-request-off', {
        retryRequestOptions: { retries: 0, noResponseRetries: 0 },
      }),
    ).toEqual({ code: status.CANCELLED });
    await server.waitFor(() => server.attempts('cancel-retry-request-off').every((a) => a.cancelled));
  });

  it("gax's timeout is one deadline over all the interceptor's attempts; a deadline in withRetryOptions is not", async () => {
    // Attempt 1 fails after 1.5 s, attempt 2 hangs: under one 3 s deadline, attempt 2 gets what is left of it.
    server.script('timeout', [{ status: 'UNAVAILABLE', delayMs: 1500 }, { delayMs: 10_000 }]);
    const client = withTransformer({ clientConfig: gaxRetriesOff });
    const started = Date.now();
    const error = await unary(client, 'timeout', {
      timeout: 3000,
      // gax replaces the call options' deadline with its own timeout: this one is never seen.
      otherArgs: { options: withRetryOptions({}, { deadline: Date.now() + 60_000 }) },
    });
    expect(error).toMatchObject({ code: status.DEADLINE_EXCEEDED });
    const attempts = server.attempts('timeout');
    expect(attempts).toHaveLength(2);
    const [first, second] = attempts;
    expect(first!.deadline! - started).toBeLessThan(10_000);
    // One deadline: both attempts arrive with it (a fresh 3 s for attempt 2 would be 1.5 s later).
    expect(Math.abs(second!.deadline! - first!.deadline!)).toBeLessThan(750);
    await server.waitFor(() => second!.cancelled);
  });
});
