import { it } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { oneEntryConfig } from '../helpers/service-configs.js';
import { type ConversationScript, conversationScript, NEVER_PRODUCED_CODE } from './conversation-script.js';
import { differences } from './differences.js';
import { propertyParams, propertyTimeout } from './fuzz-params.js';
import { DEFAULT_RUN_OPTIONS, type RunRecord, runConversation } from './run-conversation.js';
import { ScriptServer } from './script-server.js';
import { CALL_TYPES, type ScriptClientInstance, SERVICE_NAME, scriptClient } from './script-service.js';
import { collectUncaught } from './signal.js';

// Property 1, transparency: under a policy whose codes never occur, the interceptor changes nothing the
// application or the server can observe (what counts as observable: ./client-call.ts, ./script-server.ts).
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

const OVERFLOW_BUFFER_BYTES = 16 * 1024;

let server: ScriptServer;
let bare: ScriptClientInstance;
let retrying: ScriptClientInstance;
let hedging: ScriptClientInstance;
let overflowing: ScriptClientInstance;

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
});

afterAll(async () => {
  for (const client of [bare, retrying, hedging, overflowing]) {
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
