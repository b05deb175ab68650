import * as grpc from '@grpc/grpc-js';
import { type ClientRecord, ObservedCall } from './client-call.js';
import type { ConversationScript } from './conversation-script.js';
import {
  type AttemptRecord,
  digest,
  messageBytes,
  type ScriptServer,
  type ServerAttempt,
} from './script-server.js';
import { RUN_ID_HEADER, requestStreams, type ScriptClientInstance } from './script-service.js';
import { sleep, within } from './signal.js';

/** What one run of a script showed: the application's view and the server's. */
export interface RunRecord {
  readonly client: ClientRecord;
  readonly server: readonly AttemptRecord[];
  /** The call ended before the script reached its ending (a hang that the deadline cut, say). */
  readonly endedEarly: boolean;
  /** The call never told the application it ended (within its deadline and some seconds more). */
  readonly neverEnded: boolean;
}

export interface RunOptions {
  /** Deadline of a script that ends with `deadline` (ms from the start). */
  readonly shortDeadlineMs: number;
  /** Deadline of every other script: only there so that a hang ends, as a DEADLINE_EXCEEDED difference. */
  readonly hangGuardMs: number;
  /** Called with the call object once it exists (a listener of the interceptor's events may cancel it). */
  readonly onCall?: (call: ObservedCall) => void;
}

export const DEFAULT_RUN_OPTIONS: RunOptions = { shortDeadlineMs: 150, hangGuardMs: 5000 };

function headersOf(): grpc.Metadata {
  const headers = new grpc.Metadata();
  headers.set('x-h', 'scripted headers');
  headers.set('x-h-bin', Buffer.from([0, 1, 2, 255]));
  return headers;
}

function trailersOf(present: boolean): grpc.Metadata {
  const trailers = new grpc.Metadata();
  if (present) {
    trailers.set('x-t', 'scripted trailers');
    trailers.set('x-t-bin', Buffer.from([255, 0, 7]));
  }
  return trailers;
}

/**
 * Runs a conversation script once against `client` (bare or intercepted) and the script server, and records what
 * both sides saw. Each step waits until its side has observed the other side's earlier steps (or the call ended).
 */
export async function runConversation(
  server: ScriptServer,
  client: ScriptClientInstance,
  script: ConversationScript,
  options: RunOptions = DEFAULT_RUN_OPTIONS,
): Promise<RunRecord> {
  const { id, run } = server.open();
  const signal = run.signal;
  const deadlineMs = script.ending.by === 'deadline' ? options.shortDeadlineMs : options.hangGuardMs;
  const metadata = new grpc.Metadata();
  metadata.set(RUN_ID_HEADER, id);
  metadata.set('x-app', 'application metadata');
  const streamed = requestStreams(script.type);
  // When the client cancelled the call (performance.now() time). A deadline counts from when the application saw
  // the call end: Node's end-then-reset of the stream reaches the server after that.
  let cancelledAt = Number.POSITIVE_INFINITY;
  const cancel = (): void => {
    cancelledAt = Math.min(cancelledAt, performance.now());
    call.call.cancel();
  };
  const call = new ObservedCall(
    client,
    script.type,
    messageBytes(script.request, 0x55),
    metadata,
    { deadline: Date.now() + deadlineMs },
    signal,
  );
  options.onCall?.(call);

  // What each side has done so far, which the other side must observe before its next step.
  let writes = streamed ? 0 : 1;
  let halfClosed = !streamed;
  let headersSent = false;
  let sends = 0;
  let attempt: ServerAttempt | undefined;
  const over = (): boolean => call.ended || attempt?.closed === true;
  const clientCaughtUp = (): boolean =>
    (!headersSent || call.metadataEvents > 0) && call.responses.length >= sends;
  const serverCaughtUp = (a: ServerAttempt): boolean =>
    a.received.length >= writes && (!halfClosed || a.halfClosed);
  const serverAttempt = async (): Promise<ServerAttempt | undefined> => {
    attempt ??= await run.attempt(1, () => call.ended);
    return attempt;
  };

  let endedEarly = false;
  const steps = script.steps;
  for (const [i, step] of steps.entries()) {
    if (step.by === 'client') {
      await signal.until(() => clientCaughtUp() || over());
      if (call.ended) {
        endedEarly = true;
        break;
      }
      if (step.do === 'write') {
        const done = call.write(messageBytes(step.size, writes + 1), !step.noCallback);
        writes++;
        if (step.awaitCallback) {
          await signal.until(() => done() || call.ended);
        }
      } else if (step.do === 'pause') {
        await sleep(step.ms);
      } else {
        halfClosed = true;
        call.call.end?.();
      }
    } else {
      const a = await serverAttempt();
      if (!a) {
        endedEarly = true;
        break;
      }
      await signal.until(() => serverCaughtUp(a) || over());
      if (over()) {
        endedEarly = true;
        break;
      }
      const cancelInListener =
        i === steps.length - 1 && script.ending.by === 'client' && script.ending.inListener;
      if (cancelInListener) {
        let cancelled = false;
        call.afterEvent = () => {
          if (!cancelled && clientCaughtUp()) {
            cancelled = true;
            cancel();
          }
        };
      }
      if (step.do === 'headers') {
        headersSent = true;
        a.sendHeaders(headersOf());
      } else if (step.do === 'send') {
        sends++;
        a.send(step.echo ? (a.received.at(-1) ?? Buffer.alloc(0)) : messageBytes(step.size, 0x80 + sends));
      } else {
        await sleep(step.ms);
      }
    }
  }

  const ending = script.ending;
  if (!endedEarly) {
    if (ending.by === 'server') {
      const a = await serverAttempt();
      if (a) {
        await signal.until(() => serverCaughtUp(a) || over());
      }
      if (!a || over()) {
        endedEarly = true;
      } else {
        // An OK response of a unary-response method reports everything the server received, in order.
        const report = Buffer.from(a.received.map(digest).join(',') + (a.halfClosed ? ',end' : ''));
        a.finish({
          code: ending.code,
          details: ending.details,
          trailers: trailersOf(ending.trailers),
          response: Buffer.concat([report, messageBytes(ending.size, 0xee)]),
        });
      }
    } else {
      // Cancel or deadline: both sides first see everything, so that what the server received is settled.
      const a = await serverAttempt();
      await signal.until(() => (clientCaughtUp() && (!a || serverCaughtUp(a))) || over());
      if (over() && !(ending.by === 'client' && ending.inListener)) {
        endedEarly = true;
      } else if (ending.by === 'client' && !ending.inListener) {
        cancel();
      }
    }
  }

  const ended = await within(
    signal.until(() => call.ended),
    deadlineMs + 3000,
  );
  const neverEnded = ended === undefined && !call.ended;
  // Let the server see the end of every attempt (grpc-js itself may still send a half-close made right after the
  // status, before its reset), then call end() and cancel() on the ended call: they must change nothing.
  await within(
    signal.until(() => run.allClosed),
    2000,
  );
  if (script.endAfterwards && streamed) {
    call.call.end?.();
  }
  if (script.cancelAfterwards) {
    call.call.cancel();
  }
  // Late events (a second status, late callbacks) would arrive now.
  await sleep(5);
  server.close(id);
  return {
    client: call.record(),
    server: run.attempts.map((a) =>
      a.record(Math.min(cancelledAt, call.endedAt ?? Number.POSITIVE_INFINITY)),
    ),
    endedEarly,
    neverEnded,
  };
}
