/**
 * What an interceptor above the retry interceptor sees of a unary call that ends without a response: the same
 * listener calls as on a client without it. grpc-js's own unary calls hand a null message to the listener before
 * such a status; the retry interceptor dropped it whenever the status was its own or came after failed attempts
 * (found by an outside audit of interceptor stacks: a logging interceptor counted one message fewer).
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { FlakyServer } from '../../src/testing/index.js';
import { callMetadata, retryConfig, testClient } from '../helpers/harness.js';

let server: FlakyServer;
beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

/** Records the listener calls an interceptor at this place sees. */
function spy(log: string[]): grpc.Interceptor {
  return (options, next) =>
    new grpc.InterceptingCall(next(options), {
      start(metadata, _listener, nextStart) {
        nextStart(metadata, {
          onReceiveMetadata(md, nextMd) {
            log.push('headers');
            nextMd(md);
          },
          onReceiveMessage(message, nextMessage) {
            log.push(message === null ? 'message(null)' : 'message');
            nextMessage(message);
          },
          onReceiveStatus(status, nextStatus) {
            log.push(`status ${grpc.status[status.code]}`);
            nextStatus(status);
          },
        });
      },
    });
}

/** One unary call through `[spy, ...below]`; resolves with what the spy saw. */
async function seen(
  below: grpc.Interceptor[],
  callId: string,
  script: object[],
  callOptions: grpc.CallOptions = {},
  cancelAfterMs?: number,
): Promise<string[]> {
  const log: string[] = [];
  server.script(callId, script);
  const client = testClient(server.address, [spy(log), ...below]);
  try {
    await new Promise<void>((resolve) => {
      const call = (
        client as unknown as {
          Unary(r: object, md: grpc.Metadata, o: grpc.CallOptions, cb: () => void): grpc.ClientUnaryCall;
        }
      ).Unary({ payload: 'x' }, callMetadata(callId), callOptions, () => resolve());
      if (cancelAfterMs !== undefined) setTimeout(() => call.cancel(), cancelAfterMs);
    });
  } finally {
    client.close();
  }
  return log;
}

const retry = (backoff = '0.01s') =>
  createRetryInterceptor(retryConfig({ maxAttempts: 3, initialBackoff: backoff, maxBackoff: backoff }));
const UNAVAILABLE = { status: grpc.status.UNAVAILABLE };

describe('an interceptor above the retry interceptor, a unary call without a response', () => {
  it('every attempt failed: the null message, then the status, as bare', async () => {
    const bare = await seen([], 'seq-bare-fail', [UNAVAILABLE]);
    const ours = await seen([retry()], 'seq-fail', [UNAVAILABLE, UNAVAILABLE, UNAVAILABLE]);
    expect(bare).toEqual(['message(null)', 'status UNAVAILABLE']);
    expect(ours).toEqual(bare);
    expect(server.attempts('seq-fail')).toHaveLength(3);
  });

  it('the deadline passed during a backoff: the null message before the status', async () => {
    const ours = await seen([retry('1s')], 'seq-backoff', [UNAVAILABLE], { deadline: Date.now() + 150 });
    expect(ours).toEqual(['message(null)', 'status DEADLINE_EXCEEDED']);
  });

  it('cancelled while the server holds the attempt: as bare', async () => {
    const hold = [{ sendHeaders: true, delayMs: 5000 }];
    const bare = await seen([], 'seq-bare-cancel', hold, {}, 100);
    const ours = await seen([retry()], 'seq-cancel', hold, {}, 100);
    expect(bare).toEqual(['headers', 'message(null)', 'status CANCELLED']);
    expect(ours).toEqual(bare);
  });

  it('a response: one message and no null one', async () => {
    const ours = await seen([retry()], 'seq-ok', [UNAVAILABLE, {}]);
    expect(ours).toEqual(['headers', 'message', 'status OK']);
  });
});
