/**
 * The retry tracing together with @opentelemetry/instrumentation-grpc: one tree per call, from the application's
 * span down to the server spans, on a real grpc-js client and server (127.0.0.1, port 0).
 *
 * instrumentation-grpc wraps `Client.prototype.makeUnaryRequest` (and the other three), so its CLIENT span is
 * active while grpc-js runs the interceptors: our call span is its child, our attempt spans are children of our
 * call span, and each attempt's metadata carries the attempt's context, which the instrumented server extracts.
 */
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetryTracing } from '../../src/otel/index.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { CALL_ID_METADATA_KEY, FlakyServer, flakyTestProtoPath } from '../../src/testing/index.js';
import { FLAKY, hedgingConfig, retryConfig } from '../helpers/harness.js';

/** Spans as they start, ended or not: instrumentation-grpc never ends the server span of a unary call that the
 * client cancelled and whose handler never calls back (a losing hedge, here). */
class StartedSpans implements SpanProcessor {
  readonly spans: Span[] = [];
  onStart(span: Span): void {
    this.spans.push(span);
  }
  onEnd(): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const exporter = new InMemorySpanExporter();
const started = new StartedSpans();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), started] });
let patchedGrpc: typeof grpc;
const instrumentation = new GrpcInstrumentation();
const tracing = createRetryTracing();
let server: FlakyServer;
const clients: grpc.Client[] = [];

type UnaryFn = (
  request: object,
  metadata: grpc.Metadata,
  callback: (error: grpc.ServiceError | null) => void,
) => void;

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  instrumentation.setTracerProvider(provider);
  instrumentation.enable();
  // The instrumentation patches grpc-js when it is required; this test file imported it already (as ESM), so
  // require it once more: the patch lands on the shared Client and Server prototypes.
  patchedGrpc = createRequire(import.meta.url)('@grpc/grpc-js') as typeof grpc;
  expect(patchedGrpc.Client.prototype).toBe(grpc.Client.prototype);
  server = await FlakyServer.start(); // its grpc.Server registers its handlers through the patched prototype
});

afterAll(async () => {
  for (const client of clients) client.close();
  await server?.stop();
  instrumentation.disable();
  await provider.shutdown();
  trace.disable();
  propagation.disable();
  context.disable();
});

function newClient(config: object): grpc.Client {
  // Through the patched module, as a CommonJS application loads it: instrumentation-grpc wraps the methods of
  // the clients that loadPackageDefinition makes (they call grpc-js's request functions directly).
  const definition = protoLoader.loadSync(flakyTestProtoPath(), { defaults: true, oneofs: true });
  const pkg = patchedGrpc.loadPackageDefinition(definition) as unknown as {
    grpc_retry_hedging: { testing: { v1: { FlakyTest: grpc.ServiceClientConstructor } } };
  };
  const Service = pkg.grpc_retry_hedging.testing.v1.FlakyTest;
  const client = new Service(server.address, grpc.credentials.createInsecure(), {
    interceptors: [createRetryInterceptor(config, { onEvent: tracing.onEvent })],
    'grpc.enable_retries': 0,
  });
  clients.push(client);
  return client;
}

/** Makes one unary call inside an application span; resolves with the trace id once every span has ended. */
async function tracedCall(
  client: grpc.Client,
  callId: string,
  expectedSpans: number,
): Promise<ReadableSpan[]> {
  const tracer = provider.getTracer('app');
  const traceId = await tracer.startActiveSpan(`app ${callId}`, (span) => {
    const metadata = new grpc.Metadata();
    metadata.set(CALL_ID_METADATA_KEY, callId);
    return new Promise<string>((resolve) => {
      (client as unknown as { Unary: UnaryFn }).Unary({ payload: 'x' }, metadata, (error) => {
        expect(error).toBeNull();
        span.end();
        resolve(span.spanContext().traceId);
      });
    });
  });
  const spans = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  const giveUpAt = Date.now() + 5_000;
  while (spans().length < expectedSpans && Date.now() < giveUpAt) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return spans();
}

