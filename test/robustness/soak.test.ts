/**
 * Soak: 20,000 unary calls at concurrency 50 against a server in another process, 10% of them failing once with
 * UNAVAILABLE and retried. Heap stays bounded, every call ends once, and no timer or socket outlives the client.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import { CALL_ID_METADATA_KEY } from '../../src/testing/index.js';
import { type FlakyClient, retryConfig } from '../helpers/harness.js';
import { activeResources, ChildServer, getGc, retryClient, waitUntil } from './helpers.js';

const CALLS = 20_000;
const WARMUP = 1_000;
const CONCURRENCY = 50;
const MiB = 1024 * 1024;

let child: ChildServer | undefined;
afterAll(async () => {
  await child?.stop();
});

interface Tally {
  ok: number;
  failed: number;
  callbacks: number;
  statuses: number;
}

function call(client: FlakyClient, id: string, tally: Tally): Promise<void> {
  return new Promise((resolve) => {
    const metadata = new grpc.Metadata();
    metadata.set(CALL_ID_METADATA_KEY, id);
    const c = client.Unary({ payload: id }, metadata, (error: grpc.ServiceError | null) => {
      tally.callbacks += 1;
      if (error) tally.failed += 1;
      else tally.ok += 1;
      // grpc-js emits 'status' right after the callback; count it before going on.
      setImmediate(resolve);
    }) as grpc.ClientUnaryCall;
    c.on('status', () => {
      tally.statuses += 1;
    });
  });
}

async function run(client: FlakyClient, from: number, count: number, tally: Tally): Promise<void> {
  let next = from;
  const end = from + count;
  const worker = async (): Promise<void> => {
    while (next < end) {
      const i = next++;
      await call(client, i % 10 === 0 ? `fail-${i}` : `ok-${i}`, tally);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

describe('soak', () => {
  it('20,000 retried unary calls: bounded heap, every call ends once, no leaked timers or sockets', async () => {
    child = await ChildServer.spawn();
    const port = await child.bind(0, 'soak');
    const gc = getGc();
    const baseTimers = activeResources('Timeout');
    const baseSockets = activeResources('TCPSocketWrap');
    let callEnds = 0;
    let retries = 0;
    const { client, close } = retryClient(
      `127.0.0.1:${port}`,
      retryConfig({ maxAttempts: 3, initialBackoff: '0.002s', maxBackoff: '0.005s' }),
      {
        onEvent: (e) => {
          if (e.type === 'call-end') callEnds += 1;
          else if (e.type === 'retry-scheduled') retries += 1;
        },
      },
    );

    const tally: Tally = { ok: 0, failed: 0, callbacks: 0, statuses: 0 };
    await run(client, 0, WARMUP, tally);
    gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const started = Date.now();
    await run(client, WARMUP, CALLS, tally);
    const elapsed = Date.now() - started;
    gc?.();
    const growth = process.memoryUsage().heapUsed - heapBefore;

    console.info(
      `soak: ${CALLS} calls in ${elapsed} ms; heap ${growth >= 0 ? '+' : ''}${(growth / MiB).toFixed(2)} MiB ` +
        `after GC (${gc ? 'forced' : 'not available'}); timers ${activeResources('Timeout')} (baseline ${baseTimers})`,
    );
    const total = WARMUP + CALLS;
    expect(tally).toEqual({ ok: total, failed: 0, callbacks: total, statuses: total });
    expect(callEnds).toBe(total);
    expect(retries).toBe(total / 10);
    const stats = await child.stats();
    expect(stats).toEqual({ attempts: total + total / 10, failed: total / 10 });
    // Strict when a GC can be forced; otherwise only a generous bound.
    expect(growth, `heap grew by ${(growth / MiB).toFixed(1)} MiB in ${elapsed} ms`).toBeLessThan(
      (gc ? 8 : 50) * MiB,
    );

    close();
    await waitUntil(() => activeResources('Timeout') <= baseTimers, 5000, 'timers back to baseline').catch(
      () => {
        throw new Error(`timers: ${activeResources('Timeout')} active, baseline ${baseTimers}`);
      },
    );
    await waitUntil(() => activeResources('TCPSocketWrap') <= baseSockets, 5000, 'sockets closed').catch(
      () => {
        throw new Error(`sockets: ${activeResources('TCPSocketWrap')} active, baseline ${baseSockets}`);
      },
    );
  }, 90_000);
});
