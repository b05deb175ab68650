/**
 * Engine tests without a network: the retry interceptor driven under a FakeClock, with a scripted next call whose
 * attempts the test answers by hand.
 */
import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  status as Status,
  type StatusObject,
} from '@grpc/grpc-js';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import { CancelRateLimiter } from '../../src/hedging/cancel-rate-limiter.js';
import { turnGuard } from '../../src/retry/event-loop-turn.js';
import type { RetryEvent } from '../../src/retry/events.js';
import type { RetryInterceptorOptions } from '../../src/retry/interceptor-options.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import type { InterceptingCallInterface, MessageContext } from '../../src/shared/grpc-types.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import { oneEntryConfig } from './service-configs.js';

export const METHOD = '/test.Svc/Do';
export const T0 = 1_700_000_000_000;

/**
 * Adaptive hedging whose budget holds exactly what the calls paid for (maxExtraLoad 0.5, no floor, no room for
 * chance): each call started deposits half a hedge, so the budget's refusals are counted in whole calls.
 */
export function depositsOnlyHedging(clock: FakeClock): AdaptiveHedging {
  return new AdaptiveHedging({ clock, budget: { minPerSecond: 0, chanceSd: 0 }, maxExtraLoad: 0.5 });
}

/** A cancel-rate limiter whose burst is spent: the next loser it is asked about is left running. */
export function spentLimiter(clock: FakeClock): CancelRateLimiter {
  const limiter = new CancelRateLimiter({ clock, burst: 1, ratePerSecond: 0.001, loserCapMs: 5000 });
  if (!limiter.tryCancel()) {
    throw new Error('spentLimiter: a fresh limiter refused its one cancel');
  }
  return limiter;
}

/** One attempt, as the scripted next call made it: records what the engine did and lets the test answer. */
export class FakeAttempt implements InterceptingCallInterface {
  metadata: Metadata | undefined;
  listener: Partial<InterceptingListener> | undefined;
  readonly messages: unknown[] = [];
  halfClosed = false;
  cancelled: { code: number; details: string } | undefined;
  reads = 0;
  ended = false;
  /** What `getPeer()` answers: the connection the attempt is on (default `peer-<index>`). */
  peer: string;
  /** Complete writes at once (default); when false, completions wait in `pendingWrites`. */
  autoCompleteWrites = true;
  readonly pendingWrites: (() => void)[] = [];

  constructor(
    readonly index: number,
    readonly options: InterceptorOptions,
  ) {
    this.peer = `peer-${index}`;
  }

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.metadata = metadata;
    this.listener = listener;
  }
  sendMessageWithContext(context: MessageContext, message: unknown): void {
    this.messages.push(message);
    if (!context.callback) return;
    if (this.autoCompleteWrites) context.callback();
    else this.pendingWrites.push(context.callback);
  }
  sendMessage(message: unknown): void {
    this.sendMessageWithContext({}, message);
  }
  halfClose(): void {
    this.halfClosed = true;
  }
  startRead(): void {
    this.reads += 1;
  }
  cancelWithStatus(code: number, details: string): void {
    if (this.cancelled) return;
    this.cancelled = { code, details };
    // grpc-js reports the cancel to the attempt's listener as its status, later.
    queueMicrotask(() => this.status(code, details));
  }
  getPeer(): string {
    return this.peer;
  }
  getAuthContext(): null {
    return null;
  }

  get started(): boolean {
    return this.listener !== undefined;
  }
  /** The value of a request header this attempt sent. */
  header(key: string): string | undefined {
    const value = this.metadata?.get(key)[0];
    return value === undefined ? undefined : String(value);
  }
  headers(md: Metadata = new Metadata()): void {
    this.listener?.onReceiveMetadata?.(md);
  }
  message(message: unknown): void {
    this.listener?.onReceiveMessage?.(message);
  }
  /** Ends the attempt; `trailers` given as a Metadata object are handed on as they are (grpc-js may share one). */
  status(code: number, details = '', trailers: Record<string, string> | Metadata = {}): void {
    if (this.ended) return;
    this.ended = true;
    const metadata = trailers instanceof Metadata ? trailers : new Metadata();
    if (!(trailers instanceof Metadata)) for (const [k, v] of Object.entries(trailers)) metadata.set(k, v);
    this.listener?.onReceiveStatus?.({ code, details, metadata });
  }
  fail(code: number = Status.UNAVAILABLE, trailers: Record<string, string> = {}): void {
    this.status(code, `attempt ${this.index + 1} failed`, trailers);
  }
  succeed(response: unknown = 'ok'): void {
    this.headers();
    this.message(response);
    this.status(Status.OK, 'OK');
  }
}

export type CallType = 'unary' | 'server-stream' | 'client-stream' | 'bidi';

export interface EngineCallOptions {
  type?: CallType;
  /** Deadline, in ms from the start (fake time). */
  deadlineMs?: number | undefined;
  interceptor?: RetryInterceptorOptions;
  /**
   * Keep production's rule that an attempt cancelled in the event-loop turn it was made in is cancelled on the next
   * turn (default false: the scripted attempts are cancelled at once).
   */
  turnGuard?: boolean;
  metadata?: Metadata;
  /** Start the call (default true); when false, call `start()` yourself. */
  start?: boolean;
  /** The request message `start()` sends for a unary or server-streaming call (default 'request'). */
  request?: unknown;
  clock?: FakeClock;
  /** No event listener at all (the engine then builds no events); `events` stays empty. */
  unobserved?: boolean;
  /** More call options (a Date `deadline`, `parent`, `propagate_flags`, ...), over the harness's own. */
  callOptions?: Record<string, unknown>;
  /** The connection attempt `index` (0-based) is on, as its `getPeer()` says (default `peer-<index>`). */
  peer?: (index: number) => string;
  /** Runs before the scripted next call makes attempt `index` (0-based); a throw is the channel refusing it. */
  beforeAttempt?: (index: number) => void;
}

