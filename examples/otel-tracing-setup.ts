/**
 * The complete OpenTelemetry tracing setup for the retry interceptor, as docs/observability.md shows it: an SDK
 * tracer provider with an exporter, a context manager and a propagator, registered globally; then a call under a
 * retry policy whose call span and attempt spans reach the exporter. Here the exporter prints spans to the
 * console; in production use an OTLP exporter (@opentelemetry/exporter-trace-otlp-grpc) in its place.
 *
 *   npm run build && node --import tsx examples/otel-tracing-setup.ts
 */

import { fileURLToPath } from 'node:url';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { createRetryInterceptor } from 'grpc-retry-hedging';
import { createRetryTracing } from 'grpc-retry-hedging/otel';
import { createFlakyTestClient, FlakyServer } from 'grpc-retry-hedging/testing';

export async function main(exporter: SpanExporter = new ConsoleSpanExporter()): Promise<void> {
  // 1. Once, at start-up: the SDK (a provider with a processor and an exporter), a context manager so that spans
  //    nest under the caller's, and a propagator so that each attempt carries its span context to the server.
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());

  // 2. Per client: the tracing adapter feeds on the interceptor's events.
  const tracing = createRetryTracing();
  const server = await FlakyServer.start();
  server.scriptMethod('grpc_retry_hedging.testing.v1.FlakyTest/Unary', [{ status: 'UNAVAILABLE' }, {}]);
  const interceptor = createRetryInterceptor(
    {
      methodConfig: [
        {
          name: [{ service: 'grpc_retry_hedging.testing.v1.FlakyTest' }],
          retryPolicy: {
            maxAttempts: 3,
            initialBackoff: '0.01s',
            maxBackoff: '0.1s',
            backoffMultiplier: 2,
            retryableStatusCodes: ['UNAVAILABLE'],
          },
        },
      ],
    },
    { onEvent: tracing.onEvent },
  );
  const client = createFlakyTestClient(server.address, { interceptors: [interceptor] });

  // 3. A call: one call span (Sent.…) with an attempt span (Attempt.…) per attempt, here two.
  await new Promise<void>((resolve, reject) =>
    client.Unary({ payload: 'traced' }, (error) => (error ? reject(error) : resolve())),
  );

  // 4. At shut-down: end what the adapter holds open, then flush the exporter.
  client.close();
  tracing.close();
  await server.stop();
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
