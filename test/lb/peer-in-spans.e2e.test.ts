import { status } from '@grpc/grpc-js';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { expect, it } from 'vitest';
import { RETRY_SPAN_ATTRIBUTES as A, createRetryTracing } from '../../src/otel/index.js';
import { retryConfig, unary } from '../helpers/harness.js';
import { startReplicaHarness, warmUp } from './replica-harness.js';

it('attempt spans carry the replica each attempt went to (network.peer.address / network.peer.port)', async () => {
  const h = await startReplicaHarness([{ status: 'UNAVAILABLE' }, {}, {}], retryConfig({ maxAttempts: 2 }));
  try {
    await warmUp(h, [0, 1, 2]);
    for (let i = 0; i < 6; i++) {
      expect((await unary(h.client, `span-${i}`)).code).toBe(status.OK);
    }
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracing = createRetryTracing({ tracerProvider: provider });
    for (const event of h.events) {
      tracing.onEvent(event);
    }
    const attempts = exporter.getFinishedSpans().filter((s) => s.attributes[A.attemptNumber] !== undefined);
    const served = h.cluster.attempts();
    expect(attempts).toHaveLength(served.length);
    const ports = h.cluster.addresses.map((address) => Number(address.split(':')[1]));
    // Calls ran one at a time: spans end in the order the replicas served the attempts.
    attempts.forEach((span, i) => {
      expect(span.attributes[A.peerAddress]).toBe('127.0.0.1');
      expect(span.attributes[A.peerPort]).toBe(ports[served[i]?.replica ?? -1]);
    });
  } finally {
    await h.close();
  }
});
