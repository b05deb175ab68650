import { it } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { differences } from './differences.js';
import { type FailingScript, failingScript } from './failing-script.js';
import { propertyParams, propertyTimeout } from './fuzz-params.js';
import { behaviourOf, commits, expectedOutcome } from './retry-oracle.js';
import { attemptMessage, runFailing } from './run-failing.js';
import { digest, messageBytes, ScriptServer } from './script-server.js';
import { CALL_TYPES, requestStreams, type ScriptClientInstance, scriptClient } from './script-service.js';
import { collectUncaught } from './signal.js';

// Property 2: scripts whose attempts fail, before or after the response headers, checked against an oracle of
// A6's rules (./retry-oracle.ts): attempts made, what each attempt received, the attempt count the server and the
// application see, and which status ends the call.
let server: ScriptServer;
let client: ScriptClientInstance;

beforeAll(async () => {
  server = await ScriptServer.start();
  client = scriptClient(server.address);
});

afterAll(async () => {
  client?.close();
  await server?.stop();
});

async function followsA6(script: FailingScript): Promise<void> {
  const expected = expectedOutcome(script);
  const { result: record, uncaught } = await collectUncaught(() => runFailing(server, client, script));
  const { client: app, server: attempts } = record;
  const streamed = requestStreams(script.type);
  const sent = streamed
    ? script.writes.map((w, i) => digest(messageBytes(w.size, i + 1)))
    : [digest(messageBytes(script.request, 0x55))];

  // The application's view: one end, the oracle's status, and only the final attempt's headers and messages.
  const final = expected.final;
  const actualApp = {
    neverEnded: record.neverEnded,
    uncaught,
    statusEvents: app.statusEvents,
    callbacks: app.callbacks,
    code: app.status?.code,
    details: expected.details === undefined ? undefined : app.status?.details,
    headersFrom: app.headers?.['x-h-attempt'],
    streamedResponses: script.type === 'serverStream' || script.type === 'bidi' ? app.responses : [],
    trailersFrom: final === undefined ? undefined : app.status?.trailers['x-t-attempt'],
    previousAttempts: final === undefined ? undefined : app.status?.trailers['grpc-previous-rpc-attempts'],
  };
  const expectedApp = {
    neverEnded: false,
    uncaught: [],
    statusEvents: 1,
    callbacks: script.type === 'unary' || script.type === 'clientStream' ? 1 : 0,
    code: expected.code,
    details: expected.details,
    // Headers reach the application only from the attempt that answered with them (none on a Trailers-Only failure).
    headersFrom:
      final !== undefined && (behaviourOf(script, final).ok || commits(behaviourOf(script, final)))
        ? String(final)
        : undefined,
    streamedResponses: Array.from({ length: expected.streamedResponses }, () =>
      digest(attemptMessage(final ?? 0)),
    ),
    trailersFrom: final === undefined ? undefined : String(final),
    previousAttempts: final === undefined || final === 1 ? undefined : String(final - 1),
  };

  // The server's view: the attempts A6 allows, each numbered in its metadata, each given the whole request
  // (replayed) when it waited for it, and otherwise a prefix of it.
  const actualServer = attempts.map((a, i) => {
    const waited = behaviourOf(script, i + 1).waitForAll;
    return {
      previous: a.metadata['grpc-previous-rpc-attempts'],
      app: a.metadata['x-app'],
      received: waited ? a.received : a.received.filter((m, j) => m === sent[j]),
      halfClosed: waited ? a.halfClosed : undefined,
    };
  });
  const expectedServer = Array.from({ length: expected.attempts }, (_, i) => {
    const waited = behaviourOf(script, i + 1).waitForAll;
    return {
      previous: i === 0 ? undefined : String(i),
      app: 'application metadata',
      received: waited ? sent : (attempts[i]?.received ?? []),
      halfClosed: waited ? script.end : undefined,
    };
  });
  const diff = [
    ...differences(expectedApp, actualApp, '$.app'),
    ...differences(expectedServer, actualServer, '$.server'),
  ];
  expect(diff, `differs from A6's oracle (expected → actual):\n${diff.join('\n')}`).toEqual([]);
  expect(server.strays + server.lateHedges).toBe(0);
}

describe('property 2: failing attempts follow A6 (attempts, replay, attempt counts, final status)', () => {
  for (const type of CALL_TYPES) {
    const name = `A6 oracle: ${type}`;
    it.prop([failingScript(type)], propertyParams<[FailingScript]>(name, 100))(
      name,
      followsA6,
      propertyTimeout(60_000),
    );
  }
});
