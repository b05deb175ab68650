/**
 * `attempt-end.peer` and the attempt span's network.peer.address/port name the address that served the attempt,
 * on real grpc-js channels: absent when no connection carried it (nothing listens), never the channel's target,
 * which grpc-js's getPeer says until a subchannel carries the call; a unix socket's path when one served it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it } from 'vitest';
import { RETRY_SPAN_ATTRIBUTES as A, createRetryTracing } from '../../src/otel/index.js';
import type { RetryEvent } from '../../src/retry/events.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { FlakyServer, loadFlakyTestService } from '../../src/testing/index.js';
import { eventsOf, retryConfig, testClient, unary } from '../helpers/harness.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
afterAll(() => provider.shutdown());

/** A port on 127.0.0.1 with nothing listening. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Three attempts (all UNAVAILABLE when nothing answers) on `target`: their attempt-end events and spans. */
async function attemptsOn(
  target: string,
): Promise<{ code: number; ends: RetryEvent[]; spans: ReadableSpan[]; server: unknown[] }> {
  exporter.reset();
  const events: RetryEvent[] = [];
  const tracing = createRetryTracing({ tracerProvider: provider });
  const config = retryConfig({ maxAttempts: 3, initialBackoff: '0.01s', maxBackoff: '0.01s' });
  const interceptor = createRetryInterceptor(config, { onEvent: [tracing.onEvent, (e) => events.push(e)] });
  const client = testClient(target, [interceptor]);
  try {
    const { code } = await unary(client, 'peer');
    const spans = exporter.getFinishedSpans().filter((s) => s.name.startsWith('Attempt.'));
    // The call span's server is the target's, whichever replica served an attempt.
    const call = exporter.getFinishedSpans().find((s) => s.name.startsWith('Sent.'));
    const server = [call?.attributes[A.serverAddress], call?.attributes[A.serverPort]];
    return { code, ends: eventsOf(events, 'attempt-end'), spans, server };
  } finally {
    client.close();
  }
}

describe('the peer of an attempt', () => {
  it('is absent when nothing listens: not the channel target (dns:localhost:port, an ipv4: list)', async () => {
    const [a, b] = [await closedPort(), await closedPort()];
    const servers: Record<string, unknown[]> = {
      [`localhost:${a}`]: ['localhost', a],
      [`127.0.0.1:${a}`]: ['127.0.0.1', a],
      [`ipv4:127.0.0.1:${a},127.0.0.1:${b}`]: [undefined, undefined],
    };
    for (const [target, server] of Object.entries(servers)) {
      const run = await attemptsOn(target);
      const { code, ends, spans } = run;
      expect(run.server, target).toEqual(server);
      expect(code, target).toBe(grpc.status.UNAVAILABLE);
      expect(ends, target).toHaveLength(3);
      for (const end of ends) {
        expect(end, target).not.toHaveProperty('peer');
      }
      expect(spans, target).toHaveLength(3);
      for (const span of spans) {
        expect(span.attributes[A.peerAddress], target).toBeUndefined();
        expect(span.attributes[A.peerPort], target).toBeUndefined();
      }
    }
  });

  it('is the address that served it: 127.0.0.1 and the port', async () => {
    const server = await FlakyServer.start();
    try {
      server.scriptMethod('grpc_retry_hedging.testing.v1.FlakyTest/Unary', [{ status: 'UNAVAILABLE' }, {}]);
      const port = Number(server.address.split(':').at(-1));
      const { code, ends, spans, server: called } = await attemptsOn(server.address);
      expect(code).toBe(grpc.status.OK);
      expect(called).toEqual(['127.0.0.1', port]);
      expect(ends.map((e) => (e as { peer?: string }).peer)).toEqual([
        `127.0.0.1:${port}`,
        `127.0.0.1:${port}`,
      ]);
      expect(spans.map((s) => [s.attributes[A.peerAddress], s.attributes[A.peerPort]])).toEqual([
        ['127.0.0.1', port],
        ['127.0.0.1', port],
      ]);
    } finally {
      await server.stop();
    }
  });

  it('is the socket path on a unix: channel (grpc-js names a unix subchannel by its path)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grh-peer-'));
    const path = join(dir, 'app.sock');
    const server = new grpc.Server();
    server.addService(loadFlakyTestService().service, {
      Unary: (_call: unknown, callback: grpc.sendUnaryData<unknown>) =>
        callback({ code: grpc.status.UNAVAILABLE, details: 'down' }),
    });
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix:${path}`, grpc.ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    try {
      const { code, ends, spans, server: called } = await attemptsOn(`unix:${path}`);
      expect(code).toBe(grpc.status.UNAVAILABLE);
      expect(called).toEqual([path, undefined]);
      expect(ends.map((e) => (e as { peer?: string }).peer)).toEqual([path, path, path]);
      expect(spans.map((s) => s.attributes[A.peerAddress])).toEqual([path, path, path]);
      expect(spans.map((s) => s.attributes[A.peerPort])).toEqual([undefined, undefined, undefined]);
    } finally {
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
