/**
 * Random interleavings of one call under the engine (no network, fake clock): what the application does, what each
 * attempt answers, and time passing, with a checker of the invariants the docs promise. Used by
 * engine-interleavings.property.test.ts.
 */
import { fc } from '@fast-check/vitest';
import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  type StatusObject,
} from '@grpc/grpc-js';
import { CancelRateLimiter } from '../../src/hedging/cancel-rate-limiter.js';
import { turnGuard } from '../../src/retry/event-loop-turn.js';
import type { RetryEvent, RetryEventType } from '../../src/retry/events.js';
import type { RetryInterceptorOptions } from '../../src/retry/interceptor-options.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import type { InterceptingCallInterface, MessageContext } from '../../src/shared/grpc-types.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import {
  type CallType,
  FakeAttempt,
  hedgingPolicy,
  METHOD,
  retryPolicy,
  Status,
  T0,
} from '../helpers/engine.js';

// ---- the scenario ----

export type AppAction = 'cancel' | 'write' | 'half-close' | 'read';

export type Step =
  | { readonly k: 'write'; readonly size: number; readonly callback: boolean }
  | { readonly k: 'half-close' }
  | { readonly k: 'cancel' }
  | { readonly k: 'read' }
  | { readonly k: 'headers'; readonly at: number }
  | { readonly k: 'message'; readonly at: number }
  | {
      readonly k: 'status';
      readonly at: number;
      readonly code: number;
      readonly pushback: string | undefined;
      readonly afterHeaders: boolean;
    }
  | { readonly k: 'complete-write'; readonly at: number }
  | { readonly k: 'advance'; readonly ms: number }
  | { readonly k: 'settle' }
  | { readonly k: 'mutate'; readonly which: number };

export interface Scenario {
  readonly type: CallType;
  readonly policy:
    | {
        readonly kind: 'retry';
        readonly maxAttempts: number;
        readonly initialBackoffMs: number;
        readonly perAttemptRecvTimeoutMs: number | undefined;
      }
    | { readonly kind: 'hedging'; readonly maxAttempts: number; readonly hedgingDelayMs: number };
  readonly deadlineMs: number | undefined;
  readonly perRpcBufferBytes: number | undefined;
  /** A spent cancel-rate limiter (losers left running, capped at 300 ms without a deadline), or none at all. */
  readonly spentLimiter: boolean;
  /** Attempts complete their writes only when a step (or the end) says so. */
  readonly manualWrites: boolean;
  /** An event listener that acts once, at the `nth` event of type `on`. */
  readonly listener:
    | { readonly on: RetryEventType; readonly nth: number; readonly action: AppAction }
    | undefined;
  readonly steps: readonly Step[];
  /** How the end answers every attempt still live: OK (with headers and a message) or a failure with this code. */
  readonly finalCode: number;
}

const CODES = [
  Status.OK,
  Status.UNAVAILABLE,
  Status.UNAVAILABLE,
  Status.UNAVAILABLE,
  Status.UNAVAILABLE,
  Status.INTERNAL,
  Status.DEADLINE_EXCEEDED,
  Status.RESOURCE_EXHAUSTED,
  Status.CANCELLED,
];
const PUSHBACKS = ['0', '5', '40', '-1', 'abc', '007', ''];
const EVENT_TYPES: RetryEventType[] = [
  'call-start',
  'attempt-start',
  'attempt-end',
  'hedge-scheduled',
  'hedge-sent',
  'retry-scheduled',
  'committed',
  'attempt-left-running',
  'call-end',
];

const at = fc.nat(4);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    arbitrary: fc.record({
      k: fc.constant('write'),
      size: fc.integer({ min: 1, max: 40 }),
      callback: fc.boolean(),
    }),
    weight: 3,
  },
  { arbitrary: fc.constant({ k: 'half-close' as const }), weight: 1 },
  { arbitrary: fc.constant({ k: 'cancel' as const }), weight: 1 },
  { arbitrary: fc.constant({ k: 'read' as const }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant('headers'), at }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant('message'), at }), weight: 1 },
  {
    arbitrary: fc.record({
      k: fc.constant('status'),
      at,
      code: fc.constantFrom(...CODES),
      pushback: fc.option(fc.constantFrom(...PUSHBACKS), { freq: 2, nil: undefined }),
      afterHeaders: fc.constantFrom(false, false, false, true),
    }),
    weight: 6,
  },
  { arbitrary: fc.record({ k: fc.constant('complete-write'), at }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant('advance'), ms: fc.integer({ min: 0, max: 120 }) }), weight: 4 },
  { arbitrary: fc.constant({ k: 'settle' as const }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant('mutate'), which: fc.nat(5) }), weight: 1 },
) as fc.Arbitrary<Step>;

