import {
  type InterceptingCall,
  type InterceptingListener,
  type Interceptor,
  type InterceptorOptions,
  type Metadata,
  type StatusObject,
  status,
} from '@grpc/grpc-js';
import { parseStatusCode } from '../config/status-codes.js';
import { emptyMetadataLike } from '../shared/callers-metadata.js';
import type { Clock } from '../shared/clock.js';
import type { InterceptingCallInterface, MessageContext } from '../shared/grpc-types.js';
import { PREVIOUS_RPC_ATTEMPTS_METADATA_KEY, PUSHBACK_METADATA_KEY } from '../shared/headers.js';
import { LOCAL_REJECTION_DETAILS_PREFIX, localRejectionTrailers } from '../shared/local-rejection.js';
import { FORWARDS_MESSAGES_TO, type ForwardsMessages } from '../shared/message-passthrough.js';
import { markThrottleAbove } from '../shared/throttle-order.js';
import { errorMessage } from '../util/error-message.js';
import { checkNotUsedAsInterceptor } from '../util/factory-misuse.js';
import { guardedNowSourceOption } from '../util/guarded-clock.js';
import { guardedRandom } from '../util/guarded-random.js';
import { checkBoolean, checkFunction, checkOptions, describeValue } from '../util/option-checks.js';
import { safeListener } from '../util/safe-listener.js';
import {
  ADAPTIVE_THROTTLE_RENAMED_OPTIONS,
  ADAPTIVE_THROTTLE_RULE_OPTIONS,
  type AdaptiveThrottleRuleConfig,
  type AdaptiveThrottleRuleOptions,
  AdaptiveThrottleState,
  rejectionProbability,
  resolveAdaptiveThrottleRule,
} from './adaptive-throttle-rule.js';

/** Emitted when the adaptive throttle rejects a call (or an attempt of a retrying call) locally. */
export interface AdaptiveThrottleRejectedEvent {
  type: 'adaptive-throttle-rejected';
  /** Full method path, `/pkg.Service/Method`. */
  method: string;
  /** The throttling key (by default the service, `pkg.Service`). */
  key: string;
  /** The probability it was rejected with. */
  probability: number;
  /** Requests and accepts counted for the key over the window, before this rejection. */
  requests: number;
  accepts: number;
  /** It was an attempt after the first (it carried `grpc-previous-rpc-attempts`): a retry or a hedge. */
  retry: boolean;
}

/** Events of the adaptive throttle (one type today; switch on `type`). */
export type AdaptiveThrottleEvent = AdaptiveThrottleRejectedEvent;

/** Options of {@link createAdaptiveThrottleInterceptor}. */
export interface AdaptiveThrottleOptions extends AdaptiveThrottleRuleOptions {
  /**
   * Statuses that mean the backend did not accept a request. Every other status counts as accepted.
   * Codes as numbers or names. Default `['UNAVAILABLE', 'RESOURCE_EXHAUSTED']`: what servers answer when they shed
   * load (and what a client sees when it cannot reach them). DEADLINE_EXCEEDED counts as accepted: it says the
   * caller's deadline was short, not that the backend refused; list it to throttle on slow backends too.
   */
  rejectedStatusCodes?: ReadonlyArray<number | string> | undefined;
  /**
   * The throttling key of a call: calls with the same key share one state. Default: the service of the method
   * (`/pkg.Service/Method` → `pkg.Service`). State is per throttle instance, so one instance per target (channel)
   * and a key per service gives the SRE book's "per backend" state.
   */
  key?: ((method: string) => string) | undefined;
  /**
   * Whether a retry interceptor placed before this one may retry a local rejection. Default false: a local
   * rejection carries `grpc-retry-pushback-ms: -1`, which tells the retry engine (A6) not to retry it; retrying
   * would only be rejected again with the same probability, after a backoff, and spend the retry gate. Needs
   * `retries: 'same-probability'` (a TypeError otherwise): under `'reject-while-throttling'` every such retry would
   * be rejected again and counted, and the throttle would hold itself shut after the backend recovers.
   */
  retryLocalRejections?: boolean | undefined;
  /** Receives an event for each local rejection. A listener that throws does not break the call. */
  onEvent?: ((event: AdaptiveThrottleEvent) => void) | undefined;
  /** Time source; only `now()` is used. Default: the system clock. */
  clock?: Pick<Clock, 'now'> | undefined;
  /** Uniform random numbers in [0, 1) (default Math.random); inject one for deterministic tests. */
  random?: (() => number) | undefined;
}

