/**
 * Traces two calls to the flaky test server with OpenTelemetry and prints their span trees: a call that fails
 * twice and succeeds on its second retry, and a hedged call whose hedge wins while the original attempt is slow.
 * The server extracts each attempt's span context from its metadata, so its spans hang under the right attempt.
 *
 *   npm run build && node --import tsx examples/otel-tracing.ts
 */

import { pathToFileURL } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createRetryInterceptor } from 'grpc-retry-hedging';
import { createRetryTracing, metadataGetter } from 'grpc-retry-hedging/otel';
import {
  type AttemptScript,
  CALL_ID_METADATA_KEY,
  FlakyServer,
  loadFlakyTestService,
} from 'grpc-retry-hedging/testing';

const SERVICE = 'grpc_retry_hedging.testing.v1.FlakyTest';

/** What the example returns: the finished spans of each call, and the printed trees. */
export interface TracingExampleResult {
  retried: ReadableSpan[];
  hedged: ReadableSpan[];
  trees: { retried: string; hedged: string };
}

const retryConfig = {
  methodConfig: [
    {
      name: [{ service: SERVICE }],
      retryPolicy: {
        maxAttempts: 4,
        initialBackoff: '0.02s',
        maxBackoff: '0.1s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
};

const hedgingConfig = {
  methodConfig: [
    {
      name: [{ service: SERVICE }],
      hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.05s', nonFatalStatusCodes: ['UNAVAILABLE'] },
    },
  ],
};

/** Per call id, what each attempt does on the server. */
const scripts: Record<string, AttemptScript[]> = {
  'retried-twice': [{ status: grpc.status.UNAVAILABLE }, { status: grpc.status.UNAVAILABLE }, {}],
  hedged: [{ delayMs: 1_000 }, {}],
};

type UnaryFn = (
  request: object,
  metadata: grpc.Metadata,
  callback: (error: grpc.ServiceError | null) => void,
) => void;

const ms = (time: [number, number]) => time[0] * 1e3 + time[1] / 1e6;

function describeSpan(span: ReadableSpan): string {
  const a = span.attributes;
  const parts: string[] = [span.name];
  if (a['grpc.attempt.kind'] !== undefined) {
    parts.push(`#${a['grpc.attempt.number']} ${a['grpc.attempt.kind']}`);
    parts.push(`previous-rpc-attempts=${a['previous-rpc-attempts']}`);
  }
  const code = a['rpc.grpc.status_code'];
  if (typeof code === 'number') parts.push(grpc.status[code] ?? String(code));
  if (a['grpc.attempt.cancelled_by_other_attempt'] === true) parts.push('(lost: another attempt won)');
  if (a['grpc.attempt.committed'] === true) parts.push('(committed)');
  if (a['grpc.retry.attempts'] !== undefined) parts.push(`attempts=${a['grpc.retry.attempts']}`);
  if (a.cancelled === true) parts.push('(cancelled by the client)');
  if (span.status.code === SpanStatusCode.ERROR) parts.push('[ERROR]');
  return `${parts.join('  ')}  ${ms(span.duration).toFixed(0)} ms`;
}

function describeEvent(event: ReadableSpan['events'][number]): string {
  const a = event.attributes ?? {};
  const delay = a['grpc.retry.delay_ms'];
  const details =
    typeof delay === 'number'
      ? `attempt ${a['grpc.retry.attempt']} in ${delay.toFixed(0)} ms (${a['grpc.retry.reason']})`
      : event.name === 'Committed'
        ? `to attempt ${a['grpc.retry.attempt']} (${a['grpc.retry.reason']})`
        : JSON.stringify(a);
  return `${event.name}: ${details}`;
}

/** Renders the spans of one trace as a tree, with the span events in time order among the children. */
export function formatSpanTree(spans: readonly ReadableSpan[]): string {
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  const children = new Map<string, ReadableSpan[]>();
  const roots: ReadableSpan[] = [];
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    if (parent !== undefined && ids.has(parent)) {
      const list = children.get(parent) ?? [];
      list.push(span);
      children.set(parent, list);
    } else roots.push(span);
  }
  const lines: string[] = [];
  const origin = Math.min(...spans.map((s) => ms(s.startTime)));
  const at = (time: [number, number]) => `+${(ms(time) - origin).toFixed(0)}ms`.padStart(7);
  const walk = (span: ReadableSpan, prefix: string, last: boolean, top: boolean) => {
    lines.push(`${at(span.startTime)} ${prefix}${top ? '' : last ? '└─ ' : '├─ '}${describeSpan(span)}`);
    const inner = top ? prefix : `${prefix}${last ? '   ' : '│  '}`;
    type Item = { time: number; line?: string; span?: ReadableSpan };
    const items: Item[] = [
      ...(children.get(span.spanContext().spanId) ?? []).map((s) => ({ time: ms(s.startTime), span: s })),
      ...span.events.map((e) => ({
        time: ms(e.time),
        line: `${at(e.time)} ${inner}· ${describeEvent(e)}`,
      })),
    ].sort((x, y) => x.time - y.time);
    items.forEach((item, index) => {
      if (item.span) walk(item.span, inner, index === items.length - 1, false);
      else if (item.line) lines.push(item.line);
    });
  };
  for (const root of roots.sort((x, y) => ms(x.startTime) - ms(y.startTime))) walk(root, '', true, true);
  return lines.join('\n');
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const giveUpAt = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Runs the example and returns the spans of both calls and their printed trees. */
export async function main(print: (line: string) => void = console.log): Promise<TracingExampleResult> {
  // What an application's OpenTelemetry setup does: a context manager, a propagator and a tracer provider.
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  const tracer = trace.getTracer('example');

  // The server side: each attempt gets a server span whose parent comes from the attempt's metadata.
  const serverSpans = new Map<string, Span>();
  const server = await FlakyServer.start({
    onAttempt: ({ callId, attempt, method, metadata }) => {
      const parent = propagation.extract(ROOT_CONTEXT, metadata, metadataGetter);
      const name = `Recv.${method.slice(1).replace('/', '.')}`;
      serverSpans.set(`${callId}#${attempt}`, tracer.startSpan(name, { kind: SpanKind.SERVER }, parent));
      const script = scripts[callId] ?? [{}];
      return script[Math.min(attempt, script.length) - 1];
    },
    onAttemptEnd: (record) => {
      const span = serverSpans.get(`${record.callId}#${record.attempt}`);
      if (!span) return;
      if (record.cancelled) span.setAttribute('cancelled', true);
      if (record.endedWith !== undefined) span.setAttribute('rpc.grpc.status_code', record.endedWith);
      span.end();
    },
  });

  const tracing = createRetryTracing();
  const FlakyTest = loadFlakyTestService();
  const newClient = (config: object) =>
    new FlakyTest(server.address, grpc.credentials.createInsecure(), {
      interceptors: [createRetryInterceptor(config, { onEvent: tracing.onEvent })],
      'grpc.enable_retries': 0, // the interceptor replaces grpc-js's own retries
    });
  const retrying = newClient(retryConfig);
  const hedging = newClient(hedgingConfig);

  /** One call inside an application span, as a request handler would make it. */
  const call = (client: grpc.Client, callId: string) =>
    tracer.startActiveSpan(`app: ${callId}`, (span) => {
      const metadata = new grpc.Metadata();
      metadata.set(CALL_ID_METADATA_KEY, callId);
      return new Promise<string>((resolve) => {
        (client as unknown as { Unary: UnaryFn }).Unary({ payload: 'hi' }, metadata, (error) => {
          span.end();
          resolve(error ? grpc.status[error.code] : 'OK');
        });
      });
    });

  try {
    const results = [await call(retrying, 'retried-twice'), await call(hedging, 'hedged')];
    if (results.some((r) => r !== 'OK')) throw new Error(`unexpected call results ${results.join(', ')}`);
    // The losing hedge's spans end when its cancellation has reached the client listener and the server.
    await until(() => tracing.trackedCalls === 0 && serverSpans.size === 5, 'the spans of both calls');
    // Per call: the application's span, the call span, and an attempt span and a server span per attempt.
    await until(() => exporter.getFinishedSpans().length === 2 * 2 + 2 * (3 + 2), 'every span to end');

    const spans = exporter.getFinishedSpans();
    const traceOf = (root: string) => {
      const traceId = spans.find((s) => s.name === root)?.spanContext().traceId;
      return spans.filter((s) => s.spanContext().traceId === traceId);
    };
    const retried = traceOf('app: retried-twice');
    const hedged = traceOf('app: hedged');
    const trees = { retried: formatSpanTree(retried), hedged: formatSpanTree(hedged) };
    print('A call that failed twice, then succeeded (retry policy, backoff from 20 ms):');
    print(trees.retried);
    print('');
    print('A hedged call: the original attempt is slow, the hedge sent after 50 ms wins:');
    print(trees.hedged);
    return { retried, hedged, trees };
  } finally {
    retrying.close();
    hedging.close();
    await server.stop();
    await provider.shutdown();
    trace.disable();
    propagation.disable();
    context.disable();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