const policyArb: fc.Arbitrary<Scenario['policy']> = fc.oneof(
  fc.record({
    kind: fc.constant('retry' as const),
    maxAttempts: fc.integer({ min: 2, max: 5 }),
    initialBackoffMs: fc.constantFrom(1, 10, 50),
    perAttemptRecvTimeoutMs: fc.option(fc.constantFrom(20, 60), { freq: 3, nil: undefined }),
  }),
  fc.record({
    kind: fc.constant('hedging' as const),
    maxAttempts: fc.integer({ min: 2, max: 5 }),
    hedgingDelayMs: fc.constantFrom(0, 10, 50),
  }),
);

export const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  type: fc.constantFrom<CallType>('unary', 'server-stream', 'client-stream', 'bidi'),
  policy: policyArb,
  deadlineMs: fc.option(fc.constantFrom(30, 100, 250), { freq: 3, nil: undefined }),
  perRpcBufferBytes: fc.option(fc.constantFrom(60, 120, 200), { freq: 3, nil: undefined }),
  spentLimiter: fc.constantFrom(false, false, false, true),
  manualWrites: fc.boolean(),
  listener: fc.option(
    fc.record({
      on: fc.constantFrom(...EVENT_TYPES),
      nth: fc.integer({ min: 1, max: 2 }),
      action: fc.constantFrom<AppAction>('cancel', 'write', 'half-close', 'read'),
    }),
    { freq: 3, nil: undefined },
  ),
  steps: fc.array(stepArb, { maxLength: 30 }),
  finalCode: fc.constantFrom(Status.OK, Status.UNAVAILABLE, Status.UNAVAILABLE, Status.INTERNAL),
});

// ---- running it ----

const seconds = (ms: number): string => `${ms / 1000}s`;

export function configOf(s: Scenario): object {
  const p = s.policy;
  if (p.kind === 'retry') {
    return retryPolicy({
      maxAttempts: p.maxAttempts,
      initialBackoff: seconds(p.initialBackoffMs),
      maxBackoff: '0.2s',
      backoffMultiplier: 2,
      ...(p.perAttemptRecvTimeoutMs === undefined
        ? {}
        : { perAttemptRecvTimeout: seconds(p.perAttemptRecvTimeoutMs) }),
    });
  }
  return hedgingPolicy({ maxAttempts: p.maxAttempts, hedgingDelay: seconds(p.hedgingDelayMs) });
}

/** A scripted attempt whose calls into the engine record what they throw instead of letting it escape. */
class GuardedAttempt extends FakeAttempt {
  /** Each message as its bytes read when the engine handed it over. */
  readonly sentBytes: string[] = [];
  headersSent = false;
  responses = 0;

  constructor(
    index: number,
    options: InterceptorOptions,
    private readonly guard: (where: string, f: () => void) => void,
  ) {
    super(index, options);
  }
  override sendMessageWithContext(context: MessageContext, message: unknown): void {
    this.sentBytes.push(Buffer.isBuffer(message) ? message.toString('hex') : String(message));
    super.sendMessageWithContext(context, message);
  }
  override headers(md: Metadata = new Metadata()): void {
    this.headersSent = true;
    this.guard(`attempt ${this.index} headers`, () => super.headers(md));
  }
  override message(message: unknown): void {
    this.guard(`attempt ${this.index} message`, () => super.message(message));
  }
  override status(code: number, details = '', trailers: Record<string, string> | Metadata = {}): void {
    this.guard(`attempt ${this.index} status`, () => super.status(code, details, trailers));
  }
}

type Received =
  | { readonly k: 'metadata'; readonly from: string | undefined }
  | { readonly k: 'message'; readonly value: unknown }
  | { readonly k: 'status'; readonly status: StatusObject };

interface Written {
  readonly buffer: Buffer;
  /** Its bytes as written. */
  readonly hex: string;
  readonly callback: boolean;
  calls: number;
}