/** Lifetime counters of an adaptive throttle, summed over its keys. */
export interface AdaptiveThrottleCounters {
  /** Calls (attempts) that reached the throttle. */
  calls: number;
  /** Of these, rejected locally. */
  rejected: number;
  /** Let through and answered with an accepted status. */
  accepted: number;
  /** Let through and answered with a rejected status (see `rejectedStatusCodes`), or timed out per attempt. */
  notAccepted: number;
  /**
   * Let through and cancelled by the client before an answer (a losing hedge, the application): not counted by
   * the rule. A per-attempt timeout (the retry engine's `perAttemptRecvTimeout`, or any cancel with
   * DEADLINE_EXCEEDED) counts as not accepted instead.
   */
  cancelled: number;
}

/** The state of one key, over the window. */
export interface AdaptiveThrottleKeyState {
  requests: number;
  accepts: number;
  /** The probability a call made now would be rejected. */
  probability: number;
}

/** The interceptor returned by {@link createAdaptiveThrottleInterceptor}, with its counters and state. */
export interface AdaptiveThrottleInterceptor extends Interceptor {
  /** A copy of the lifetime counters. */
  counters(): AdaptiveThrottleCounters;
  /** The current state of each key that has seen a call. */
  state(): Record<string, AdaptiveThrottleKeyState>;
  /** The resolved rule (k, windowMs, windowBins, padding, maxRejectionProbability, retries). */
  readonly rule: AdaptiveThrottleRuleConfig;
}

export { LOCAL_REJECTION_DETAILS_PREFIX };

/** Where option errors point: `createAdaptiveThrottleInterceptor: options.k must be ...`. */
const WHERE = 'createAdaptiveThrottleInterceptor: options';
const KNOWN_OPTIONS = [
  ...ADAPTIVE_THROTTLE_RULE_OPTIONS,
  'rejectedStatusCodes',
  'key',
  'retryLocalRejections',
  'onEvent',
  'clock',
  'random',
] as const;

/** `/pkg.Service/Method` → `pkg.Service`. */
export function serviceOfMethod(method: string): string {
  const end = method.lastIndexOf('/');
  return end > 0 ? method.slice(method.startsWith('/') ? 1 : 0, end) : method;
}

/**
 * Client-side adaptive throttling (Google SRE book, "Handling Overload") as a grpc-js client interceptor.
 *
 * For each key (by default each service) it counts, over the last `windowMs`, the requests it saw and those the
 * backend accepted, and rejects a new call locally with probability max(0, (requests − k·accepts) /
 * (requests + padding)). A rejected call ends at once with UNAVAILABLE and details starting with
 * {@link LOCAL_REJECTION_DETAILS_PREFIX}; it never reaches the network, and it counts as a request.
 *
 * With the retry interceptor put it after it: `interceptors: [createRetryInterceptor(config), throttle]`, so that
 * every attempt (retries and hedges too) goes through the throttle. See docs/overload.md.
 */
