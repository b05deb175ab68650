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
import { vi } from 'vitest';
import type { CallPolicy } from '../../src/config/types.js';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import { CancelRateLimiter } from '../../src/hedging/cancel-rate-limiter.js';
import type { JitterStrategy } from '../../src/retry/backoff.js';
import { withRetryOptions } from '../../src/retry/call-options.js';
import { turnGuard } from '../../src/retry/event-loop-turn.js';
import type { RetryEvent, RetryEventType } from '../../src/retry/events.js';
import type { RetryInterceptorOptions } from '../../src/retry/interceptor-options.js';
import { encodeRetryInfoStatus } from '../../src/retry/retry-info.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import type { InterceptingCallInterface, MessageContext } from '../../src/shared/grpc-types.js';
import type { GatedAttemptKind, RetryGate } from '../../src/shared/retry-gate.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import { RetryBudget } from '../../src/throttle/retry-budget.js';
import { type CallType, hedgingPolicy, METHOD, retryPolicy, Status, T0 } from '../helpers/engine.js';
import { type CapturedWarning, captureWarnings } from '../helpers/warnings.js';
import { GuardedFakeAttempt } from './guarded-attempt.js';

// ---- the scenario ----

/** `mutate`: the application refills a Buffer it may reuse (see the `mutate` step), from a listener: in a wait. */
export type AppAction = 'cancel' | 'write' | 'half-close' | 'read' | 'mutate';

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
      /** A google.rpc.RetryInfo delay (ms) in `grpc-status-details-bin` (failures only). */
      readonly hint?: number | undefined;
      readonly afterHeaders: boolean;
    }
  | { readonly k: 'complete-write'; readonly at: number }
  | { readonly k: 'advance'; readonly ms: number }
  | { readonly k: 'settle' }
  | { readonly k: 'mutate'; readonly which: number };

/** The interceptor's `gate` option: A6's token bucket, a retry budget, or a gate that misbehaves. */
export type GateSpec =
  | {
      readonly kind: 'throttle';
      readonly maxTokens: number;
      readonly tokenRatio: number;
      /** Failures recorded before the call (tokens already spent). */
      readonly spent: number;
    }
  | { readonly kind: 'budget'; readonly maxExtraLoad: number; readonly minPerSecond: number }
  | { readonly kind: 'throws' }
  | { readonly kind: 'non-boolean' };

export interface AdaptiveSpec {
  /** The hedge budget: none, the defaults, or deposits only (no floor, no room for chance). */
  readonly budget: 'off' | 'default' | 'tight';
  /** Outcomes recorded before the call, so that the call hedges at an adaptive delay. */
  readonly warm: boolean;
  /** A hedge came due before the call with no answer since: the call's first hedge due is held. */
  readonly stalled: boolean;
}

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
  readonly gate?: GateSpec | undefined;
  /** Adaptive hedging (hedging policies only), on the run's fake clock. */
  readonly adaptive?: AdaptiveSpec | undefined;
  /** The interceptor's `retryInfo` option (undefined: the default, on with a 60 s cap). */
  readonly retryInfo?: false | { readonly maxDelayMs: number } | undefined;
  /**
   * `policy`: the policy travels in `withRetryOptions` (kind form), over a config whose policy differs;
   * `disabled`: `withRetryOptions({ enabled: false })`, a single attempt with no engine.
   */
  readonly perCall?: 'policy' | 'disabled' | undefined;
  readonly deadlineAware?: boolean;
  readonly jitter?: JitterStrategy | undefined;
  readonly maxAttemptsLimit?: number | undefined;
  /** The next call throws when asked for this attempt (0-based, at least 1): the channel refuses it. */
  readonly refuseAttempt?: number | undefined;
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
/** RetryInfo delays: 40 is over a 30 ms cap, 70 s over the default 60 s one. */
const HINTS = [0, 5, 40, 70_000];
const EVENT_TYPES: RetryEventType[] = [
  'call-start',
  'attempt-start',
  'attempt-end',
  'hedge-scheduled',
  'hedge-sent',
  'retry-scheduled',
  'committed',
  'attempt-left-running',
  'throttled',
  'hedge-held',
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
      hint: fc.option(fc.constantFrom(...HINTS), { freq: 2, nil: undefined }),
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

const gateArb: fc.Arbitrary<GateSpec> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('throttle' as const),
      maxTokens: fc.integer({ min: 2, max: 4 }),
      tokenRatio: fc.constantFrom(0.5, 1),
      spent: fc.nat(2),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('budget' as const),
      maxExtraLoad: fc.constantFrom(0.5, 1, 2),
      minPerSecond: fc.constantFrom(0, 0, 1),
    }),
    weight: 2,
  },
  { arbitrary: fc.constant({ kind: 'throws' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'non-boolean' as const }), weight: 1 },
);