export interface Run {
  readonly scenario: Scenario;
  readonly clock: FakeClock;
  readonly call: InterceptingCallInterface;
  readonly attempts: GuardedAttempt[];
  readonly events: RetryEvent[];
  readonly received: Received[];
  readonly written: Written[];
  /** What broke, as it happened: thrown errors and invariants checked along the way. */
  readonly problems: string[];
  /** The application cancelled while the call had not ended (no call-end event yet). */
  cancelledLive: boolean;
  halfClosed: boolean;
  /** The call's status is decided (call-end, or an attempt ended by the call's end). */
  readonly decided: { value: boolean };
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

export function startRun(s: Scenario): Run {
  turnGuard.enabled = false;
  const clock = new FakeClock(T0);
  const problems: string[] = [];
  const guard = (where: string, f: () => void): void => {
    try {
      f();
    } catch (error) {
      problems.push(
        `thrown from ${where}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    }
  };
  const events: RetryEvent[] = [];
  const attempts: GuardedAttempt[] = [];
  const received: Received[] = [];
  const written: Written[] = [];
  const requestStream = s.type === 'client-stream' || s.type === 'bidi';
  const responseStream = s.type === 'server-stream' || s.type === 'bidi';
  const seen = new Map<string, number>();
  const decided = { value: false };
  let call: InterceptingCallInterface | undefined;
  let run: Run | undefined;
  const onEvent = (e: RetryEvent): void => {
    events.push(e);
    if (e.type === 'attempt-start' || e.type === 'committed') {
      if (events.some((x) => x.type === 'call-end'))
        problems.push(`${e.type} (attempt ${e.attempt}) after call-end`);
    }
    if (e.type === 'attempt-start' && events.some((x) => x.type === 'committed')) {
      problems.push(`attempt-start (attempt ${e.attempt}) after the call committed`);
    }
    // The status is decided once the call ends: its attempts' `call-ended`/`call-cancelled` ends come before call-end.
    if (
      e.type === 'call-end' ||
      (e.type === 'attempt-end' && (e.cancelReason === 'call-ended' || e.cancelReason === 'call-cancelled'))
    ) {
      decided.value = true;
    }
    const l = s.listener;
    if (l === undefined || e.type !== l.on || run === undefined) return;
    const count = (seen.get(e.type) ?? 0) + 1;
    seen.set(e.type, count);
    if (count === l.nth)
      guard(`listener (${l.action} at ${e.type})`, () => appAct(run as Run, l.action, 12, true));
  };
  const interceptorOptions: RetryInterceptorOptions = {
    clock,
    random: () => 0.5,
    onEvent,
    cancelRateLimit: s.spentLimiter ? spentLimiter() : false,
    ...(s.perRpcBufferBytes === undefined ? {} : { perRpcBufferBytes: s.perRpcBufferBytes }),
  };
  const interceptor = createRetryInterceptor(configOf(s), interceptorOptions);
  const serialize = (message: unknown): Buffer =>
    Buffer.isBuffer(message) ? message : Buffer.from(String(message));
  const options = {
    method_definition: {
      path: METHOD,
      requestStream,
      responseStream,
      requestSerialize: serialize,
      responseDeserialize: (b: Buffer) => b.toString(),
    },
    deadline: s.deadlineMs === undefined ? undefined : clock.now() + s.deadlineMs,
  } as unknown as InterceptorOptions;
  const nextCall = (o: InterceptorOptions) => {
    if (events.some((x) => x.type === 'call-end'))
      problems.push(`attempt ${attempts.length + 1} made after call-end`);
    const attempt = new GuardedAttempt(attempts.length, o, guard);
    attempt.autoCompleteWrites = !s.manualWrites;
    attempts.push(attempt);
    return attempt;
  };
  call = interceptor(options, nextCall as never) as unknown as InterceptingCallInterface;
  run = {
    scenario: s,
    clock,
    call,
    attempts,
    events,
    received,
    written,
    problems,
    cancelledLive: false,
    halfClosed: false,
    decided,
  };
  const r = run;
  const listener: InterceptingListener = {
    onReceiveMetadata: (md) => {
      if (r.received.some((x) => x.k === 'status')) problems.push('metadata after the status');
      received.push({ k: 'metadata', from: md.get('x-attempt')[0]?.toString() });
    },
    onReceiveMessage: (m) => {
      if (r.received.some((x) => x.k === 'status')) problems.push('message after the status');
      received.push({ k: 'message', value: m });
    },
    onReceiveStatus: (st) => {
      if (r.received.some((x) => x.k === 'status')) problems.push('a second status');
      received.push({ k: 'status', status: st });
    },
  };
  guard('start', () => {
    call.start(new Metadata(), listener);
    if (!requestStream) {
      // The single request: a Buffer, so that a step may change it after the call was made.
      const request = Buffer.from('request');
      written.push({ buffer: request, hex: request.toString('hex'), callback: false, calls: 0 });
      call.sendMessageWithContext({}, request);
      call.halfClose();
      r.halfClosed = true;
    }
    call.startRead();
  });
  return r;
}

/** A cancel-rate limiter on a clock of its own (so its refill timer is no call's), spent: losers are left running. */
function spentLimiter(): CancelRateLimiter {
  const limiter = new CancelRateLimiter({
    clock: new FakeClock(T0),
    burst: 1,
    ratePerSecond: 0.001,
    loserCapMs: 300,
  });
  limiter.tryCancel();
  return limiter;
}

const ended = (r: Run): boolean => r.decided.value;

function appAct(r: Run, action: AppAction, size: number, callback: boolean): void {
  const requestStream = r.scenario.type === 'client-stream' || r.scenario.type === 'bidi';
  switch (action) {
    case 'cancel':
      if (!ended(r)) r.cancelledLive = true;
      r.call.cancelWithStatus(Status.CANCELLED, 'cancelled by the test');
      return;
    case 'write': {
      if (!requestStream || r.halfClosed) return;
      const n = r.written.length;
      const buffer = Buffer.alloc(size, n + 1);
      const w: Written = { buffer, hex: buffer.toString('hex'), callback, calls: 0 };
      r.written.push(w);
      r.call.sendMessageWithContext(callback ? { callback: () => (w.calls += 1) } : {}, buffer);
      return;
    }
    case 'half-close':
      if (!requestStream) return;
      r.halfClosed = true;
      r.call.halfClose();
      return;
    case 'read':
      r.call.startRead();
      return;
  }
}

/** grpc-js ends every attempt still out once the call's deadline has passed. */
function applyDeadline(r: Run): void {
  const d = r.scenario.deadlineMs;
  if (d === undefined || r.clock.now() < T0 + d) return;
  for (const a of r.attempts) {
    if (a.started && !a.ended && !a.cancelled) a.status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded');
  }
}

function advance(r: Run, ms: number): void {
  const d = r.scenario.deadlineMs;
  const until = r.clock.now() + ms;
  if (d !== undefined && r.clock.now() < T0 + d && until >= T0 + d) {
    r.clock.advance(T0 + d - r.clock.now());
    applyDeadline(r);
  }
  r.clock.advance(until - r.clock.now());
  applyDeadline(r);
}

function pick(r: Run, at: number): GuardedAttempt | undefined {
  const started = r.attempts.filter((a) => a.started);
  return started.length === 0 ? undefined : started[at % started.length];
}

function respond(a: GuardedAttempt, kind: 'headers' | 'message'): void {
  if (a.ended) return;
  if (!a.headersSent) {
    const md = new Metadata();
    md.set('x-attempt', String(a.index));
    a.headers(md);
  }
  if (kind === 'message') {
    a.responses += 1;
    a.message(`a${a.index}-r${a.responses}`);
  }
}

async function doStep(r: Run, step: Step): Promise<void> {
  const guard = (f: () => void): void => {
    try {
      f();
    } catch (error) {
      r.problems.push(
        `thrown from step ${JSON.stringify(step)}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    }
  };
  switch (step.k) {
    case 'write':
      return guard(() => appAct(r, 'write', step.size, step.callback));
    case 'half-close':
      return guard(() => appAct(r, 'half-close', 0, false));
    case 'cancel':
      return guard(() => appAct(r, 'cancel', 0, false));
    case 'read':
      return guard(() => appAct(r, 'read', 0, false));
    case 'headers':
    case 'message': {
      const a = pick(r, step.at);
      if (a) guard(() => respond(a, step.k));
      return;
    }
    case 'status': {
      const a = pick(r, step.at);
      if (!a || a.ended) return;
      guard(() => {
        // An OK after a response, or Trailers-Only (a server stream with no message); a failure likewise.
        if (step.afterHeaders) respond(a, step.code === Status.OK ? 'message' : 'headers');
        const trailers: Record<string, string> =
          step.pushback === undefined ? {} : { 'grpc-retry-pushback-ms': step.pushback };
        a.status(step.code, `attempt ${a.index} says ${step.code}`, trailers);
      });
      return;
    }
    case 'complete-write': {
      const a = pick(r, step.at);
      if (a && !a.ended) guard(() => a.pendingWrites.shift()?.());
      return;
    }
    case 'advance':
      return guard(() => advance(r, step.ms));
    case 'settle':
      await settle();
      checkAtEnd(r);
      return;
    case 'mutate': {
      // The application reuses a Buffer it may reuse: the single request, or a message whose callback came.
      // (A streamed message written without a callback is never given back: changing it is the application's bug.)
      const single = r.scenario.type === 'unary' || r.scenario.type === 'server-stream';
      const free = r.written.filter((w) => (single && !w.callback) || w.calls > 0);
      const w = free[step.which % Math.max(1, free.length)];
      if (w) w.buffer.fill(0xee);
      return;
    }
  }
}

/**
 * Once the call has its status (and what it started has run): every attempt that went out ended or was cancelled,
 * except one left running under the cancel-rate limit.
 */
function checkAtEnd(r: Run): void {
  if (!r.received.some((x) => x.k === 'status')) return;
  const leftRunning = new Set(
    r.events.flatMap((e) => (e.type === 'attempt-left-running' ? [e.attempt] : [])),
  );
  for (const a of r.attempts) {
    if (a.started && !a.ended && a.cancelled === undefined && !leftRunning.has(a.index + 1)) {
      const message = `attempt ${a.index + 1} neither ended nor cancelled after the call's status`;
      if (!r.problems.includes(message)) r.problems.push(message);
    }
  }
}

/** Runs the steps, then drives the call to its end: the deadline, every timer, every live attempt answered. */
export async function runScenario(s: Scenario): Promise<Run> {
  const r = startRun(s);
  for (const step of s.steps) {
    await doStep(r, step);
  }
  const guard = (f: () => void): void => {
    try {
      f();
    } catch (error) {
      r.problems.push(
        `thrown while driving to the end: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    }
  };
  for (let round = 0; round < 60; round++) {
    await settle();
    checkAtEnd(r);
    guard(() => applyDeadline(r));
    await settle();
    const live = r.attempts.filter((a) => a.started && !a.ended && a.cancelled === undefined);
    for (const a of live) {
      guard(() => {
        while (a.pendingWrites.length > 0 && !a.ended) a.pendingWrites.shift()?.();
        if (a.ended) return;
        if (s.finalCode === Status.OK) {
          respond(a, 'message');
          a.status(Status.OK, 'OK');
        } else {
          a.status(s.finalCode, `attempt ${a.index} fails at the end`);
        }
      });
    }
    await settle();
    checkAtEnd(r);
    const done = r.received.some((x) => x.k === 'status');
    const stillLive = r.attempts.some((a) => a.started && !a.ended);
    if (done && !stillLive) break;
    if (live.length === 0) {
      const next = r.clock.nextDueInMs();
      if (next === undefined) {
        if (!done) {
          // Nothing is live, nothing is due: the call would hang. A client-stream may wait for a half-close.
          guard(() => appAct(r, 'half-close', 0, false));
          if (round > 40) break;
        }
        continue;
      }
      guard(() => advance(r, Math.max(0, Math.min(next, 10_000))));
    }
  }
  await settle();
  return r;
}

/** What the run broke, as sentences (empty: nothing). */
export function violations(r: Run): string[] {
  const out = [...r.problems];
  const s = r.scenario;
  const statuses = r.received.filter((x) => x.k === 'status');
  // 1. One status, and nothing after it; at most one set of headers, before any message.
  if (statuses.length !== 1) out.push(`the application got ${statuses.length} statuses`);
  const last = r.received.at(-1);
  if (statuses.length > 0 && last?.k !== 'status')
    out.push('something reached the application after its status');
  const metadata = r.received.filter((x) => x.k === 'metadata');
  if (metadata.length > 1) out.push(`the application got headers ${metadata.length} times`);
  const firstMessage = r.received.findIndex((x) => x.k === 'message');
  const firstMetadata = r.received.findIndex((x) => x.k === 'metadata');
  if (firstMessage >= 0 && (firstMetadata < 0 || firstMetadata > firstMessage)) {
    out.push('a message reached the application before its headers');
  }
  // 2. Nothing thrown (r.problems); the engine broke none of its own rules.
  for (const e of r.events) {
    if (e.type === 'internal-error') out.push(`internal-error event: ${e.message}`);
  }
  // 3. No timer left once the call and all its attempts have ended.
  if (r.clock.pendingTimers !== 0) out.push(`${r.clock.pendingTimers} timer(s) pending after the end`);
  // 4. Every write callback once.
  r.written.forEach((w, i) => {
    if (w.callback && w.calls !== 1) out.push(`write ${i}'s callback ran ${w.calls} times`);
  });
  // 5. At most maxAttempts attempts, numbered 0 (absent), 1, 2, ... in the order they started.
  if (r.attempts.length > s.policy.maxAttempts) {
    out.push(`${r.attempts.length} attempts made, maxAttempts ${s.policy.maxAttempts}`);
  }
  r.attempts.forEach((a, i) => {
    if (!a.started) return;
    const previous = a.header('grpc-previous-rpc-attempts');
    if (previous !== (i === 0 ? undefined : String(i))) {
      out.push(`attempt ${i + 1} sent grpc-previous-rpc-attempts ${previous}`);
    }
  });
  // 6 (checked as the run went, into r.problems), and at the very end every attempt that went out has ended.
  r.attempts.forEach((a, i) => {
    if (a.started && !a.ended) out.push(`attempt ${i + 1} never ended`);
  });
  // 7. One call-end, counting every attempt made; one attempt-end per attempt-start.
  const ends = r.events.filter((e) => e.type === 'call-end');
  if (ends.length !== 1) out.push(`${ends.length} call-end events`);
  const end = ends[0];
  const starts = r.events.filter((e) => e.type === 'attempt-start');
  // (The first attempt's call exists before the start: one cancelled before it is made, but never started.)
  const made = starts.length === 0 && r.attempts.length === 1 ? 0 : r.attempts.length;
  if (end !== undefined && (end.attempts !== made || end.attempts !== starts.length)) {
    out.push(
      `call-end says ${end.attempts} attempts; ${r.attempts.length} made, ${starts.length} attempt-start`,
    );
  }
  for (const start of starts) {
    const n = r.events.filter((e) => e.type === 'attempt-end' && e.attempt === start.attempt).length;
    if (n !== 1) out.push(`attempt ${start.attempt}: ${n} attempt-end events`);
  }
  // The application's status is the call-end's; the caller's cancel of a live call is its status.
  const status = statuses[0]?.k === 'status' ? statuses[0].status : undefined;
  if (end !== undefined && status !== undefined && end.code !== status.code) {
    out.push(`call-end code ${end.code}, the application got ${status.code}`);
  }
  if (r.cancelledLive && status !== undefined && status.code !== Status.CANCELLED) {
    out.push(`cancelled by the application, but the status is ${status.code} (${status.details})`);
  }
  // Only the committed attempt's headers and messages reach the application.
  const committed = r.events.filter((e) => e.type === 'committed');
  if (committed.length > 1) out.push(`${committed.length} committed events`);
  const winner = committed[0]?.type === 'committed' ? committed[0].attempt - 1 : undefined;
  for (const x of r.received) {
    if (x.k === 'metadata' && (winner === undefined || x.from !== String(winner))) {
      out.push(`headers of attempt ${Number(x.from) + 1} reached the application (committed: ${winner})`);
    }
    if (x.k === 'message' && (winner === undefined || !String(x.value).startsWith(`a${winner}-`))) {
      out.push(`message ${String(x.value)} reached the application (committed attempt index ${winner})`);
    }
  }
  // Each attempt is handed a prefix of what the application wrote, as it was written, and the half-close after all.
  r.attempts.forEach((a, i) => {
    a.sentBytes.forEach((hex, k) => {
      if (r.written[k]?.hex !== hex)
        out.push(`attempt ${i + 1} was handed message ${k} changed or out of order`);
    });
    if (a.halfClosed && (!r.halfClosed || a.messages.length !== r.written.length)) {
      out.push(`attempt ${i + 1} half-closed after ${a.messages.length} of ${r.written.length} messages`);
    }
  });
  return [...new Set(out)];
}