export function createAdaptiveThrottleInterceptor(
  options?: AdaptiveThrottleOptions,
): AdaptiveThrottleInterceptor {
  checkNotUsedAsInterceptor(
    'createAdaptiveThrottleInterceptor',
    'createAdaptiveThrottleInterceptor()',
    options,
  );
  const opts = checkOptions(
    WHERE,
    options,
    KNOWN_OPTIONS,
    ADAPTIVE_THROTTLE_RENAMED_OPTIONS,
  ) as AdaptiveThrottleOptions;
  const rule = resolveAdaptiveThrottleRule(WHERE, opts);
  const rejectedCodes = resolveRejectedCodes(opts.rejectedStatusCodes);
  const keyOf = checkFunction<(method: string) => string>(WHERE, 'key', opts.key) ?? serviceOfMethod;
  const onEvent = checkFunction<(event: AdaptiveThrottleEvent) => void>(WHERE, 'onEvent', opts.onEvent);
  // Both are called from inside grpc-js callbacks (a call's start, its status), where nothing may be thrown: a
  // clock or random source that throws or reads wrong is reported once and read safely (src/util/guarded-*.ts).
  const clock = guardedNowSourceOption(WHERE, 'clock', opts.clock) ?? { now: () => Date.now() };
  const givenRandom = checkFunction<() => number>(WHERE, 'random', opts.random);
  const random = givenRandom === undefined ? Math.random : guardedRandom(givenRandom, WHERE);
  const retryLocalRejections = checkBoolean(WHERE, 'retryLocalRejections', opts.retryLocalRejections, false);
  if (retryLocalRejections && rule.retries === 'reject-while-throttling') {
    // Each retry of a local rejection would be rejected again at once and counted as a request: with up to
    // maxAttempts requests counted for each call the throttle refuses, P settles near 1 once it is high, and the
    // throttle holds itself shut after the backend is back (an audit: 77 of 3,400 calls went through in the 34 s
    // after a 4 s outage).
    throw new TypeError(
      `${WHERE}.retryLocalRejections: true needs retries: 'same-probability'. Under retries: 'reject-while-throttling' (the default) every retry of a local rejection is rejected again and counted as a request, which holds the throttle shut after the backend recovers`,
    );
  }

  const states = new Map<string, AdaptiveThrottleState>();
  /**
   * Keys are kept while they count something: when a new key would make more than `forgetAbove` of them, the keys
   * whose window holds no request any more (idle for a window, as good as new) are forgotten, so that a `key` that
   * names many things (per method, per tenant) does not keep every one it ever saw.
   */
  let forgetAbove = FORGET_IDLE_KEYS_ABOVE;
  const stateOf = (key: string): AdaptiveThrottleState => {
    let state = states.get(key);
    if (state === undefined) {
      if (states.size >= forgetAbove) {
        const now = clock.now();
        for (const [other, s] of states) {
          if (s.requests(now) === 0) {
            states.delete(other);
          }
        }
        forgetAbove = Math.max(FORGET_IDLE_KEYS_ABOVE, 2 * states.size);
      }
      state = new AdaptiveThrottleState(rule);
      states.set(key, state);
    }
    return state;
  };
  const counters: AdaptiveThrottleCounters = {
    calls: 0,
    rejected: 0,
    accepted: 0,
    notAccepted: 0,
    cancelled: 0,
  };
  const emit =
    onEvent === undefined ? undefined : safeListener(onEvent, "the adaptive throttle's onEvent listener");

  const interceptor = (
    callOptions: InterceptorOptions,
    nextCall: (o: InterceptorOptions) => InterceptingCallInterface,
  ) => {
    const method = callOptions.method_definition.path;
    const key: unknown = keyOf(method);
    if (typeof key !== 'string') {
      // Thrown where the call is made (by the retry engine, the attempt's failure): calls whose key is not a string
      // would share one state, named after whatever it was, with no word of it.
      throw new TypeError(
        `${WHERE}.key must return a string, got ${describeValue(key)} for ${JSON.stringify(method)}`,
      );
    }
    const throttleState = stateOf(key);
    const report = (outcome: number | 'timed-out' | 'cancelled') => {
      if (outcome === 'cancelled') {
        counters.cancelled += 1;
        return;
      }
      // Looked up again: the key's state may have been forgotten (idle for a window) while the call was out.
      const accepted = !(outcome === 'timed-out' || rejectedCodes.has(outcome));
      if (accepted) {
        counters.accepted += 1;
      } else {
        counters.notAccepted += 1;
      }
      stateOf(key).recordResponseAt(clock.now(), accepted);
    };
    // Decided when the call starts: only then does the metadata say whether it is a retry or a hedge. The next call
    // is made now, where the call is made (see ThrottledCall).
    return new ThrottledCall(nextCall(markThrottleAbove(callOptions)), (metadata, takeNext) => {
      counters.calls += 1;
      const now = clock.now();
      const requests = throttleState.requests(now);
      const accepts = throttleState.accepts(now);
      const retry = metadata.get(PREVIOUS_RPC_ATTEMPTS_METADATA_KEY).length > 0;
      const probability = throttleState.decideAt(now, random(), retry);
      if (probability < 0) {
        return new CountingCall(takeNext(), report);
      }
      counters.rejected += 1;
      emit?.({ type: 'adaptive-throttle-rejected', method, key, probability, requests, accepts, retry });
      const why = rejectionReason(retry, probability, requests, accepts, rule);
      return new RejectedCall(
        `${LOCAL_REJECTION_DETAILS_PREFIX} (client-side adaptive throttling of ${key}: ${why}, ` +
          `${requests} requests and ${accepts} accepts in the last ${rule.windowMs / 1000} s)`,
        retryLocalRejections,
      );
    }) as unknown as InterceptingCall;
  };

  return Object.assign(interceptor, {
    counters: (): AdaptiveThrottleCounters => ({ ...counters }),
    state: (): Record<string, AdaptiveThrottleKeyState> => {
      const now = clock.now();
      const out: Record<string, AdaptiveThrottleKeyState> = {};
      for (const [key, s] of states) {
        out[key] = { requests: s.requests(now), accepts: s.accepts(now), probability: s.probability(now) };
      }
      return out;
    },
    rule,
  }) as AdaptiveThrottleInterceptor;
}