export interface EngineCall {
  readonly clock: FakeClock;
  readonly call: InterceptingCallInterface;
  readonly attempts: FakeAttempt[];
  readonly events: RetryEvent[];
  /** What reached the application. */
  readonly received: { headers: Metadata[]; messages: unknown[]; statuses: StatusObject[] };
  start(): void;
  /** The attempt at index i (0-based); throws when it was not made. */
  attempt(i: number): FakeAttempt;
  /** Let queued microtasks and next ticks run (cancel reports, deferred statuses). */
  settle(): Promise<void>;
  /** The one status the application got; throws unless there is exactly one. */
  readonly status: StatusObject;
  eventTypes(): string[];
}

const serialize = (message: unknown): Buffer =>
  Buffer.isBuffer(message) ? message : Buffer.from(String(message ?? ''));

export function engineCall(config: object, opts: EngineCallOptions = {}): EngineCall {
  // Scripted attempts, all in one turn: a cancel reaches them at once (src/retry/event-loop-turn.ts).
  turnGuard.enabled = opts.turnGuard ?? false;
  const clock = opts.clock ?? new FakeClock(T0);
  const events: RetryEvent[] = [];
  // The test's own listener, if any, runs after the event is recorded.
  const own = [opts.interceptor?.onEvent ?? []].flat();
  const interceptorOptions: RetryInterceptorOptions = {
    clock,
    random: () => 0.5,
    ...opts.interceptor,
    onEvent: opts.unobserved
      ? undefined
      : (e) => {
          events.push(e);
          for (const listener of own) listener(e);
        },
  };
  const interceptor = createRetryInterceptor(config, interceptorOptions);
  const type = opts.type ?? 'unary';
  const options = {
    method_definition: {
      path: METHOD,
      requestStream: type === 'client-stream' || type === 'bidi',
      responseStream: type === 'server-stream' || type === 'bidi',
      requestSerialize: serialize,
      responseDeserialize: (b: Buffer) => b.toString(),
    },
    deadline: opts.deadlineMs === undefined ? undefined : clock.now() + opts.deadlineMs,
    ...opts.callOptions,
  } as unknown as InterceptorOptions;
  const attempts: FakeAttempt[] = [];
  const nextCall = (o: InterceptorOptions) => {
    opts.beforeAttempt?.(attempts.length);
    const attempt = new FakeAttempt(attempts.length, o);
    if (opts.peer) attempt.peer = opts.peer(attempt.index);
    attempts.push(attempt);
    return attempt;
  };
  const call = interceptor(options, nextCall as never) as unknown as InterceptingCallInterface;
  const received = { headers: [] as Metadata[], messages: [] as unknown[], statuses: [] as StatusObject[] };
  const listener: InterceptingListener = {
    onReceiveMetadata: (md) => received.headers.push(md),
    onReceiveMessage: (m) => received.messages.push(m),
    onReceiveStatus: (s) => received.statuses.push(s),
  };
  const harness: EngineCall = {
    clock,
    call,
    attempts,
    events,
    received,
    start() {
      call.start(opts.metadata ?? new Metadata(), listener);
      if (type === 'unary' || type === 'server-stream') {
        call.sendMessageWithContext({}, 'request' in opts ? opts.request : 'request');
        call.halfClose();
      }
      call.startRead();
    },
    attempt(i) {
      const a = attempts[i];
      if (!a) throw new Error(`attempt ${i + 1} was not made (${attempts.length} made)`);
      return a;
    },
    async settle() {
      for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    },
    get status() {
      if (received.statuses.length !== 1) {
        throw new Error(`expected exactly one status, got ${received.statuses.length}`);
      }
      return received.statuses[0] as StatusObject;
    },
    eventTypes: () => events.map((e) => e.type),
  };
  if (opts.start !== false) harness.start();
  return harness;
}

export function eventsOfType<T extends RetryEvent['type']>(
  events: readonly RetryEvent[],
  type: T,
): Extract<RetryEvent, { type: T }>[] {
  return events.filter((e): e is Extract<RetryEvent, { type: T }> => e.type === type);
}

/** One retry policy for the test service; `entry` adds fields to its methodConfig entry (timeout, ...). */
export function retryPolicy(
  policy: Record<string, unknown> = {},
  entry: Record<string, unknown> = {},
): object {
  const defaults = { maxAttempts: 4, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2 };
  return oneEntryConfig(
    'test.Svc',
    { retryPolicy: { ...defaults, retryableStatusCodes: ['UNAVAILABLE'], ...policy } },
    entry,
  );
}

/** One hedging policy for the test service; `entry` adds fields to its methodConfig entry. */
export function hedgingPolicy(
  policy: Record<string, unknown> = {},
  entry: Record<string, unknown> = {},
): object {
  const defaults = { maxAttempts: 3, hedgingDelay: '0.1s', nonFatalStatusCodes: ['UNAVAILABLE'] };
  return oneEntryConfig('test.Svc', { hedgingPolicy: { ...defaults, ...policy } }, entry);
}

export { Status };
