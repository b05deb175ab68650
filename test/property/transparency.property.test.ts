import { it } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { PREVIOUS_RPC_ATTEMPTS_METADATA_KEY } from '../../src/shared/headers.js';
import { oneEntryConfig } from '../helpers/service-configs.js';
import { type ConversationScript, conversationScript, NEVER_PRODUCED_CODE } from './conversation-script.js';
import { differences } from './differences.js';
import { propertyParams, propertyTimeout } from './fuzz-params.js';
import { DEFAULT_RUN_OPTIONS, type RunRecord, runConversation } from './run-conversation.js';
import { ScriptServer } from './script-server.js';
import { CALL_TYPES, type ScriptClientInstance, SERVICE_NAME, scriptClient } from './script-service.js';
import { collectUncaught } from './signal.js';

// Property 1, transparency: under a policy whose codes never occur, the interceptor changes nothing the
// application or the server can observe (what counts as observable: ./client-call.ts, ./script-server.ts); under a
// hedging policy that sends every hedge at once, nothing the application or the attempt it commits to observes.
const retryConfig = oneEntryConfig(SERVICE_NAME, {
  retryPolicy: {
    maxAttempts: 3,
    initialBackoff: '0.001s',
    maxBackoff: '0.01s',
    backoffMultiplier: 2,
    retryableStatusCodes: [NEVER_PRODUCED_CODE],
  },
});
const hedgingConfig = oneEntryConfig(SERVICE_NAME, {
  hedgingPolicy: { maxAttempts: 3, hedgingDelay: '60s', nonFatalStatusCodes: [NEVER_PRODUCED_CODE] },
});
/** Every hedge at once: the server sees three attempts, and the script drives the first to arrive. */
const hedgingNowConfig = oneEntryConfig(SERVICE_NAME, {
  hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0s', nonFatalStatusCodes: [NEVER_PRODUCED_CODE] },
});

const OVERFLOW_BUFFER_BYTES = 16 * 1024;

let server: ScriptServer;
let bare: ScriptClientInstance;
let retrying: ScriptClientInstance;
let hedging: ScriptClientInstance;
let overflowing: ScriptClientInstance;
let hedgingNow: ScriptClientInstance;
/** Attempts the hedging-now client started and ended in the current run. */
const hedgeAttempts = { started: 0, ended: 0 };

beforeAll(async () => {
  server = await ScriptServer.start();
  bare = scriptClient(server.address);
  // With a listener: events are built only when somebody listens, and building them must change nothing either.
  retrying = scriptClient(server.address, [createRetryInterceptor(retryConfig, { onEvent: () => {} })]);
  hedging = scriptClient(server.address, [createRetryInterceptor(hedgingConfig)]);
  // A replay buffer that large scripts overflow: the call commits on the overflow and must stay transparent.
  overflowing = scriptClient(server.address, [
    createRetryInterceptor(retryConfig, { perRpcBufferBytes: OVERFLOW_BUFFER_BYTES }),
  ]);
  // No cancel-rate limit: a loser it left running (the limit spent by the runs before) would wait for its server,
  // which the script never makes answer. Its events say whether each attempt it started ended.
  hedgingNow = scriptClient(server.address, [
    createRetryInterceptor(hedgingNowConfig, {
      cancelRateLimit: false,
      onEvent: (e) => {
        if (e.type === 'attempt-start') hedgeAttempts.started += 1;
        if (e.type === 'attempt-end') hedgeAttempts.ended += 1;
      },
    }),
  ]);
});

afterAll(async () => {
  for (const client of [bare, retrying, hedging, overflowing, hedgingNow]) {
    client?.close();
  }
  await server?.stop();
});

/**
 * Runs the script; a script that ends by its deadline is run again with a longer one when the deadline cut the
 * conversation short (on a loaded machine the steps before it may take longer than the deadline): the outcome of
 * such a script does not depend on the deadline's length, only on its passing after the last step.
 */
async function run(client: ScriptClientInstance, script: ConversationScript): Promise<RunRecord> {
  let options = DEFAULT_RUN_OPTIONS;
  for (;;) {
    const record = await runConversation(server, client, script, options);
    if (script.ending.by !== 'deadline' || !record.endedEarly || options.shortDeadlineMs >= 2400) {
      return record;
    }
    options = { ...options, shortDeadlineMs: options.shortDeadlineMs * 2 };
  }
}

/** `record` without the `grpc-previous-rpc-attempts` a winning hedge adds (headers, trailers, request headers). */
function withoutPreviousAttempts(record: RunRecord): RunRecord {
  const drop = (m: Record<string, string>): Record<string, string> =>
    Object.fromEntries(Object.entries(m).filter(([key]) => key !== PREVIOUS_RPC_ATTEMPTS_METADATA_KEY));
  const { client } = record;
  return {
    ...record,
    client: {
      ...client,
      headers: client.headers && drop(client.headers),
      status: client.status && { ...client.status, trailers: drop(client.status.trailers) },
    },
    server: record.server.map((a) => ({ ...a, metadata: drop(a.metadata) })),
  };
}

async function sameAsBare(script: ConversationScript): Promise<void> {
  const expected = await run(bare, script);
  // The script itself is sound: the bare call reaches its ending and ends, once.
  expect(expected.endedEarly).toBe(false);
  expect(expected.neverEnded).toBe(false);
  expect(expected.client.statusEvents).toBe(1);
  // The interceptor's one documented addition, `grpc-previous-rpc-attempts` in the final trailers, comes only after
  // more than one attempt: here there is one, so the records must be equal as they are.
  for (const [policy, client] of [
    ['retry', retrying],
    ['hedging', hedging],
    ['retry, replay buffer overflowed', overflowing],
  ] as const) {
    const { result: actual, uncaught } = await collectUncaught(() => run(client, script));
    const diff = [...differences(expected, actual), ...uncaught.map((e) => `uncaught exception: ${e}`)];
    expect(diff, `${policy} differs from bare (expected → actual):\n${diff.join('\n')}`).toEqual([]);
  }
  // Every hedge at once: the attempt the script drives (the first to reach the server, not always the first sent)
  // answers first, so the call commits to it (or the application's cancel or the deadline ends them all). The
  // application sees what it sees bare, that attempt sees what the bare call's server sees, both but for the
  // documented `grpc-previous-rpc-attempts` of a hedge that won, and the engine ends every other hedge. (Whether
  // the server sees that end is grpc-js's: a stream cancelled as it opened may reach the server after the run is
  // over, a late hedge, or end there with no cancel seen.)
  hedgeAttempts.started = 0;
  hedgeAttempts.ended = 0;
  const { result: hedged, uncaught } = await collectUncaught(() => run(hedgingNow, script));
  const diff = [
    ...differences(expected, withoutPreviousAttempts({ ...hedged, server: hedged.server.slice(0, 1) })),
    ...(hedgeAttempts.ended === hedgeAttempts.started
      ? []
      : [`${hedgeAttempts.started} attempts started, ${hedgeAttempts.ended} ended`]),
    ...uncaught.map((e) => `uncaught exception: ${e}`),
  ];
  expect(diff, `hedging, delay 0s, differs from bare (expected → actual):\n${diff.join('\n')}`).toEqual([]);
  expect(server.strays).toBe(0);
}

describe('property 1: the interceptor is transparent when no attempt fails with a policy code', () => {
  for (const type of CALL_TYPES) {
    const name = `transparency: ${type}`;
    it.prop([conversationScript(type)], propertyParams<[ConversationScript]>(name, 40))(
      name,
      sameAsBare,
      propertyTimeout(60_000),
    );
  }
});