/** How many keys the throttle holds before it looks for idle ones to forget (then twice those left, at least this). */
const FORGET_IDLE_KEYS_ABOVE = 1_024;

function resolveRejectedCodes(value: unknown): ReadonlySet<number> {
  if (value === undefined) {
    return new Set([status.UNAVAILABLE, status.RESOURCE_EXHAUSTED]);
  }
  if (!Array.isArray(value)) {
    throw new TypeError(
      `${WHERE}.rejectedStatusCodes must be an array of status codes, got ${describeValue(value)}`,
    );
  }
  return new Set(
    value.map((code, i) => {
      try {
        return parseStatusCode(code, `rejectedStatusCodes[${i}]`);
      } catch (error) {
        throw new RangeError(`${WHERE}.${errorMessage(error)}`);
      }
    }),
  );
}

/**
 * The retry engine cancels an attempt whose per-attempt receive timeout (`perAttemptRecvTimeout`) fired with
 * DEADLINE_EXCEEDED (src/retry/retrying-call.ts); any client cancel with that code counts as a timeout.
 */
function isPerAttemptTimeout(code: status, _details: string): boolean {
  return code === status.DEADLINE_EXCEEDED;
}

/**
 * What the interceptor returns: it decides when the call starts (from its metadata), then hands everything to a
 * {@link CountingCall} (let through) or a {@link RejectedCall}. A cancel before the start ends it as rejected would.
 *
 * The next call is made with this one, where the application (or a retry interceptor above) makes the call, so that
 * a channel that refuses it (closed: `Channel has been shut down`) throws there, as it does without the throttle,
 * and so that {@link getPeer} names the channel's target before the start (a retry interceptor above asks, to key
 * what it keeps per target). When the call does not go ahead (rejected, or cancelled before its start), that next
 * call is cancelled at once rather than left unstarted, which grpc-js would count as a call in flight on the channel.
 */
class ThrottledCall implements InterceptingCallInterface, ForwardsMessages {
  private inner: InterceptingCallInterface | undefined;
  private cancelledBeforeStart: { code: status; details: string } | undefined;
  /** The next call, made with this one, until the start takes it or drops it. */
  private madeEarly: InterceptingCallInterface | undefined;

