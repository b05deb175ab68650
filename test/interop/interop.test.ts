/**
 * The gRPC interop test cases (grpc/grpc doc/interop-test-descriptions.md) against a `grpc.testing.TestService`
 * server on 127.0.0.1, run bare and through the retry interceptor in each mode of ./interop-modes.ts. A case that
 * passes bare must pass, unchanged, through every mode: the interceptor is transparent to calls its policy does
 * not retry, and a retry or a hedge that wins is invisible but for the attempt that answered. In each mode the
 * engine's own events are checked against what the application saw, and the server's record of every attempt
 * (once each has ended) against what the mode and the case require.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CaseContext, INTEROP_CASES, SOAK_CASES } from './interop-cases.js';
import { INTEROP_MODES, type ModeRun } from './interop-modes.js';
import { type HandledCall, type InteropServer, startInteropServer } from './interop-server.js';
import { CALL_TAG_KEY } from './interop-service.js';

let server: InteropServer;

beforeAll(async () => {
  server = await startInteropServer();
});
afterAll(async () => {
  await server?.stop();
});

/**
 * How long the attempts of a case may take to end on the server once the case is over (a loaded machine): less than
 * the cases' 5 s call deadline, so that an attempt the client left running is caught before the server's deadline
 * would end it.
 */
const SETTLE_MS = 2_500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The attempts the server ran of calls whose tag starts with `prefix`, once every one of them has ended (polled:
 * cancellations reach the server after the client is done). Fails with the ones still running after SETTLE_MS.
 */
async function settled(prefix: string, skip: readonly string[] = []): Promise<HandledCall[]> {
  const mine = () =>
    server.handled.filter((h) => h.callTag.startsWith(prefix) && !skip.some((s) => h.callTag.startsWith(s)));
  const giveUpAt = Date.now() + SETTLE_MS;
  while (mine().some((h) => h.end === undefined) && Date.now() < giveUpAt) {
    await sleep(5);
  }
  const running = mine().filter((h) => h.end === undefined);
  expect(
    running.map((h) => `${h.method} ${h.callTag} attempt ${h.attempt}`),
    'attempts still running on the server',
  ).toEqual([]);
  return mine();
}

let modeNumber = 0;

describe.each(INTEROP_MODES)('$name', (mode) => {
  let run: ModeRun;
  const modeTag = `mode${++modeNumber}`;
  let caseNumber = 0;
  /** Cases whose attempts the server may see end only at their deadline. */
  const outliving: string[] = [];

  beforeAll(() => {
    run = mode.start(server.address);
  });
  afterAll(() => {
    run?.close();
  });

  it.each([...INTEROP_CASES, ...(mode.soak ? SOAK_CASES : [])])('$name', async (interopCase) => {
    run.beforeCase();
    const caseTag = `${modeTag}/${interopCase.name}#${++caseNumber}/`;
    let callNumber = 0;
    const ctx: CaseContext = {
      ...run.clients,
      answeringAttempts: run.answeringAttempts,
      timeline: {},
      metadata() {
        const metadata = new grpc.Metadata();
        metadata.set(CALL_TAG_KEY, `${caseTag}${++callNumber}`);
        for (const [key, value] of Object.entries(run.callHeaders)) {
          metadata.set(key, value);
        }
        return metadata;
      },
    };
    const codes = await interopCase.run(ctx);
    if (interopCase.serverMayOutlive) {
      outliving.push(caseTag);
    }
    const handled = interopCase.serverMayOutlive
      ? server.handled.filter((h) => h.callTag.startsWith(caseTag))
      : await settled(caseTag);
    // No attempt number twice in one call.
    const calls = new Map<string, number[]>();
    for (const h of handled) {
      calls.set(h.callTag, [...(calls.get(h.callTag) ?? []), h.attempt]);
    }
    for (const [tag, attempts] of calls) {
      expect(new Set(attempts).size, `attempt numbers of ${tag}: ${attempts}`).toBe(attempts.length);
    }
    interopCase.checkServer?.(handled, ctx);
    run.afterCase(interopCase.name, codes, handled);
  });

  it('the mode took part in the calls', async () => {
    await run.afterAll();
    // Every attempt of the mode's calls ended on the server: none was left running.
    expect((await settled(`${modeTag}/`, outliving)).length).toBeGreaterThan(0);
  });
});
