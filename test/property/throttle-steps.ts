/**
 * Random interleavings of one call through the adaptive throttle (no network, fake clock): alone over a scripted
 * next call, or under the retry interceptor (retry and hedging policies), with a checker of what docs/overload.md
 * promises. Used by throttle-interleavings.property.test.ts.
 */
import { fc } from '@fast-check/vitest';
import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  type StatusObject,
} from '@grpc/grpc-js';
import { turnGuard } from '../../src/retry/event-loop-turn.js';
import type { RetryEvent, RetryEventType } from '../../src/retry/events.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import type { InterceptingCallInterface, MessageContext } from '../../src/shared/grpc-types.js';
import { PREVIOUS_RPC_ATTEMPTS_METADATA_KEY, PUSHBACK_METADATA_KEY } from '../../src/shared/headers.js';
import { isLocalRejection } from '../../src/shared/local-rejection.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import {
  type AdaptiveThrottleCounters,
  type AdaptiveThrottleEvent,
  type AdaptiveThrottleInterceptor,
  createAdaptiveThrottleInterceptor,
  LOCAL_REJECTION_DETAILS_PREFIX,
} from '../../src/throttle/adaptive-throttle.js';
import {
  type CallType,
  FakeAttempt,
  hedgingPolicy,
  METHOD,
  retryPolicy,
  Status,
  T0,
} from '../helpers/engine.js';
import { captureWarnings } from '../helpers/warnings.js';
import { GuardedFakeAttempt } from './guarded-attempt.js';

// ---- the scenario ----

export type TStep =
  | { readonly k: 'write'; readonly callback: boolean }
  | { readonly k: 'half-close' }
  | { readonly k: 'cancel'; readonly code: number }
  | { readonly k: 'read' }
  | { readonly k: 'headers'; readonly at: number }
  | { readonly k: 'message'; readonly at: number }
  | {
      readonly k: 'status';
      readonly at: number;
      readonly code: number;
      readonly pushback: string | undefined;
    }
  | { readonly k: 'advance'; readonly ms: number }
  | { readonly k: 'settle' };

export interface TScenario {
  /** `alone`: the throttle over the scripted next call; otherwise the retry interceptor above the throttle. */
  readonly mode: 'alone' | 'retry' | 'hedging';
  readonly type: CallType;
  readonly maxAttempts: number;
  /** Backoff (retry) or hedging delay (hedging), ms. */
  readonly delayMs: number;
  /** Retry: the policy's perAttemptRecvTimeout (its cancel, DEADLINE_EXCEEDED, counts as not accepted). */
  readonly perAttemptMs: number | undefined;
  /** Alone: the call carries `grpc-previous-rpc-attempts` (a retry or a hedge to the throttle). */
  readonly retryHeader: boolean;
  /** Alone: the application cancels before it starts the call. */
  readonly cancelBeforeStart: boolean;
  readonly throttle: {
    readonly k: number;
    readonly retries: 'reject-while-throttling' | 'same-probability';
    readonly deadlineRejected: boolean;
    readonly retryLocalRejections: boolean;
    /** What the throttle's onEvent listener does at its first rejection. */
    readonly onReject: 'none' | 'cancel' | 'throw';
  };
  /** Calls answered before this one: refused (UNAVAILABLE) and accepted (OK). */
  readonly prime: { readonly refused: number; readonly accepted: number };
  /** The throttle's random draws, in turn. */
  readonly draws: readonly number[];
  /** The application's listener cancels the call when it first gets this. */
  readonly appCancelOn: 'none' | 'metadata' | 'message';
  /** Under the retry interceptor: its onEvent listener cancels the call at the `nth` event of type `on`. */
  readonly retryListener: { readonly on: RetryEventType; readonly nth: number } | undefined;
  readonly steps: readonly TStep[];
  readonly finalCode: number;
}

const CODES = [
  Status.OK,
  Status.UNAVAILABLE,
  Status.UNAVAILABLE,
  Status.UNAVAILABLE,
  Status.RESOURCE_EXHAUSTED,
  Status.RESOURCE_EXHAUSTED,
  Status.DEADLINE_EXCEEDED,
  Status.INTERNAL,
  Status.CANCELLED,
];