  /**
   * @param next The next call, made where this one is made (a closed channel's refusal is thrown there).
   * @param decide Decides the call at its start; `takeNext` hands it `next` for a call let through.
   */
  constructor(
    next: InterceptingCallInterface,
    private readonly decide: (
      metadata: Metadata,
      takeNext: () => InterceptingCallInterface,
    ) => InterceptingCallInterface,
  ) {
    this.madeEarly = next;
  }

  /** The next call for a call let through: the one made with this one (only a cancel before the start drops it). */
  private readonly takeNext = (): InterceptingCallInterface => {
    const next = this.madeEarly as InterceptingCallInterface;
    this.madeEarly = undefined;
    return next;
  };

  /** Where request messages go, untouched (see message-passthrough.ts): the call decided at the start. */
  get [FORWARDS_MESSAGES_TO](): unknown {
    return this.inner;
  }

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    const early = this.cancelledBeforeStart;
    if (early) {
      this.inner = new RejectedCall('', true);
      this.inner.cancelWithStatus(early.code, early.details);
    } else {
      this.inner = this.decide(metadata, this.takeNext);
    }
    this.dropMadeEarly(status.CANCELLED, 'adaptive throttle: the call did not go ahead');
    this.inner.start(metadata, listener);
    const during = this.cancelledBeforeStart;
    if (early === undefined && during !== undefined) {
      // An `adaptive-throttle-rejected` listener cancelled the call while it was being decided: the cancel wins,
      // as one made after the start does.
      this.inner.cancelWithStatus(during.code, during.details);
    }
  }
  cancelWithStatus(code: status, details: string): void {
    if (this.inner) {
      this.inner.cancelWithStatus(code, details);
    } else {
      this.cancelledBeforeStart ??= { code, details };
      // The start may never come (a retry engine whose call was cancelled by an attempt-start listener).
      this.dropMadeEarly(code, details);
    }
  }

  /** Ends the next call made with this one, when the call does not go ahead. */
  private dropMadeEarly(code: status, details: string): void {
    const unused = this.madeEarly;
    if (unused !== undefined) {
      this.madeEarly = undefined;
      unused.cancelWithStatus(code, details);
    }
  }
  getPeer(): string {
    // Before the start, grpc-js's call names the channel's target; a call cancelled before its start names none.
    return (this.inner ?? this.madeEarly)?.getPeer() ?? '';
  }
  sendMessageWithContext(context: MessageContext, message: unknown): void {
    if (this.inner) {
      this.inner.sendMessageWithContext(context, message);
    } else {
      context.callback?.();
    }
  }
  sendMessage(message: unknown): void {
    this.inner?.sendMessage(message);
  }
  startRead(): void {
    this.inner?.startRead();
  }
  halfClose(): void {
    this.inner?.halfClose();
  }
  getAuthContext(): ReturnType<InterceptingCallInterface['getAuthContext']> {
    return this.inner?.getAuthContext() ?? null;
  }
}

/**
 * A call let through: passes everything on to the next call and reports, once, how it ended: its status code;
 * `'timed-out'` when the client cancelled it on a per-attempt timeout (the backend did not answer in time);
 * `'cancelled'` when the client cancelled it otherwise (a losing hedge, the application).
 */
class CountingCall implements InterceptingCallInterface, ForwardsMessages {
  private reported = false;
  private cancelledWith: 'timed-out' | 'cancelled' | undefined;

  constructor(
    private readonly next: InterceptingCallInterface,
    private readonly report: (outcome: number | 'timed-out' | 'cancelled') => void,
  ) {}