/** Every span's parent is in the same trace, except one root: the tree is whole. */
function expectOneTree(spans: ReadableSpan[]): ReadableSpan {
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  const roots = spans.filter(
    (s) => s.parentSpanContext === undefined || !ids.has(s.parentSpanContext.spanId),
  );
  expect(roots.map((s) => s.name)).toHaveLength(1);
  return roots[0] as ReadableSpan;
}

const children = (spans: ReadableSpan[], parent: ReadableSpan | undefined) =>
  spans.filter((s) => s.parentSpanContext?.spanId === parent?.spanContext().spanId);

describe('retry tracing with @opentelemetry/instrumentation-grpc', () => {
  it('is patched into grpc-js', () => {
    expect((grpc.Client.prototype.makeUnaryRequest as { __wrapped?: boolean }).__wrapped).toBe(true);
  });

  it('a retried call: app → instrumentation CLIENT span → our call span → attempts → instrumentation SERVER spans', async () => {
    server.script('retry-coexist', [{ status: grpc.status.UNAVAILABLE }, {}]);
    const spans = await tracedCall(newClient(retryConfig()), 'retry-coexist', 1 + 1 + 1 + 2 * 2);
    expect(spans).toHaveLength(7);
    const root = expectOneTree(spans);
    expect(root.name).toBe('app retry-coexist');

    const [clientSpan, ...moreClients] = children(spans, root);
    expect(moreClients).toEqual([]);
    expect(clientSpan?.name).toBe(`grpc.${FLAKY}/Unary`);
    expect(clientSpan?.kind).toBe(SpanKind.CLIENT);
    expect(clientSpan?.instrumentationScope.name).toBe('@opentelemetry/instrumentation-grpc');

    const [callSpan, ...moreCalls] = children(spans, clientSpan);
    expect(moreCalls).toEqual([]);
    expect(callSpan?.name).toBe(`Sent.${FLAKY}.Unary`);

    const attempts = children(spans, callSpan).sort(
      (x, y) => Number(x.attributes['grpc.attempt.number']) - Number(y.attributes['grpc.attempt.number']),
    );
    expect(attempts.map((s) => [s.name, s.attributes['grpc.attempt.kind']])).toEqual([
      [`Attempt.${FLAKY}.Unary`, 'original'],
      [`Attempt.${FLAKY}.Unary`, 'retry'],
    ]);
    for (const attempt of attempts) {
      const [serverSpan, ...more] = children(spans, attempt);
      expect(more).toEqual([]);
      expect(serverSpan?.name).toBe(`grpc.${FLAKY}/Unary`);
      expect(serverSpan?.kind).toBe(SpanKind.SERVER);
    }
  });

  it('a hedged call: the losing attempt and its server span stay in the same tree', async () => {
    server.script('hedge-coexist', [{ delayMs: 2_000 }, {}]);
    const client = newClient(hedgingConfig({ maxAttempts: 2, hedgingDelay: '0.02s' }));
    // The loser's server span never ends (see StartedSpans), so 6 of the 7 spans end.
    const spans = await tracedCall(client, 'hedge-coexist', 6);
    expect(spans).toHaveLength(6);
    const root = expectOneTree(spans);
    const [clientSpan] = children(spans, root);
    expect(clientSpan?.name).toBe(`grpc.${FLAKY}/Unary`);
    const [callSpan] = children(spans, clientSpan);
    expect(callSpan?.name).toBe(`Sent.${FLAKY}.Unary`);
    const attempts = children(spans, callSpan);
    expect(attempts).toHaveLength(2);
    const loser = attempts.find((s) => s.attributes['grpc.attempt.cancelled_by_other_attempt'] === true);
    const winner = attempts.find((s) => s.attributes['grpc.attempt.committed'] === true);
    expect(loser?.attributes['grpc.attempt.kind']).toBe('original');
    expect(winner?.attributes['grpc.attempt.kind']).toBe('hedge');
    expect(children(spans, winner).map((s) => s.kind)).toEqual([SpanKind.SERVER]);
    const loserServer = started.spans.filter(
      (s) => s.parentSpanContext?.spanId === loser?.spanContext().spanId,
    );
    expect(loserServer.map((s) => [s.name, s.kind])).toEqual([[`grpc.${FLAKY}/Unary`, SpanKind.SERVER]]);
    expect(tracing.trackedCalls).toBe(0);
  });
});