const at = fc.nat(4);
const stepArb: fc.Arbitrary<TStep> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant('write'), callback: fc.boolean() }), weight: 3 },
  { arbitrary: fc.constant({ k: 'half-close' as const }), weight: 1 },
  {
    arbitrary: fc.record({
      k: fc.constant('cancel'),
      code: fc.constantFrom(Status.CANCELLED, Status.CANCELLED, Status.DEADLINE_EXCEEDED),
    }),
    weight: 1,
  },
  { arbitrary: fc.constant({ k: 'read' as const }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant('headers'), at }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant('message'), at }), weight: 1 },
  {
    arbitrary: fc.record({
      k: fc.constant('status'),
      at,
      code: fc.constantFrom(...CODES),
      pushback: fc.option(fc.constantFrom('-1', '0', '20'), { freq: 4, nil: undefined }),
    }),
    weight: 6,
  },
  { arbitrary: fc.record({ k: fc.constant('advance'), ms: fc.integer({ min: 0, max: 120 }) }), weight: 4 },
  { arbitrary: fc.constant({ k: 'settle' as const }), weight: 3 },
) as fc.Arbitrary<TStep>;

const RETRY_EVENTS: RetryEventType[] = [
  'attempt-start',
  'attempt-end',
  'retry-scheduled',
  'hedge-scheduled',
  'hedge-sent',
  'committed',
  'call-end',
];

export function scenarioArb(mode: TScenario['mode']): fc.Arbitrary<TScenario> {
  return fc.record({
    mode: fc.constant(mode),
    type: fc.constantFrom<CallType>('unary', 'server-stream', 'client-stream', 'bidi'),
    maxAttempts: fc.integer({ min: 2, max: 5 }),
    delayMs: fc.constantFrom(0, 10, 50),
    perAttemptMs:
      mode === 'retry'
        ? fc.option(fc.constantFrom(20, 60), { freq: 2, nil: undefined })
        : fc.constant(undefined),
    retryHeader: mode === 'alone' ? fc.boolean() : fc.constant(false),
    cancelBeforeStart:
      mode === 'alone' ? fc.constantFrom(false, false, false, false, true) : fc.constant(false),
    throttle: fc.record({
      k: fc.constantFrom(2, 1.1),
      retries: fc.constantFrom<TScenario['throttle']['retries']>(
        'reject-while-throttling',
        'same-probability',
      ),
      deadlineRejected: fc.constantFrom(false, false, true),
      retryLocalRejections: fc.constantFrom(false, false, false, true),
      onReject: fc.constantFrom<TScenario['throttle']['onReject']>('none', 'none', 'cancel', 'throw'),
    }),
    prime: fc.record({ refused: fc.nat(6), accepted: fc.nat(2) }),
    draws: fc.array(fc.constantFrom(0, 0.05, 0.3, 0.6, 0.999), { minLength: 1, maxLength: 6 }),
    appCancelOn: fc.constantFrom<TScenario['appCancelOn']>('none', 'none', 'none', 'metadata', 'message'),
    retryListener:
      mode === 'alone'
        ? fc.constant(undefined)
        : fc.option(
            fc.record({ on: fc.constantFrom(...RETRY_EVENTS), nth: fc.integer({ min: 1, max: 2 }) }),
            {
              freq: 3,
              nil: undefined,
            },
          ),
    steps: fc.array(stepArb, { maxLength: 25 }),
    finalCode: fc.constantFrom(Status.OK, Status.UNAVAILABLE, Status.RESOURCE_EXHAUSTED, Status.INTERNAL),
  });
}

// ---- running it ----

