/**
 * An async listener (its type, `(event) => void`, admits one) fails by rejecting: reported like a throw, once, and
 * never an unhandled rejection, which ends a Node process by default. The interceptor's onEvent (through the engine),
 * an OTel adapter's `combine`, and the flaky server's onAttemptEnd hook all go through the same wrapper.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { combineListeners } from '../../src/otel/combine-listeners.js';
import type { RetryEvent } from '../../src/retry/events.js';
import { listenerOf } from '../../src/retry/interceptor-options.js';
import { safeListener } from '../../src/util/safe-listener.js';
import { captureWarnings } from '../helpers/warnings.js';

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

afterEach(() => {
  vi.restoreAllMocks();
  process.off('unhandledRejection', onUnhandled);
  unhandled.length = 0;
});

/** Lets rejected promises settle and Node report the unhandled ones. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

describe('an async listener that rejects', () => {
  it('is reported once as GRPC_RETRY_HEDGING_LISTENER_ERROR, with no unhandled rejection', async () => {
    process.on('unhandledRejection', onUnhandled);
    const warnings = captureWarnings();
    const listener = safeListener(async (_: number) => {
      throw new Error('metrics sink down');
    }, 'the onEvent listener');
    listener(1);
    listener(2);
    await settle();
    expect(unhandled).toEqual([]);
    expect(warnings).toEqual([
      {
        message: expect.stringContaining(
          'the onEvent listener returned a promise that rejected (metrics sink down)',
        ),
        code: 'GRPC_RETRY_HEDGING_LISTENER_ERROR',
      },
    ]);
  });

  it("an adapter's `combine` hands the promise on to the interceptor's onEvent wrapper", async () => {
    process.on('unhandledRejection', onUnhandled);
    const warnings = captureWarnings();
    const seen: string[] = [];
    const combined = combineListeners(
      (e: RetryEvent) => seen.push(e.type),
      async (e: RetryEvent) => {
        if (e.type === 'call-end') throw new Error('sink down');
      },
      'test',
    );
    const onEvent = listenerOf(combined, 'onEvent');
    const end = { type: 'call-end', method: '/s/M', callId: 1 } as unknown as RetryEvent;
    onEvent?.(end);
    onEvent?.(end);
    await settle();
    expect(seen).toEqual(['call-end', 'call-end']);
    expect(unhandled).toEqual([]);
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_LISTENER_ERROR']);
  });
});