  /** Where request messages go, untouched (see message-passthrough.ts). */
  get [FORWARDS_MESSAGES_TO](): unknown {
    return this.next;
  }

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.next.start(metadata, {
      onReceiveMetadata: (m) => listener?.onReceiveMetadata?.(m),
      onReceiveMessage: (m) => listener?.onReceiveMessage?.(m),
      onReceiveStatus: (statusObject) => {
        this.settle(statusObject.code);
        listener?.onReceiveStatus?.(statusObject);
      },
    });
  }

  private settle(code: number): void {
    if (this.reported) {
      return;
    }
    this.reported = true;
    if (this.cancelledWith === undefined) {
      this.report(code);
    } else {
      this.report(this.cancelledWith);
    }
  }

  cancelWithStatus(code: status, details: string): void {
    if (!this.reported && this.cancelledWith === undefined) {
      this.cancelledWith = isPerAttemptTimeout(code, details) ? 'timed-out' : 'cancelled';
    }
    this.next.cancelWithStatus(code, details);
  }
  getPeer(): string {
    return this.next.getPeer();
  }
  sendMessageWithContext(context: MessageContext, message: unknown): void {
    this.next.sendMessageWithContext(context, message);
  }
  sendMessage(message: unknown): void {
    this.next.sendMessage(message);
  }
  startRead(): void {
    this.next.startRead();
  }
  halfClose(): void {
    this.next.halfClose();
  }
  getAuthContext(): ReturnType<InterceptingCallInterface['getAuthContext']> {
    // Older grpc-js (before 1.13) has no getAuthContext.
    const next = this.next as Partial<InterceptingCallInterface>;
    return typeof next.getAuthContext === 'function' ? next.getAuthContext.call(this.next) : null;
  }
}

/**
 * A call the throttle rejected: it never touches the network and ends, once, with UNAVAILABLE on the next turn of
 * the event loop (or with the status it is cancelled with first).
 */
class RejectedCall implements InterceptingCallInterface {
  private ended = false;
  private cancelStatus: Omit<StatusObject, 'metadata'> | undefined;
  private listener: { onReceiveStatus?: (status: StatusObject) => void } | undefined;
  /** The call's request metadata: its statuses' trailers are of its class (see emptyMetadataLike). */
  private callers: Metadata | undefined;

  constructor(
    private readonly details: string,
    private readonly retryable: boolean,
  ) {}

  start(metadata: Metadata, listener?: { onReceiveStatus?: (status: StatusObject) => void }): void {
    this.listener = listener;
    this.callers = metadata;
    setImmediate(() => this.end());
  }

  /** A cancel before the end is the call's status: `start` has set, or will set, the turn that delivers it. */
  cancelWithStatus(code: status, details: string): void {
    if (this.ended || this.cancelStatus) {
      return;
    }
    this.cancelStatus = { code, details };
  }

  private end(): void {
    if (this.ended) {
      return;
    }
    this.ended = true;
    if (this.cancelStatus) {
      this.listener?.onReceiveStatus?.({ ...this.cancelStatus, metadata: emptyMetadataLike(this.callers) });
      return;
    }
    const trailers = localRejectionTrailers(this.callers);
    if (!this.retryable) {
      trailers.set(PUSHBACK_METADATA_KEY, '-1');
    }
    this.listener?.onReceiveStatus?.({ code: status.UNAVAILABLE, details: this.details, metadata: trailers });
  }

  getPeer(): string {
    return '';
  }
  sendMessageWithContext(context: { callback?: () => void }, _message: unknown): void {
    context.callback?.();
  }
  sendMessage(_message: unknown): void {}
  startRead(): void {}
  halfClose(): void {}
  getAuthContext(): null {
    return null;
  }
}

/**
 * Why a call was rejected, for its status details. Under 'reject-while-throttling' a retry is rejected outright
 * (probability 1) while new calls are rejected with some probability above 0: the message gives that one, which is
 * what the counts make of the backend.
 */
function rejectionReason(
  retry: boolean,
  probability: number,
  requests: number,
  accepts: number,
  rule: AdaptiveThrottleRuleConfig,
): string {
  if (!retry) {
    return `rejection probability ${probability.toFixed(3)}`;
  }
  if (rule.retries !== 'reject-while-throttling') {
    return `a retry or hedge, rejection probability ${probability.toFixed(3)}`;
  }
  const newCalls = rejectionProbability(
    requests,
    accepts,
    rule.k,
    rule.padding,
    rule.maxRejectionProbability,
  );
  return `a retry or hedge, rejected while new calls are rejected with probability ${newCalls.toFixed(3)} (option retries: 'reject-while-throttling')`;
}