/** A scripted attempt that records the order of its cancel and its status, and what its calls throw. */
class TAttempt extends GuardedFakeAttempt {
  /** The client cancelled it before its status came (first cancel's code). */
  cancelledFirst: number | undefined;
  /** The status it handed up, unless cancelled first. */
  answered: StatusObject | undefined;
  /** The status it handed up, whatever came first. */
  delivered: StatusObject | undefined;
  responses = 0;
  override cancelWithStatus(code: number, details: string): void {
    if (!this.ended && this.cancelled === undefined) this.cancelledFirst = code;
    super.cancelWithStatus(code, details);
  }
  override status(code: number, details = '', trailers: Record<string, string> | Metadata = {}): void {
    if (!this.ended && this.cancelledFirst === undefined) {
      this.answered = { code, details, metadata: new Metadata() };
    }
    if (!this.ended) this.delivered = { code, details, metadata: new Metadata() };
    this.guard(`attempt ${this.index} status`, () => super.status(code, details, trailers));
  }
}

type Received =
  | { readonly k: 'metadata' }
  | { readonly k: 'message' }
  | { readonly k: 'status'; readonly status: StatusObject };

export interface TRun {
  readonly s: TScenario;
  readonly clock: FakeClock;
  readonly throttle: AdaptiveThrottleInterceptor;
  readonly base: AdaptiveThrottleCounters;
  readonly primeCalls: number;
  readonly primeAccepts: number;
  readonly call: InterceptingCallInterface;
  readonly attempts: TAttempt[];
  readonly events: RetryEvent[];
  /** Local rejections as the throttle's onEvent saw them, with how many retry events came before each. */
  readonly rejections: { event: AdaptiveThrottleEvent; eventsBefore: number }[];
  readonly received: Received[];
  readonly writes: { callback: boolean; calls: number }[];
  readonly problems: string[];
  /** The application (a step, its listener, a listener of the throttle or the engine) cancelled: the index in `received`'s time. */
  cancels: { code: number; eventsBefore: number; statusBefore: boolean }[];
  /** Index in `events` at which the retry listener cancelled. */
  listenerCancelAt: number | undefined;
  halfClosed: boolean;
}

const requestStream = (s: TScenario): boolean => s.type === 'client-stream' || s.type === 'bidi';

export const settle = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

function cancel(r: TRun, code: number): void {
  r.cancels.push({
    code,
    eventsBefore: r.events.length,
    statusBefore: r.received.some((x) => x.k === 'status'),
  });
  r.call.cancelWithStatus(code, 'cancelled by the test');
}

