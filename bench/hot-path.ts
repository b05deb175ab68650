/**
 * The interceptor's own cost per call, without a network: grpc-js's next call is replaced by a stub that answers
 * at once (headers, N messages, OK), so what is measured is the code between the application and grpc-js.
 * Complements bench/overhead.ts, whose end-to-end figures carry a few percent of noise on a shared VM.
 *
 *   npm run bench:hot-path        (options: -- --calls=200000 --messages=20 --rounds=5)
 *   npm run bench:hot-path -- --baseline=/path/to/other/build/dist/index.js
 *                                 (adds another build of the package, measured side by side in the same run;
 *                                 a relative path is read from the directory npm run was started in)
 */

import * as grpc from '@grpc/grpc-js';
import { createRetryInterceptor, type RetryEvent } from 'grpc-retry-hedging';
import { createRetryTracing } from 'grpc-retry-hedging/otel';
import { POSITIVE_COUNT, type Script, scriptArgs } from './lib/args.js';
import { baselinePath, loadBaseline } from './lib/baseline-build.js';

const SCRIPT: Script = {
  name: 'bench:hot-path',
  about:
    "The interceptor's own cost per call against a stub transport (no network), optionally beside another build. " +
    'Writes no file.',
};
const args = scriptArgs(
  SCRIPT,
  { calls: 200_000, messages: 20, rounds: 5 },
  {
    others: ['baseline'],
    limits: { calls: POSITIVE_COUNT, messages: POSITIVE_COUNT, rounds: POSITIVE_COUNT },
    notes: { baseline: "another build's dist/index.js, measured side by side" },
  },
);
const opts = args.options;
const CALLS = opts.calls;
const MESSAGES = opts.messages;
const ROUNDS = opts.rounds;
/** Another build's dist/index.js, measured side by side (`--baseline=PATH`). */
const BASELINE = baselinePath(SCRIPT, args.values.get('baseline'));

type Listener = Partial<grpc.InterceptingListener>;
type NextCall = grpc.NextCall;
type CallInterface = ReturnType<NextCall>;

/** A next call that answers synchronously once the request is half-closed and a read was asked for. */
function stubCall(responses: number): CallInterface {
  let listener: Listener | undefined;
  let halfClosed = false;
  let reads = 0;
  let sent = 0;
  let ended = false;
  const drive = () => {
    if (!halfClosed || ended || !listener) return;
    while (reads > 0 && sent < responses) {
      reads -= 1;
      sent += 1;
      if (sent === 1) listener.onReceiveMetadata?.(new grpc.Metadata());
      listener.onReceiveMessage?.({ payload: 'x', index: sent });
    }
    if (sent === responses && !ended) {
      ended = true;
      listener.onReceiveStatus?.({ code: grpc.status.OK, details: '', metadata: new grpc.Metadata() });
    }
  };
  return {
    start(_metadata, l) {
      listener = l;
    },
    sendMessageWithContext(context) {
      context.callback?.();
    },
    sendMessage() {},
    halfClose() {
      halfClosed = true;
      drive();
    },
    startRead() {
      reads += 1;
      drive();
    },
    cancelWithStatus() {},
    getPeer: () => 'stub',
    getAuthContext: () => null,
  };
}

const methodDefinition = {
  path: '/grpc_retry_hedging.testing.v1.FlakyTest/ServerStream',
  requestStream: false,
  responseStream: true,
  requestSerialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  requestDeserialize: (buffer: Buffer) => JSON.parse(buffer.toString()),
  responseSerialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  responseDeserialize: (buffer: Buffer) => JSON.parse(buffer.toString()),
};