const adaptiveArb: fc.Arbitrary<AdaptiveSpec> = fc.record({
  budget: fc.constantFrom<AdaptiveSpec['budget']>('off', 'default', 'tight'),
  warm: fc.boolean(),
  stalled: fc.boolean(),
});

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
      action: fc.constantFrom<AppAction>('cancel', 'write', 'half-close', 'read', 'mutate'),
    }),
    { freq: 3, nil: undefined },
  ),
  steps: fc.array(stepArb, { maxLength: 30 }),
  finalCode: fc.constantFrom(Status.OK, Status.UNAVAILABLE, Status.UNAVAILABLE, Status.INTERNAL),
  gate: fc.option(gateArb, { freq: 2, nil: undefined }),
  adaptive: fc.option(adaptiveArb, { freq: 2, nil: undefined }),
  retryInfo: fc.constantFrom<Scenario['retryInfo']>(undefined, undefined, false, { maxDelayMs: 30 }),
  // 'disabled' and a limit of 1 leave the engine out: kept rare.
  perCall: fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 8 },
    { arbitrary: fc.constant('policy' as const), weight: 3 },
    { arbitrary: fc.constant('disabled' as const), weight: 1 },
  ),
  deadlineAware: fc.boolean(),
  jitter: fc.constantFrom<JitterStrategy | undefined>(undefined, 'a6', 'full', 'equal', 'decorrelated'),
  maxAttemptsLimit: fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 8 },
    { arbitrary: fc.constantFrom(2, 3), weight: 3 },
    { arbitrary: fc.constant(1), weight: 1 },
  ),
  refuseAttempt: fc.option(fc.integer({ min: 1, max: 4 }), { freq: 4, nil: undefined }),
});

// ---- running it ----

const seconds = (ms: number): string => `${ms / 1000}s`;