/** Builds the throttle (primed), the stack, and starts the call. */
export async function startRun(s: TScenario): Promise<TRun> {
  turnGuard.enabled = false;
  captureWarnings();
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
  let priming = true;
  let draw = 0;
  let r: TRun | undefined;
  const rejections: TRun['rejections'] = [];
  const events: RetryEvent[] = [];
  const throttle = createAdaptiveThrottleInterceptor({
    clock,
    // A window longer than any run: state() counts every request of the run.
    windowMs: 600_000,
    k: s.throttle.k,
    // retryLocalRejections needs 'same-probability' (createAdaptiveThrottleInterceptor refuses it otherwise)
    retries: s.throttle.retryLocalRejections ? 'same-probability' : s.throttle.retries,
    retryLocalRejections: s.throttle.retryLocalRejections,
    ...(s.throttle.deadlineRejected
      ? { rejectedStatusCodes: ['UNAVAILABLE', 'RESOURCE_EXHAUSTED', 'DEADLINE_EXCEEDED'] }
      : {}),
    random: () => (priming ? 0.999_999 : (s.draws[draw++ % s.draws.length] as number)),
    onEvent: (e) => {
      if (priming) return;
      rejections.push({ event: e, eventsBefore: events.length });
      if (rejections.length > 1 || r === undefined) return;
      if (s.throttle.onReject === 'cancel') cancel(r, Status.CANCELLED);
      if (s.throttle.onReject === 'throw') throw new Error('onEvent listener bug');
    },
  });
  // Priming: calls answered before this one, on a next call of their own.
  const options = {
    method_definition: {
      path: METHOD,
      requestStream: requestStream(s),
      responseStream: s.type === 'server-stream' || s.type === 'bidi',
      requestSerialize: (m: unknown) => (Buffer.isBuffer(m) ? m : Buffer.from(String(m))),
      responseDeserialize: (b: Buffer) => b.toString(),
    },
  } as unknown as InterceptorOptions;
  const primeCodes = [
    ...Array<number>(s.prime.refused).fill(Status.UNAVAILABLE),
    ...Array<number>(s.prime.accepted).fill(Status.OK),
  ];
  for (const code of primeCodes) {
    const a = new FakeAttempt(-1, options);
    const c = throttle(options, () => a) as unknown as InterceptingCallInterface;
    c.start(new Metadata(), {});
    a.status(code);
  }
  await settle();
  priming = false;
  const base = throttle.counters();

  const attempts: TAttempt[] = [];
  const next = (o: InterceptorOptions): InterceptingCallInterface => {
    const a = new TAttempt(attempts.length, o, guard);
    attempts.push(a);
    return a;
  };
  let call: InterceptingCallInterface;
  if (s.mode === 'alone') {
    call = throttle(options, next as never) as unknown as InterceptingCallInterface;
  } else {
    const config =
      s.mode === 'retry'
        ? retryPolicy({
            maxAttempts: s.maxAttempts,
            initialBackoff: `${Math.max(1, s.delayMs) / 1000}s`,
            maxBackoff: '0.2s',
            retryableStatusCodes: ['UNAVAILABLE', 'RESOURCE_EXHAUSTED'],
            ...(s.perAttemptMs === undefined ? {} : { perAttemptRecvTimeout: `${s.perAttemptMs / 1000}s` }),
          })
        : hedgingPolicy({
            maxAttempts: s.maxAttempts,
            hedgingDelay: `${s.delayMs / 1000}s`,
            nonFatalStatusCodes: ['UNAVAILABLE', 'RESOURCE_EXHAUSTED'],
          });
    const seen = new Map<string, number>();
    const retry = createRetryInterceptor(config, {
      clock,
      random: () => 0.5,
      cancelRateLimit: false,
      onEvent: (e) => {
        events.push(e);
        const l = s.retryListener;
        if (l === undefined || e.type !== l.on || r === undefined) return;
        const n = (seen.get(e.type) ?? 0) + 1;
        seen.set(e.type, n);
        if (n === l.nth) {
          r.listenerCancelAt = events.length - 1;
          cancel(r, Status.CANCELLED);
        }
      },
    });
    call = retry(options, ((o: InterceptorOptions) =>
      throttle(o, next as never)) as never) as unknown as InterceptingCallInterface;
  }
  const run: TRun = {
    s,
    clock,
    throttle,
    base,
    primeCalls: primeCodes.length,
    primeAccepts: s.prime.accepted,
    call,
    attempts,
    events,
    rejections,
    received: [],
    writes: [],
    problems,
    cancels: [],
    listenerCancelAt: undefined,
    halfClosed: false,
  };
  r = run;
  let cancelledOnReceive = false;
  const onReceive = (what: 'metadata' | 'message'): void => {
    if (run.received.some((x) => x.k === 'status')) problems.push(`${what} after the status`);
    run.received.push({ k: what });
    if (s.appCancelOn === what && !cancelledOnReceive) {
      cancelledOnReceive = true;
      cancel(run, Status.CANCELLED);
    }
  };
  const listener: InterceptingListener = {
    onReceiveMetadata: () => onReceive('metadata'),
    onReceiveMessage: () => onReceive('message'),
    onReceiveStatus: (st) => {
      if (run.received.some((x) => x.k === 'status')) problems.push('a second status');
      run.received.push({ k: 'status', status: st });
    },
  };
  guard('start', () => {
    if (s.cancelBeforeStart) cancel(run, Status.CANCELLED);
    const md = new Metadata();
    if (s.retryHeader) md.set(PREVIOUS_RPC_ATTEMPTS_METADATA_KEY, '1');
    call.start(md, listener);
    if (!requestStream(s)) {
      call.sendMessageWithContext({}, Buffer.from('request'));
      call.halfClose();
      run.halfClosed = true;
    }
    call.startRead();
  });
  return run;
}