const config = {
  methodConfig: [
    {
      name: [{ service: 'grpc_retry_hedging.testing.v1.FlakyTest' }],
      retryPolicy: {
        maxAttempts: 3,
        initialBackoff: '0.1s',
        maxBackoff: '1s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
};
const interceptor = createRetryInterceptor(config);
const baseline: grpc.Interceptor | undefined = BASELINE
  ? (await loadBaseline(SCRIPT, BASELINE))(config)
  : undefined;

// Tracing variant: the OpenTelemetry tracing adapter as the listener with no tracer provider registered (tracing
// not set up), next to a listener that only keeps the last event (what building the events costs by itself; it
// keeps them so that V8 cannot optimize their allocation away).
let lastEvent: RetryEvent | undefined;
const keepLast = (event: RetryEvent) => {
  lastEvent = event;
};
const withListener = createRetryInterceptor(config, { onEvent: keepLast });
const withTracing = createRetryInterceptor(config, { onEvent: createRetryTracing().onEvent });
// Hedging with a static delay, and with adaptive hedging (its latency recording and delay lookup per call). The
// delay is long, so the stub's prompt answer commits before any hedge: what differs is the adaptive bookkeeping.
const hedgingOnly = {
  methodConfig: [
    {
      name: [{ service: 'grpc_retry_hedging.testing.v1.FlakyTest' }],
      hedgingPolicy: { maxAttempts: 2, hedgingDelay: '1s', nonFatalStatusCodes: ['UNAVAILABLE'] },
    },
  ],
};
const withHedging = createRetryInterceptor(hedgingOnly);
const withAdaptive = createRetryInterceptor(hedgingOnly, { adaptiveHedging: true });

/** One call the way grpc-js's client surface drives it: start, send, half-close, read until the status. */
function runCall(call: CallInterface, done: () => void): void {
  call.start(new grpc.Metadata(), {
    onReceiveMetadata() {},
    onReceiveMessage() {
      call.startRead();
    },
    onReceiveStatus() {
      done();
    },
  });
  call.sendMessage({ payload: 'x' });
  call.halfClose();
  call.startRead();
}

function measure(wrap: grpc.Interceptor | undefined, deadline = false): number {
  // A deadline a minute away (the interceptor watches it with one timer per call, cleared when the call commits).
  const options = (deadline
    ? { method_definition: methodDefinition, deadline: Date.now() + 60_000 }
    : { method_definition: methodDefinition }) as unknown as grpc.InterceptorOptions;
  const next: NextCall = () => stubCall(MESSAGES);
  let completed = 0;
  const done = () => {
    completed += 1;
  };
  // CPU time of this process, not wall time: on a shared machine other processes' load does not count.
  const started = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) {
    runCall(wrap ? wrap(options, next) : next(options), done);
  }
  const used = process.cpuUsage(started);
  const elapsed = used.user + used.system;
  if (completed !== CALLS) throw new Error(`only ${completed} of ${CALLS} calls completed`);
  return elapsed / CALLS;
}

const bare: number[] = [];
const ours: number[] = [];
const base: number[] = [];
const baseDeadlined: number[] = [];
const listened: number[] = [];
const traced: number[] = [];
const hedged: number[] = [];
const adapted: number[] = [];
const deadlined: number[] = [];
const variants: [number[], grpc.Interceptor | undefined, boolean?][] = [
  [bare, undefined],
  [ours, interceptor],
  [deadlined, interceptor, true],
  [listened, withListener],
  [traced, withTracing],
  [hedged, withHedging],
  [adapted, withAdaptive],
  ...(baseline
    ? ([
        [base, baseline],
        [baseDeadlined, baseline, true],
      ] as [number[], grpc.Interceptor, boolean?][])
    : []),
];
for (const [, wrap, deadline] of variants) measure(wrap, deadline); // warm up every path
for (let round = 0; round < ROUNDS; round++) {
  // Alternate the order so that no variant always runs on a warmer heap.
  const order = round % 2 === 1 ? [...variants].reverse() : variants;
  for (const [results, wrap, deadline] of order) results.push(measure(wrap, deadline));
}
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const b = median(bare);
const o = median(ours);
console.log(
  `${CALLS} calls x ${ROUNDS} rounds, ${MESSAGES} response messages per call, stub transport, CPU time (median)`,
);
console.log(`stub alone:                 ${b.toFixed(2)} µs/call`);
console.log(`through the interceptor:    ${o.toFixed(2)} µs/call`);
console.log(`interceptor's own cost:     ${(o - b).toFixed(2)} µs/call`);
const d = median(deadlined);
console.log(`with a deadline:            ${d.toFixed(2)} µs/call (its watch: ${(d - o).toFixed(2)} µs/call)`);
const l = median(listened);
const t = median(traced);
console.log(`+ minimal onEvent listener: ${l.toFixed(2)} µs/call (events: ${(l - o).toFixed(2)} µs/call)`);
console.log(
  `+ tracing, no provider:     ${t.toFixed(2)} µs/call (adapter over the minimal listener: ${(t - l).toFixed(2)} µs/call)`,
);
const hs = median(hedged);
const ad = median(adapted);
console.log(`hedging policy (static):    ${hs.toFixed(2)} µs/call`);
console.log(
  `+ adaptive hedging:         ${ad.toFixed(2)} µs/call (recording and delay lookup: ${(ad - hs).toFixed(2)} µs/call)`,
);
{
  // The adapter alone, fed the five events of a call that succeeds at once, against the minimal listener.
  const onEvent = createRetryTracing().onEvent;
  const method = methodDefinition.path;
  const events = (callId: number): RetryEvent[] => [
    {
      type: 'call-start',
      method,
      callId,
      policy: 'retry',
      maxAttempts: 3,
      deadline: Infinity,
      target: 'stub',
    },
    {
      type: 'attempt-start',
      method,
      callId,
      attempt: 1,
      kind: 'original',
      previousRpcAttempts: 0,
      metadata: new grpc.Metadata(),
    },
    { type: 'committed', method, callId, attempt: 1, reason: 'headers' },
    {
      type: 'attempt-end',
      method,
      callId,
      attempt: 1,
      kind: 'original',
      committed: true,
      code: 0,
      details: '',
      durationMs: 0,
    },
    {
      type: 'call-end',
      method,
      callId,
      code: 0,
      details: '',
      attempts: 1,
      retryDelayMs: 0,
      durationMs: 0,
      target: '',
    },
  ];
  const batch = Array.from({ length: 1_000 }, (_, i) => events(i + 1));
  const feed = (listener: (event: RetryEvent) => void) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) for (const event of batch[i % 1_000] as RetryEvent[]) listener(event);
    return Number(process.hrtime.bigint() - started) / CALLS;
  };
  const minimal: number[] = [];
  const adapter: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    minimal.push(feed(keepLast));
    adapter.push(feed(onEvent));
  }
  const e = median(minimal.slice(1));
  const a = median(adapter.slice(1));
  console.log(
    `tracing adapter alone, no provider: ${(a - e).toFixed(0)} ns/call (5 events, over the minimal listener)`,
  );
  if (lastEvent === undefined) throw new Error('the listeners saw no event');
}
if (baseline) {
  const p = median(base);
  console.log(`baseline build:             ${p.toFixed(2)} µs/call (own cost ${(p - b).toFixed(2)} µs/call)`);
  const pd = median(baseDeadlined);
  console.log(
    `baseline with a deadline:   ${pd.toFixed(2)} µs/call (this / baseline: ${((d - b) / (pd - b)).toFixed(2)})`,
  );
  console.log(`own cost, this / baseline:  ${((o - b) / (p - b)).toFixed(2)}`);
}
