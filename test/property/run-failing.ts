import * as grpc from '@grpc/grpc-js';
import type { RetryEvent } from '../../src/retry/events.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { oneEntryConfig } from '../helpers/service-configs.js';
import { ObservedCall } from './client-call.js';
import type { FailingScript } from './failing-script.js';
import { behaviourOf } from './retry-oracle.js';
import type { RunRecord } from './run-conversation.js';
import { digest, messageBytes, type ScriptServer, type ServerAttempt } from './script-server.js';
import {
  RUN_ID_HEADER,
  requestStreams,
  responseStreams,
  type ScriptClientInstance,
  SERVICE_NAME,
} from './script-service.js';
import { sleep, within } from './signal.js';

const HANG_GUARD_MS = 5000;

/** The response message attempt `n` sends (before failing, or with its OK). */
export function attemptMessage(n: number): Buffer {
  return messageBytes(10 + n, 0xa0 + n);
}

/** The service config of a failing script, with tiny backoffs (attempts are counted, not timed). */
export function failingConfig(script: FailingScript): object {
  const policy =
    script.policy === 'retry'
      ? {
          retryPolicy: {
            maxAttempts: script.maxAttempts,
            initialBackoff: '0.001s',
            maxBackoff: '0.002s',
            backoffMultiplier: 2,
            retryableStatusCodes: script.codes,
          },
        }
      : {
          hedgingPolicy: {
            maxAttempts: script.maxAttempts,
            hedgingDelay: '60s',
            nonFatalStatusCodes: script.codes,
          },
        };
  return oneEntryConfig(SERVICE_NAME, policy);
}

/** Plays attempt `a` as the script says. */
async function playAttempt(script: FailingScript, a: ServerAttempt, messages: number): Promise<void> {
  const b = behaviourOf(script, a.number);
  const signal = a.signal;
  const headers = new grpc.Metadata();
  headers.set('x-h-attempt', String(a.number));
  if (b.headersAtArrival) {
    a.sendHeaders(headers);
  }
  if (b.waitForAll) {
    await signal.until(() => (a.received.length >= messages && (!script.end || a.halfClosed)) || a.closed);
  }
  if (b.delayMs > 0) {
    await sleep(b.delayMs);
  }
  const trailers = new grpc.Metadata();
  trailers.set('x-t-attempt', String(a.number));
  if (b.ok || b.headersFirst || b.messageFirst) {
    a.sendHeaders(headers);
  }
  if (b.messageFirst) {
    a.send(attemptMessage(a.number));
  }
  if (!b.ok) {
    a.finish({ code: b.code, details: b.details, trailers });
  } else if (responseStreams(script.type)) {
    a.send(attemptMessage(a.number));
    a.finish({ code: grpc.status.OK, details: '', trailers });
  } else {
    const report = Buffer.from(a.received.map(digest).join(',') + (a.halfClosed ? ',end' : ''));
    a.finish({ code: grpc.status.OK, details: '', trailers, response: report });
  }
}

/**
 * Runs a failing script once through a retry interceptor built from its policy (per call, on the shared channel)
 * and records what the application and the server saw. `events` receives the interceptor's events.
 */
export async function runFailing(
  server: ScriptServer,
  client: ScriptClientInstance,
  script: FailingScript,
  events: RetryEvent[] = [],
): Promise<RunRecord> {
  const streamed = requestStreams(script.type);
  const messages = streamed ? script.writes.length : 1;
  const { id, run } = server.open((a) => {
    void playAttempt(script, a, messages);
  });
  const signal = run.signal;
  let call: ObservedCall | undefined;
  let seen = 0;
  const interceptor = createRetryInterceptor(failingConfig(script), {
    onEvent(event) {
      events.push(event);
      if (script.cancelOn && event.type === script.cancelOn.event && ++seen === script.cancelOn.nth) {
        call?.call.cancel();
      }
    },
  });
  const metadata = new grpc.Metadata();
  metadata.set(RUN_ID_HEADER, id);
  metadata.set('x-app', 'application metadata');
  call = new ObservedCall(
    client,
    script.type,
    messageBytes(script.request, 0x55),
    metadata,
    { deadline: Date.now() + HANG_GUARD_MS, interceptors: [interceptor] },
    signal,
  );
  const observed = call;
  for (const [i, write] of script.writes.entries()) {
    if (observed.ended) {
      break;
    }
    const done = observed.write(messageBytes(write.size, i + 1));
    if (write.awaitCallback) {
      await signal.until(() => done() || observed.ended);
    }
  }
  if (streamed && script.end && !observed.ended) {
    observed.call.end?.();
  }
  await within(
    signal.until(() => observed.ended),
    HANG_GUARD_MS + 3000,
  );
  const neverEnded = !observed.ended;
  await within(
    signal.until(() => run.allClosed),
    2000,
  );
  await sleep(5);
  server.close(id);
  return {
    client: observed.record(),
    server: run.attempts.map((a) => a.record()),
    endedEarly: false,
    neverEnded,
  };
}