function pick(r: TRun, at: number): TAttempt | undefined {
  const live = r.attempts.filter((a) => a.started);
  return live.length === 0 ? undefined : live[at % live.length];
}

function respond(a: TAttempt, kind: 'headers' | 'message'): void {
  if (a.ended) return;
  if (!a.headersSent) a.headers();
  if (kind === 'message') {
    a.responses += 1;
    a.message(`a${a.index}-r${a.responses}`);
  }
}

export async function doStep(r: TRun, step: TStep): Promise<void> {
  const g = (where: string, f: () => void): void => {
    try {
      f();
    } catch (error) {
      r.problems.push(
        `thrown from ${where}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    }
  };
  switch (step.k) {
    case 'write': {
      if (!requestStream(r.s) || r.halfClosed) return;
      const w = { callback: step.callback, calls: 0 };
      r.writes.push(w);
      g('write', () =>
        r.call.sendMessageWithContext(
          (step.callback ? { callback: () => (w.calls += 1) } : {}) as MessageContext,
          Buffer.from(`w${r.writes.length}`),
        ),
      );
      return;
    }
    case 'half-close':
      if (!requestStream(r.s)) return;
      r.halfClosed = true;
      g('half-close', () => r.call.halfClose());
      return;
    case 'cancel':
      g('cancel', () => cancel(r, step.code));
      return;
    case 'read':
      g('read', () => r.call.startRead());
      return;
    case 'headers':
    case 'message': {
      const a = pick(r, step.at);
      if (a) respond(a, step.k);
      return;
    }
    case 'status': {
      const a = pick(r, step.at);
      if (!a || a.ended) return;
      if (step.code === Status.OK) respond(a, 'message');
      a.status(
        step.code,
        step.code === Status.OK ? 'OK' : `attempt ${a.index} failed`,
        step.pushback === undefined || step.code === Status.OK
          ? {}
          : { [PUSHBACK_METADATA_KEY]: step.pushback },
      );
      return;
    }
    case 'advance':
      g('advance', () => r.clock.advance(step.ms));
      return;
    case 'settle':
      await settle();
      return;
  }
}

export async function runScenario(s: TScenario): Promise<TRun> {
  const r = await startRun(s);
  for (const step of s.steps) await doStep(r, step);
  for (let round = 0; round < 40; round++) {
    await settle();
    if (r.received.some((x) => x.k === 'status') && !r.attempts.some((a) => a.started && !a.ended)) break;
    for (const a of r.attempts.filter((x) => x.started && !x.ended && x.cancelled === undefined)) {
      if (s.finalCode === Status.OK) {
        respond(a, 'message');
        a.status(Status.OK, 'OK');
      } else {
        a.status(s.finalCode, `attempt ${a.index} fails at the end`);
      }
    }
    await settle();
    try {
      let n = 0;
      while (n++ < 1000 && r.clock.runNext()) {}
    } catch (error) {
      r.problems.push(`thrown from a timer: ${String(error)}`);
    }
  }
  await settle();
  return r;
}

// ---- the invariants ----

const isRejection = (st: { code: number; details: string }): boolean =>
  st.code === Status.UNAVAILABLE && st.details.startsWith(LOCAL_REJECTION_DETAILS_PREFIX);

/** How often each rule had something to check (printed with THROTTLE_FUZZ_STATS=1). */
export const coverage: Record<string, number> = {};
const hit = (what: string): void => {
  coverage[what] = (coverage[what] ?? 0) + 1;
};

export function violations(r: TRun): string[] {
  const out = [...r.problems];
  hit(`${r.s.mode}: runs`);
  if (r.rejections.length > 0) hit(`${r.s.mode}: a local rejection`);
  const s = r.s;
  const statuses = r.received.flatMap((x) => (x.k === 'status' ? [x.status] : []));
  if (statuses.length !== 1) out.push(`${statuses.length} statuses to the application`);
  const st = statuses[0];
  if (r.clock.pendingTimers !== 0) out.push(`${r.clock.pendingTimers} timers left after the call`);
  r.writes.forEach((w, i) => {
    if (w.callback && w.calls !== 1) out.push(`write ${i}: callback ran ${w.calls} times`);
  });
  for (const a of r.attempts) {
    if (a.started && !a.ended) out.push(`attempt ${a.index} never ended`);
    // A next call made before the start only to say the peer (the retry engine asks its first attempt's) and not
    // used is cancelled: grpc-js counts an unstarted call as in flight on the channel.
    if (!a.started && a.cancelled === undefined) out.push(`attempt ${a.index} was made and left unstarted`);
  }
  const sent = r.attempts.filter((a) => a.started);

  // Counters: every attempt that reached the throttle is counted once, by how it ended.
  const c = r.throttle.counters();
  const d = {
    calls: c.calls - r.base.calls,
    rejected: c.rejected - r.base.rejected,
    accepted: c.accepted - r.base.accepted,
    notAccepted: c.notAccepted - r.base.notAccepted,
    cancelled: c.cancelled - r.base.cancelled,
  };
  const rejectedCodes = new Set([
    Status.UNAVAILABLE,
    Status.RESOURCE_EXHAUSTED,
    ...(s.throttle.deadlineRejected ? [Status.DEADLINE_EXCEEDED] : []),
  ]);
  const want = { calls: 0, rejected: r.rejections.length, accepted: 0, notAccepted: 0, cancelled: 0 };
  want.calls = sent.length + r.rejections.length;
  for (const a of sent) {
    if (a.cancelledFirst !== undefined) {
      if (a.cancelledFirst === Status.DEADLINE_EXCEEDED) want.notAccepted += 1;
      else want.cancelled += 1;
    } else if (a.answered !== undefined) {
      if (rejectedCodes.has(a.answered.code)) want.notAccepted += 1;
      else want.accepted += 1;
    }
  }
  if (JSON.stringify(d) !== JSON.stringify(want)) {
    out.push(`counters moved by ${JSON.stringify(d)}, expected ${JSON.stringify(want)}`);
  }
  const state = r.throttle.state()['test.Svc'];
  if (state !== undefined) {
    // Cancelled attempts are not counted by the rule (docs/overload.md): requests are the rest.
    const requests = r.primeCalls + want.rejected + want.accepted + want.notAccepted;
    const accepts = r.primeAccepts + want.accepted;
    if (state.requests !== requests || state.accepts !== accepts) {
      out.push(`state ${JSON.stringify(state)}, expected ${requests} requests and ${accepts} accepts`);
    }
  }
  const appCancelled = r.cancels.some((x) => !x.statusBefore);
  const firstCancel = r.cancels.find((x) => !x.statusBefore);

  if (s.mode === 'alone') {
    if (s.cancelBeforeStart) {
      // Its next call, made with it, is cancelled unstarted; the throttle never decided it.
      if (r.attempts.some((a) => a.started) || d.calls !== 0)
        out.push('a call cancelled before its start reached the throttle');
      if (st && st.code !== Status.CANCELLED) out.push(`cancelled before start, status ${st.code}`);
      return out;
    }
    if (d.calls !== 1) out.push(`the call counted ${d.calls} times`);
    if (r.rejections.length > 0) {
      if (r.attempts.some((a) => a.started)) out.push('a rejected call reached the next call');
      const ev = r.rejections[0]?.event;
      if (ev && ev.retry !== s.retryHeader) out.push(`rejected event says retry ${ev.retry}`);
      if (st) {
        if (appCancelled) {
          if (st.code !== firstCancel?.code) {
            out.push(
              `rejected call cancelled (${firstCancel?.code}) before its status: got ${st.code} ${JSON.stringify(st.details)}`,
            );
          }
        } else {
          const pushback = st.metadata.get(PUSHBACK_METADATA_KEY);
          if (!isRejection(st)) out.push(`rejected call ended ${st.code} ${JSON.stringify(st.details)}`);
          if (!isLocalRejection(st)) out.push('rejection trailers not marked as local');
          const expected = s.throttle.retryLocalRejections ? [] : ['-1'];
          if (JSON.stringify(pushback) !== JSON.stringify(expected)) {
            out.push(`rejection pushback ${JSON.stringify(pushback)}, expected ${JSON.stringify(expected)}`);
          }
        }
      }
    } else {
      const a = r.attempts[0];
      if (!a) out.push('a call let through never reached the next call');
      else if (st && (st.code !== a.delivered?.code || st.details !== a.delivered?.details)) {
        out.push(`the next call answered ${a.delivered?.code}, the application got ${st.code}`);
      }
    }
    return out;
  }

  // Under the retry interceptor.
  const starts = r.events.filter((e) => e.type === 'attempt-start').length;
  // An attempt the call's cancel (from an attempt-start listener) ends before it starts never reaches the throttle.
  if (starts < d.calls || (starts > d.calls && appCancelled === false && r.listenerCancelAt === undefined)) {
    out.push(`${starts} attempt-start events, the throttle counted ${d.calls} calls`);
  }
  const callEnd = r.events.find((e) => e.type === 'call-end');
  if (!callEnd) out.push('no call-end');
  if (callEnd && st && (callEnd.code !== st.code || callEnd.details !== st.details)) {
    out.push(`call-end says ${callEnd.code}, the application got ${st.code}`);
  }
  // The throttle tells a retry or hedge (it carries grpc-previous-rpc-attempts) from the original attempt.
  for (const { event, eventsBefore } of r.rejections) {
    const startsBefore = r.events.slice(0, eventsBefore).filter((e) => e.type === 'attempt-start').length;
    if (event.retry !== startsBefore > 1) {
      out.push(`a rejection after ${startsBefore} attempt-start events says retry ${event.retry}`);
    }
  }
  if (s.throttle.retryLocalRejections) return out;
  const ri = r.events.findIndex(
    (e) => e.type === 'attempt-end' && e.cancelReason === undefined && isRejection(e),
  );
  if (ri < 0) return out;
  const later = r.events.slice(ri + 1).filter((e) => e.type === 'attempt-start');
  if (later.length > 0) out.push(`an attempt started after a local rejection (${later.length})`);
  const endIndex = r.events.findIndex((e) => e.type === 'call-end');
  const cancelledBetween =
    r.cancels.some((x) => !x.statusBefore && x.eventsBefore <= endIndex) ||
    (r.listenerCancelAt !== undefined && r.listenerCancelAt <= endIndex);
  if (!callEnd || cancelledBetween || endIndex < ri) return out;
  const failures = r.events.slice(0, s.mode === 'retry' ? ri : endIndex).filter(
    (e): e is Extract<RetryEvent, { type: 'attempt-end' }> =>
      e.type === 'attempt-end' &&
      e.code !== Status.OK &&
      // A per-attempt timeout is a failure of the server's too (it did not answer in time).
      (e.cancelReason === undefined || e.cancelReason === 'per-attempt-timeout') &&
      !isRejection(e),
  );
  const last = failures[failures.length - 1];
  hit(`${s.mode}: rejection rule checked${last ? ', after a server failure' : ''}`);
  if (s.mode === 'retry') {
    if (callEnd.reason !== 'throttled') out.push(`call-end reason ${callEnd.reason} after a local rejection`);
    const expected = last ?? { code: Status.UNAVAILABLE, details: LOCAL_REJECTION_DETAILS_PREFIX };
    if (callEnd.code !== expected.code || !callEnd.details.startsWith(expected.details)) {
      out.push(
        `call ended ${callEnd.code} ${JSON.stringify(callEnd.details)}, expected the server's ${expected.code} ${JSON.stringify(expected.details)}`,
      );
    }
  } else if (isRejection(callEnd) && last !== undefined) {
    out.push(`hedged call shows the local rejection though a server failed (${last.code} ${last.details})`);
  }
  return out;
}