export function configOf(s: Scenario): object {
  const p = s.policy;
  if (s.perCall === 'policy') {
    // The config's policy is another one, which the call's own replaces.
    return p.kind === 'retry'
      ? hedgingPolicy({ maxAttempts: 5, hedgingDelay: '0.005s' })
      : retryPolicy({ maxAttempts: 5, initialBackoff: '0.001s', maxBackoff: '0.001s' });
  }
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

/** A fake clock that stops a timer that keeps setting itself again: past 10,000 timers, a timer throws. */
class BoundedClock extends FakeClock {
  fired = 0;
  override setTimer(callback: () => void, delayMs: number): ReturnType<FakeClock['setTimer']> {
    return super.setTimer(() => {
      this.fired += 1;
      if (this.fired > 10_000)
        throw new Error(`a timer loop: more than 10,000 timers fired by ${this.now() - T0} ms`);
      callback();
    }, delayMs);
  }
}

/** The scenario's policy in the interceptor's own form, for `withRetryOptions({ policy })`. */
export function callPolicyOf(s: Scenario): CallPolicy {
  const p = s.policy;
  if (p.kind === 'retry') {
    return {
      kind: 'retry',
      maxAttempts: p.maxAttempts,
      initialBackoffMs: p.initialBackoffMs,
      maxBackoffMs: 200,
      backoffMultiplier: 2,
      retryableStatusCodes: [Status.UNAVAILABLE],
      ...(p.perAttemptRecvTimeoutMs === undefined
        ? {}
        : { perAttemptRecvTimeoutMs: p.perAttemptRecvTimeoutMs }),
    };
  }
  return {
    kind: 'hedging',
    maxAttempts: p.maxAttempts,
    hedgingDelayMs: p.hedgingDelayMs,
    nonFatalStatusCodes: [Status.UNAVAILABLE],
  };
}

/** maxAttempts as the call runs it: clamped to the interceptor's limit (A6's 5 by default). */
export function effectiveMaxAttempts(s: Scenario): number {
  return Math.min(s.policy.maxAttempts, s.maxAttemptsLimit ?? 5);
}

/** The call has no policy (retries off for the call, or a limit of 1): the interceptor hands over the next call. */
export function passthrough(s: Scenario): boolean {
  return s.perCall === 'disabled' || effectiveMaxAttempts(s) < 2;
}

/** What one `allowAttempt` answered (as the gate itself answered it, before the engine's guard). */
interface GateAnswer {
  readonly kind: GatedAttemptKind;
  /** `true` allows; anything else (false, a non-boolean, a throw) refuses. */
  readonly allowed: boolean;
  readonly misbehaved: boolean;
}

/** The run's gate: the scenario's, wrapped to log every answer. */
interface GateRun {
  readonly gate: RetryGate;
  readonly name: string;
  readonly answers: GateAnswer[];
  readonly throttle: RetryThrottle | undefined;
}

function makeGate(spec: GateSpec, clock: FakeClock): GateRun {
  const answers: GateAnswer[] = [];
  let inner: RetryGate;
  let throttle: RetryThrottle | undefined;
  switch (spec.kind) {
    case 'throttle':
      throttle = new RetryThrottle({ maxTokens: spec.maxTokens, tokenRatio: spec.tokenRatio });
      for (let i = 0; i < spec.spent; i++) throttle.recordFailure();
      inner = throttle;
      break;
    case 'budget':
      inner = new RetryBudget({
        maxExtraLoad: spec.maxExtraLoad,
        minPerSecond: spec.minPerSecond,
        ttlMs: 1000,
        clock,
        random: () => 0.5,
      });
      break;
    case 'throws':
      inner = {
        allowAttempt: () => {
          throw new Error('the gate broke');
        },
        recordFailure: () => {},
        recordSuccess: () => {},
      };
      break;
    case 'non-boolean':
      inner = {
        allowAttempt: () => 1 as unknown as boolean,
        recordFailure: () => {},
        recordSuccess: () => {},
      };
      break;
  }
  const name = `logged-${spec.kind}`;
  const gate: RetryGate = {
    name,
    get tokens() {
      return inner.tokens;
    },
    allowAttempt(kind) {
      let answer: unknown;
      try {
        answer = inner.allowAttempt(kind);
      } catch (error) {
        answers.push({ kind, allowed: false, misbehaved: true });
        throw error;
      }
      answers.push({ kind, allowed: answer === true, misbehaved: typeof answer !== 'boolean' });
      return answer as boolean;
    },
    recordFailure: () => inner.recordFailure(),
    recordSuccess: () => inner.recordSuccess(),
    ...(inner.recordCall === undefined ? {} : { recordCall: () => inner.recordCall?.() }),
  };
  return { gate, name, answers, throttle };
}

function makeAdaptive(spec: AdaptiveSpec, clock: FakeClock): AdaptiveHedging {
  const adaptive = new AdaptiveHedging({
    clock,
    maxExtraLoad: 0.5,
    budget: spec.budget === 'off' ? false : spec.budget === 'tight' ? { minPerSecond: 0, chanceSd: 0 } : true,
  });
  if (spec.warm) {
    // Answered calls at 10 to 40 ms with the delay the policy gives: the delay becomes an adaptive one.
    for (const latency of [10, 20, 30, 40, 15, 25]) adaptive.recordOutcome(METHOD, 10, latency);
  }
  if (spec.stalled) adaptive.holdHedge(METHOD);
  return adaptive;
}

/** A scripted attempt whose calls into the engine record what they throw instead of letting it escape. */
class GuardedAttempt extends GuardedFakeAttempt {
  /** Each message as its bytes read when the engine handed it over. */
  readonly sentBytes: string[] = [];
  responses = 0;
  /** The hints its status carried, and how many events the run had when it was delivered. */
  statusSent: { pushback: string | undefined; hint: number | undefined; eventsBefore: number } | undefined;
  /** The hints the next status carries (set by the step that sends it). */
  hints: { pushback: string | undefined; hint: number | undefined } | undefined;

  constructor(
    index: number,
    options: InterceptorOptions,
    guard: (where: string, f: () => void) => void,
    private readonly events: readonly RetryEvent[],
  ) {
    super(index, options, guard);
  }
  override sendMessageWithContext(context: MessageContext, message: unknown): void {
    this.sentBytes.push(Buffer.isBuffer(message) ? message.toString('hex') : String(message));
    super.sendMessageWithContext(context, message);
  }
  override status(code: number, details = '', trailers: Record<string, string> | Metadata = {}): void {
    const hints = this.hints ?? { pushback: undefined, hint: undefined };
    this.hints = undefined;
    if (!this.ended && this.cancelled === undefined && this.listener !== undefined) {
      this.statusSent = { ...hints, eventsBefore: this.events.length };
    }
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
  /** The clock's reading at each event. */
  readonly eventTimes: number[];
  readonly gate: GateRun | undefined;
  /** Tokens of the RetryThrottle (if any) at each attempt-start of a retry or hedge. */
  readonly tokensAtStart: { attempt: number; tokens: number }[];
  /** Attempts the next call refused, with how many attempts the engine had live then (by its events). */
  readonly refused: { index: number; live: number }[];
  readonly warnings: CapturedWarning[];
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
  // Until runScenario restores the mocks: the hook-error warning is asserted, the others are kept off stderr.
  const warnings = captureWarnings();
  const clock = new BoundedClock(T0);
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
  const eventTimes: number[] = [];
  const tokensAtStart: Run['tokensAtStart'] = [];
  const refused: Run['refused'] = [];
  const gate = s.gate === undefined ? undefined : makeGate(s.gate, clock);
  const onEvent = (e: RetryEvent): void => {
    events.push(e);
    eventTimes.push(clock.now());
    if (e.type === 'attempt-start' && e.kind !== 'original' && gate?.throttle !== undefined) {
      tokensAtStart.push({ attempt: e.attempt, tokens: gate.throttle.tokens });
    }
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
    ...(gate === undefined ? {} : { gate: gate.gate }),
    ...(s.adaptive === undefined || s.policy.kind !== 'hedging'
      ? {}
      : { adaptiveHedging: makeAdaptive(s.adaptive, clock) }),
    ...(s.retryInfo === undefined ? {} : { retryInfo: s.retryInfo }),
    ...(s.deadlineAware ? { deadlineAwareBackoff: true } : {}),
    ...(s.jitter === undefined ? {} : { jitter: s.jitter }),
    ...(s.maxAttemptsLimit === undefined ? {} : { maxAttemptsLimit: s.maxAttemptsLimit }),
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
    ...(s.perCall === 'policy' ? withRetryOptions({ policy: callPolicyOf(s) }) : {}),
    ...(s.perCall === 'disabled' ? withRetryOptions({ enabled: false }) : {}),
  } as unknown as InterceptorOptions;
  const nextCall = (o: InterceptorOptions) => {
    if (events.some((x) => x.type === 'call-end'))
      problems.push(`attempt ${attempts.length + 1} made after call-end`);
    if (attempts.length > 0 && attempts.length === s.refuseAttempt) {
      refused.push({ index: attempts.length, live: engineLive(events).length });
      throw new Error('channel closed');
    }
    const attempt = new GuardedAttempt(attempts.length, o, guard, events);
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
    eventTimes,
    gate,
    tokensAtStart,
    refused,
    warnings,
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

/** The attempts the engine has out, by its events: started, and neither ended nor left running. */
function engineLive(events: readonly RetryEvent[]): number[] {
  const done = new Set(
    events.flatMap((e) => (e.type === 'attempt-end' || e.type === 'attempt-left-running' ? [e.attempt] : [])),
  );
  return events.flatMap((e) => (e.type === 'attempt-start' && !done.has(e.attempt) ? [e.attempt] : []));
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

const ended = (r: Run): boolean => r.decided.value || r.received.some((x) => x.k === 'status');

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
    case 'mutate':
      mutate(r, r.written.length - 1);
      return;
  }
}

/**
 * The application reuses a Buffer it may reuse: the single request, or a message whose callback came (the
 * `which`-th of those, modulo their number).
 * (A streamed message written without a callback is never given back: changing it is the application's bug.)
 */
function mutate(r: Run, which: number): void {
  const single = r.scenario.type === 'unary' || r.scenario.type === 'server-stream';
  const free = r.written.filter((w) => (single && !w.callback) || w.calls > 0);
  const w = free[which % Math.max(1, free.length)];
  if (w) w.buffer.fill(0xee);
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
        const trailers = new Metadata();
        if (step.pushback !== undefined) trailers.set('grpc-retry-pushback-ms', step.pushback);
        const hint = step.code === Status.OK ? undefined : step.hint;
        if (hint !== undefined) {
          trailers.set(
            'grpc-status-details-bin',
            encodeRetryInfoStatus({ code: step.code, retryDelay: hint }),
          );
        }
        a.hints = { pushback: step.pushback, hint };
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
    case 'mutate':
      mutate(r, step.which);
      return;
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
  vi.restoreAllMocks();
  return r;
}

/** What the run broke, as sentences (empty: nothing). */
export function violations(run: Run): string[] {
  const out = [...run.problems];
  const s = run.scenario;
  // A unary-response call's status that came without a response is preceded by a null message, as grpc-js's own
  // unary calls do (its bottom call emits one): grpc-js's marker, not a response, so it is checked here and then
  // left out of what follows. Only there, and only when no other message reached the application.
  const unaryResponse = s.type === 'unary' || s.type === 'client-stream';
  const nullAt = run.received.findIndex((x) => x.k === 'message' && x.value === null);
  const messages = run.received.filter((x) => x.k === 'message').length;
  if (nullAt >= 0 && (!unaryResponse || messages !== 1 || run.received[nullAt + 1]?.k !== 'status')) {
    out.push(
      'a null message reached the application other than right before the status of a call with no response',
    );
  }
  const received = run.received.filter((_, i) => i !== nullAt || !unaryResponse);
  const r: Run = { ...run, received };
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
  // 4. Every write callback once. (Without a policy the scripted next call is the call: its completions are its own.)
  const bare = passthrough(s);
  r.written.forEach((w, i) => {
    if (!bare && w.callback && w.calls !== 1) out.push(`write ${i}'s callback ran ${w.calls} times`);
  });
  // 5. At most maxAttempts attempts (the call's own policy, clamped to maxAttemptsLimit), numbered 0 (absent), 1,
  // 2, ... in the order they started; with no policy (retries off for the call), one attempt and no events.
  const maxAttempts = bare ? 1 : effectiveMaxAttempts(s);
  if (r.attempts.length > maxAttempts) {
    out.push(`${r.attempts.length} attempts made, maxAttempts ${maxAttempts}`);
  }
  if (bare && r.events.length > 0)
    out.push(`a call without a policy had events: ${r.events.map((e) => e.type)}`);
  const started = r.events.find((e) => e.type === 'call-start');
  if (
    started?.type === 'call-start' &&
    (started.policy !== s.policy.kind || started.maxAttempts !== maxAttempts)
  ) {
    out.push(
      `call-start: ${started.policy}, ${started.maxAttempts} attempts; expected ${s.policy.kind}, ${maxAttempts}`,
    );
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
  if (!bare && ends.length !== 1) out.push(`${ends.length} call-end events`);
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
  const winner = bare ? 0 : committed[0]?.type === 'committed' ? committed[0].attempt - 1 : undefined;
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
  out.push(...gateViolations(r, status), ...hintViolations(r), ...refusalViolations(r, status));
  return [...new Set(out)];
}

/**
 * The gate (docs/configuration.md "Throttling", docs/overload.md): every retry or hedge sent was allowed by it;
 * every refusal (false, a throw, a non-boolean) is a `throttled` event; a misbehaving gate is one
 * GRPC_RETRY_HEDGING_HOOK_ERROR warning; no attempt goes while a RetryThrottle's tokens are at or below half; a
 * throttled retry ends the call at once with reason `throttled`.
 */
function gateViolations(r: Run, status: StatusObject | undefined): string[] {
  const out: string[] = [];
  const g = r.gate;
  const extra = r.events.filter((e) => e.type === 'attempt-start' && e.kind !== 'original');
  if (g !== undefined) {
    const allowed = g.answers.filter((a) => a.allowed).length;
    if (extra.length > allowed)
      out.push(`${extra.length} retries or hedges sent, the gate allowed ${allowed}`);
    const refusals = g.answers.filter((a) => !a.allowed).length;
    const throttled = r.events.filter((e) => e.type === 'throttled' && e.gate === g.name).length;
    if (throttled !== refusals) out.push(`the gate refused ${refusals} times; ${throttled} throttled events`);
    const hookWarnings = r.warnings.filter(
      (w) => w.code === 'GRPC_RETRY_HEDGING_HOOK_ERROR' && w.message.includes('allowAttempt'),
    ).length;
    const misbehaved = g.answers.some((a) => a.misbehaved);
    if (hookWarnings !== (misbehaved ? 1 : 0)) {
      out.push(`the gate misbehaved: ${misbehaved}; ${hookWarnings} hook-error warnings`);
    }
  }
  const throttle = g?.throttle;
  if (throttle !== undefined) {
    for (const t of r.tokensAtStart) {
      if (t.tokens <= throttle.maxTokens / 2) {
        out.push(`attempt ${t.attempt} sent with ${t.tokens} of ${throttle.maxTokens} tokens`);
      }
    }
  }
  // A retry the gate refused: the call ends then, with reason `throttled` (unless a listener ended it first).
  const i = r.events.findIndex((e) => e.type === 'throttled' && e.kind === 'retry');
  if (i >= 0 && r.scenario.listener?.on !== 'throttled') {
    const endAt = r.events.findIndex((e) => e.type === 'call-end');
    const end = r.events[endAt];
    if (end?.type !== 'call-end' || r.eventTimes[endAt] !== r.eventTimes[i]) {
      out.push('a throttled retry did not end the call at once');
    } else if (end.reason !== 'throttled' && !r.cancelledLive) {
      out.push(`a throttled retry ended the call with reason ${end.reason} (${status?.details})`);
    }
    if (r.events.slice(i).some((e) => e.type === 'attempt-start')) {
      out.push('an attempt started after a throttled retry');
    }
  }
  return out;
}

/** A valid grpc-retry-pushback-ms: digits with no leading zero (docs/configuration.md "Pushback"). */
const validPushback = (p: string | undefined): number | undefined =>
  p !== undefined && /^(0|[1-9][0-9]*)$/.test(p) ? Number(p) : undefined;

/**
 * Retry delays (retry policy), after the failed attempt's own status: a valid pushback is the delay (reason
 * `pushback`); else a RetryInfo within the cap (reason `retry-info`, never with `retryInfo: false`); else a
 * backoff within maxBackoff × 1.2. A RetryInfo over the cap with no pushback ends the call. With
 * `deadlineAwareBackoff`, no delay ends at or after the deadline.
 */
function hintViolations(r: Run): string[] {
  const out: string[] = [];
  const s = r.scenario;
  if (s.policy.kind !== 'retry' || passthrough(s)) return out;
  const maxDelayMs = s.retryInfo === false ? -1 : (s.retryInfo?.maxDelayMs ?? 60_000);
  r.events.forEach((e, i) => {
    if (e.type !== 'retry-scheduled') return;
    const at = r.eventTimes[i] ?? 0;
    // (The event's delay is rounded to whole ms: 0.75 ms reads 1, and ends before a deadline 1 ms away.)
    if (s.deadlineAware && s.deadlineMs !== undefined && at + e.delayMs > T0 + s.deadlineMs) {
      out.push(
        `deadline-aware: retry ${e.attempt} due ${e.delayMs} ms after ${at - T0}, deadline ${s.deadlineMs}`,
      );
    }
    if (e.reason === 'backoff' && !(e.delayMs >= 0 && e.delayMs <= 240)) {
      out.push(`retry ${e.attempt}: a backoff of ${e.delayMs} ms`);
    }
    const sent = r.attempts[e.attempt - 2]?.statusSent;
    if (sent === undefined || sent.eventsBefore > i) return; // it timed out (or was cancelled) first
    const pushback = validPushback(sent.pushback);
    const hint = sent.hint !== undefined && sent.hint <= maxDelayMs ? sent.hint : undefined;
    const expected =
      pushback !== undefined
        ? { reason: 'pushback', delayMs: pushback }
        : hint !== undefined
          ? { reason: 'retry-info', delayMs: hint }
          : { reason: 'backoff', delayMs: undefined };
    if (e.reason !== expected.reason || (expected.delayMs !== undefined && e.delayMs !== expected.delayMs)) {
      out.push(
        `retry ${e.attempt} after ${e.delayMs} ms (${e.reason}); its failure sent pushback ${sent.pushback}, RetryInfo ${sent.hint}`,
      );
    }
    if (sent.pushback === undefined && sent.hint !== undefined && maxDelayMs >= 0 && sent.hint > maxDelayMs) {
      out.push(
        `retry ${e.attempt} scheduled after a RetryInfo of ${sent.hint} ms, over the ${maxDelayMs} ms cap`,
      );
    }
  });
  return out;
}

/**
 * The next call refused an attempt: with none of the call's attempts out, the call ends with UNAVAILABLE naming
 * it (test/engine/attempts.engine.test.ts); a refused attempt is never counted (checked above).
 */
function refusalViolations(r: Run, status: StatusObject | undefined): string[] {
  const out: string[] = [];
  for (const f of r.refused) {
    if (f.live > 0 || status === undefined || r.cancelledLive) continue;
    const expected = `could not start attempt ${f.index + 1}`;
    if (!(status.code === Status.UNAVAILABLE && status.details.startsWith(expected))) {
      out.push(
        `attempt ${f.index + 1} refused with none out, but the status is ${status.code} (${status.details})`,
      );
    }
  }
  return out;
}
