/**
 * OpenTelemetry tracing of retries and hedging, in the shape of gRFC A72 (and A45): one span per call, one child
 * span per attempt, the attempt's context propagated in that attempt's metadata. Fed by the retry interceptor's
 * typed events. Only `grpc-retry-hedging/otel` imports `@opentelemetry/api`; the main entry does not.
 */

import {
  type Attributes,
  type Context,
  context,
  ProxyTracerProvider,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { statusLabel } from '../config/status-codes.js';
import type {
  AttemptEndEvent,
  AttemptStartEvent,
  CallEndEvent,
  CallStartEvent,
  RetryEvent,
  RetryEventListener,
} from '../retry/events.js';
import { parseHostPort } from '../util/host-port.js';
import { checkOptions as checkKeys, checkNumber, describeValue } from '../util/option-checks.js';
import { packageVersion } from '../util/package-version.js';
import { combineListeners } from './combine-listeners.js';
import { DEFAULT_MAX_TRACKED_CALLS } from './max-tracked-calls.js';
import { metadataSetter } from './metadata-carrier.js';
import { serverAddressOf } from './server-address.js';

/** Name of the tracer the spans are created with. */
export const RETRY_TRACER_NAME = 'grpc-retry-hedging';

/**
 * Attribute keys of the spans and span events {@link createRetryTracing} records. `previous-rpc-attempts` and
 * `transparent-retry` are gRFC A72's; `rpc.*` are OpenTelemetry's RPC semantic conventions; the rest are ours.
 */
export const RETRY_SPAN_ATTRIBUTES = Object.freeze({
  /** `"grpc"`, on call and attempt spans. */
  rpcSystem: 'rpc.system',
  /** `pkg.Service`, on call and attempt spans. */
  rpcService: 'rpc.service',
  /** `Method`, on call and attempt spans. */
  rpcMethod: 'rpc.method',
  /**
   * Call span: the host the call is addressed to, from the channel's target (`dns:db.example:443` →
   * `db.example`; a Unix socket's path), as OpenTelemetry's RPC conventions name it. Left out when the target names
   * no one server (a list of addresses, or a target a layer below the interceptor could not say).
   */
  serverAddress: 'server.address',
  /** Call span: the target's port (443 when a DNS or IP target names none, as gRPC's resolvers do). */
  serverPort: 'server.port',
  /** Numeric gRPC status code the call or attempt ended with. */
  statusCode: 'rpc.grpc.status_code',
  /** A72, attempt span: attempts sent before this one (the `grpc-previous-rpc-attempts` value). */
  previousRpcAttempts: 'previous-rpc-attempts',
  /** A72, attempt span: always `false` (grpc-js's transparent retries happen below the interceptor). */
  transparentRetry: 'transparent-retry',
  /** Call span: `retry` or `hedging`. */
  policy: 'grpc.retry.policy',
  /** Call span: the policy's maxAttempts (after clamping). */
  maxAttempts: 'grpc.retry.max_attempts',
  /** Call span, at the end: attempts sent, the original included. */
  attempts: 'grpc.retry.attempts',
  /** Call span, at the end: ms spent with no attempt in flight waiting for the next one (A96 retry_delay). */
  retryDelayMs: 'grpc.retry.retry_delay_ms',
  /** Call span: number of the attempt the call committed to, once it did. */
  committedAttempt: 'grpc.retry.committed_attempt',
  /**
   * Call span, at the end of a call that failed: why no further attempt went (`call-end`'s `reason`:
   * `attempts-exhausted`, `fatal-status`, `throttled`, `deadline`, `committed`, ...), when the engine knows.
   */
  endReason: 'grpc.retry.end_reason',
  /** Attempt span: 1-based attempt number. */
  attemptNumber: 'grpc.attempt.number',
  /** Attempt span: `original`, `retry` or `hedge`. */
  attemptKind: 'grpc.attempt.kind',
  /**
   * Attempt span, at its end: whether the call committed to this attempt (it received headers or a message, ended
   * the call with OK, or was the one in flight carried on when the replay buffer overflowed). A committed attempt
   * that then fails (headers, then `UNAVAILABLE`) stays committed; a call whose attempts all failed before any of
   * that commits to none.
   */
  attemptCommitted: 'grpc.attempt.committed',
  /**
   * Attempt span, at its end: the `host:port` the attempt was sent to, when known (`AttemptEndEvent.peer`); the
   * host part in `network.peer.address` and the port in `network.peer.port`, as OpenTelemetry names them.
   */
  peerAddress: 'network.peer.address',
  /** Attempt span, at its end: the port of the attempt's peer, when known. */
  peerPort: 'network.peer.port',
  /** Attempt span: why the client cancelled it, when it did (see `AttemptCancelReason`). */
  cancelReason: 'grpc.attempt.cancel_reason',
  /** Attempt span, at its end: `true` when it was cancelled because another attempt won (a losing hedge). */
  cancelledByOtherAttempt: 'grpc.attempt.cancelled_by_other_attempt',
  /**
   * Attempt span, at its end: `true` when the call was done with it but the cancel-rate limit let it run to its own
   * end (a losing hedge not cancelled); `grpc.attempt.cancel_reason` then says why the call was done with it.
   */
  leftRunning: 'grpc.attempt.left_running',
  /** Span events: the number of the attempt the event is about (the next one for scheduling and throttling). */
  eventAttempt: 'grpc.retry.attempt',
  /** `Retry scheduled` / `Hedge scheduled`: the delay in ms. */
  eventDelayMs: 'grpc.retry.delay_ms',
  /** `Retry scheduled` / `Hedge scheduled` / `Committed`: why (`backoff`, `pushback`, `retry-info`, ...). */
  eventReason: 'grpc.retry.reason',
  /** `Attempt throttled`: what was refused, `retry` or `hedge`. */
  eventKind: 'grpc.retry.kind',
  /** `Attempt throttled`: the gate's name (`retry-throttle`, a budget's name, ...). */
  eventGate: 'grpc.retry.gate',
  /** `Attempt throttled`: tokens left in the gate, when it reports them. */
  eventTokens: 'grpc.retry.tokens',
} as const);

/** Names of the span events recorded on the call span. */
export const RETRY_SPAN_EVENTS = Object.freeze({
  retryScheduled: 'Retry scheduled',
  hedgeScheduled: 'Hedge scheduled',
  hedgeHeld: 'Hedge held',
  throttled: 'Attempt throttled',
  committed: 'Committed',
  internalError: 'Internal error',
} as const);

/** Options of {@link createRetryTracing}. */
export interface RetryTracingOptions {
  /** Tracer to create the spans with. Not with `tracerProvider` (give one of them). */
  tracer?: Tracer | undefined;
  /**
   * Provider to get the `grpc-retry-hedging` tracer from. Default: the global one, looked up at every call start
   * until one is registered, so the adapter may be created before the SDK is; with none registered a call costs
   * one lookup and nothing else.
   */
  tracerProvider?: TracerProvider | undefined;
  /**
   * Propagator that writes each attempt's span context into that attempt's metadata. Default: the global one
   * (`propagation.inject`), e.g. W3C trace context once an SDK registers it; a no-op when none is registered.
   */
  propagator?: TextMapPropagator | undefined;
  /**
   * Most calls traced at once (default 10 000): every call under a policy counts from its start until its spans
   * end (after its end, while a losing attempt's span waits for that attempt's end). Past it, the oldest call's
   * spans are ended as they are (no status) and no longer followed: raise it when more calls than that are in
   * flight at once (long-lived streams, say), or when events of calls were lost.
   */
  maxTrackedCalls?: number | undefined;
}

/** What {@link createRetryTracing} returns. */
export interface RetryTracing {
  /** Pass as the `onEvent` option of `createRetryInterceptor` (or of one call through `withRetryOptions`). */
  readonly onEvent: RetryEventListener;
  /** A listener that feeds this tracing and then `other` (which still runs if tracing throws). */
  combine(other?: RetryEventListener): RetryEventListener;
  /** Calls with a span still open (the call span, or a losing attempt whose end has not arrived yet). */
  readonly trackedCalls: number;
  /**
   * Stops tracing: ends the spans still open as they are (a call in flight gets no status), forgets the calls,
   * and makes `onEvent` (and listeners from `combine`) trace nothing from then on; a listener given to `combine` is
   * still called. Call it when the client it served is closed, before the SDK shuts down, so that no span is left
   * unended. Idempotent, as `RetryMetrics.close()`.
   */
  close(): void;
}

/** What is known of one traced call. */
interface TracedCall {
  readonly tracer: Tracer;
  readonly span: Span;
  /** The caller's context at call start, with the call span set in it: the parent of every attempt span. */
  readonly context: Context;
  readonly names: SpanNames;
  /** Attempt spans by attempt number - 1; undefined once ended. */
  readonly attempts: (Span | undefined)[];
  openAttempts: number;
  callEnded: boolean;
}

interface SpanNames {
  readonly call: string;
  readonly attempt: string;
  readonly attributes: Attributes;
}

const NOOP_TRACER_PROVIDER: TracerProvider = new ProxyTracerProvider().getDelegate();

function isProxyProvider(provider: TracerProvider): provider is ProxyTracerProvider {
  return typeof (provider as Partial<ProxyTracerProvider>).getDelegate === 'function';
}

function checkOptions(options: RetryTracingOptions): void {
  const { tracer, tracerProvider, propagator, maxTrackedCalls } = checkKeys(
    'createRetryTracing: options',
    options,
    ['tracer', 'tracerProvider', 'propagator', 'maxTrackedCalls'],
  ) as RetryTracingOptions;
  if (tracer !== undefined && typeof tracer?.startSpan !== 'function') {
    throw new TypeError(
      `createRetryTracing: options.tracer must be an OpenTelemetry Tracer, got ${describeValue(tracer)}`,
    );
  }
  if (tracerProvider !== undefined && typeof tracerProvider?.getTracer !== 'function') {
    throw new TypeError(
      `createRetryTracing: options.tracerProvider must be an OpenTelemetry TracerProvider, got ${describeValue(tracerProvider)}`,
    );
  }
  if (tracer !== undefined && tracerProvider !== undefined) {
    throw new TypeError(
      'createRetryTracing: options.tracer and options.tracerProvider are both given; give one: the tracer to create spans with, or the provider to get it from',
    );
  }
  if (propagator !== undefined && typeof propagator?.inject !== 'function') {
    throw new TypeError(
      `createRetryTracing: options.propagator must be an OpenTelemetry TextMapPropagator, got ${describeValue(propagator)}`,
    );
  }
  checkNumber('createRetryTracing: options', 'maxTrackedCalls', maxTrackedCalls, undefined, {
    min: 1,
    integer: true,
  });
}

/** `/pkg.Service/Method` → span names `Sent.pkg.Service.Method` / `Attempt.pkg.Service.Method` (A72). */
function spanNamesOf(method: string): SpanNames {
  const path = method.startsWith('/') ? method.slice(1) : method;
  const slash = path.lastIndexOf('/');
  const service = slash >= 0 ? path.slice(0, slash) : '';
  const name = slash >= 0 ? path.slice(slash + 1) : path;
  const dotted = path.replace(/\//g, '.');
  return {
    call: `Sent.${dotted}`,
    attempt: `Attempt.${dotted}`,
    attributes: Object.freeze({
      [RETRY_SPAN_ATTRIBUTES.rpcSystem]: 'grpc',
      [RETRY_SPAN_ATTRIBUTES.rpcService]: service,
      [RETRY_SPAN_ATTRIBUTES.rpcMethod]: name,
    }),
  };
}

/** A72: OK is status OK; anything else is ERROR, described as `CODE_NAME, details`. */
function setRpcStatus(span: Span, code: number, details: string): void {
  span.setAttribute(RETRY_SPAN_ATTRIBUTES.statusCode, code);
  if (code === 0) {
    span.setStatus({ code: SpanStatusCode.OK });
  } else {
    const name = statusLabel(code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: details ? `${name}, ${details}` : name });
  }
}

/**
 * Traces every call under a retry or hedging policy, from the retry interceptor's events, in the shape of gRFC
 * A72:
 *
 * - a call span `Sent.<pkg.Service>.<Method>` (kind CLIENT), child of the context active when the application
 *   made the call (with @opentelemetry/instrumentation-grpc, its `grpc.<pkg.Service>/<Method>` span);
 * - one child span per attempt, `Attempt.<pkg.Service>.<Method>`, with `previous-rpc-attempts`,
 *   `transparent-retry` (false), the attempt number and kind (`original`, `retry`, `hedge`), its gRPC status,
 *   whether the call committed to it, and why the client cancelled it (a losing hedge:
 *   `grpc.attempt.cancelled_by_other_attempt`). A losing hedge's span keeps status UNSET: it did not fail;
 * - each attempt's span context injected into that attempt's metadata with the registered propagator, so that
 *   a server span is a child of the attempt that reached it;
 * - span events on the call span: `Retry scheduled` and `Hedge scheduled` (delay, reason: `backoff`, `pushback`,
 *   `retry-info`, `hedging-delay`, `adaptive-delay`, ...), `Attempt throttled` (gate, tokens), `Committed`.
 *
 * With no tracer provider registered, a call costs one provider lookup and nothing else.
 *
 * ```ts
 * const tracing = createRetryTracing();
 * const interceptor = createRetryInterceptor(config, { onEvent: tracing.onEvent });
 * ```
 */
export function createRetryTracing(options: RetryTracingOptions = {}): RetryTracing {
  checkOptions(options);
  const fixedTracer =
    options.tracer ??
    (options.tracerProvider
      ? options.tracerProvider.getTracer(RETRY_TRACER_NAME, packageVersion())
      : undefined);
  const propagator = options.propagator;
  const maxTracked = options.maxTrackedCalls ?? DEFAULT_MAX_TRACKED_CALLS;
  const calls = new Map<number, TracedCall>();
  let lastProvider: TracerProvider | undefined;
  let lastTracer: Tracer | undefined;

  /** The tracer to use for a call starting now; undefined when no provider is registered (nothing to do). */
  const currentTracer = (): Tracer | undefined => {
    if (fixedTracer) {
      return fixedTracer;
    }
    const global = trace.getTracerProvider();
    const provider = isProxyProvider(global) ? global.getDelegate() : global;
    if (provider === NOOP_TRACER_PROVIDER) {
      return undefined;
    }
    if (provider !== lastProvider) {
      // Taken as the provider only once it gave a tracer: one whose getTracer threw is asked again next call.
      lastTracer = provider.getTracer(RETRY_TRACER_NAME, packageVersion());
      lastProvider = provider;
    }
    return lastTracer;
  };

  // What the call span takes from its method and its target, each worked out once per method or target (for the
  // first 1,000 of them: the rest are worked out per call).
  const namesOf = keptForFirst(1_000, spanNamesOf);
  const serverOf = keptForFirst(
    1_000,
    (target: string): Attributes => Object.freeze(serverAttributesOf(target)),
  );

  const forget = (callId: number, traced: TracedCall): void => {
    calls.delete(callId);
    if (!traced.callEnded) {
      traced.span.end();
    }
    for (const span of traced.attempts) {
      span?.end();
    }
  };

  const onCallStart = (event: CallStartEvent): void => {
    const tracer = currentTracer();
    if (tracer === undefined) {
      return;
    }
    const stale = calls.get(event.callId);
    if (stale !== undefined) {
      forget(event.callId, stale); // ids repeat only across copies of this package
    }
    if (calls.size >= maxTracked) {
      const oldest = calls.entries().next();
      if (!oldest.done) {
        forget(oldest.value[0], oldest.value[1]);
      }
    }
    const names = namesOf(event.method);
    const parent = context.active();
    const span = tracer.startSpan(
      names.call,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          ...names.attributes,
          ...serverOf(event.target),
          [RETRY_SPAN_ATTRIBUTES.policy]: event.policy,
          [RETRY_SPAN_ATTRIBUTES.maxAttempts]: event.maxAttempts,
        },
      },
      parent,
    );
    calls.set(event.callId, {
      tracer,
      span,
      context: trace.setSpan(parent, span),
      names,
      attempts: [],
      openAttempts: 0,
      callEnded: false,
    });
  };

  const onAttemptStart = (event: AttemptStartEvent, traced: TracedCall): void => {
    const span = traced.tracer.startSpan(
      traced.names.attempt,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          ...traced.names.attributes,
          [RETRY_SPAN_ATTRIBUTES.previousRpcAttempts]: event.previousRpcAttempts,
          [RETRY_SPAN_ATTRIBUTES.transparentRetry]: false,
          [RETRY_SPAN_ATTRIBUTES.attemptNumber]: event.attempt,
          [RETRY_SPAN_ATTRIBUTES.attemptKind]: event.kind,
        },
      },
      traced.context,
    );
    const previous = traced.attempts[event.attempt - 1];
    if (previous !== undefined) {
      previous.end();
    } else {
      traced.openAttempts += 1;
    }
    traced.attempts[event.attempt - 1] = span;
    const attemptContext = trace.setSpan(traced.context, span);
    if (propagator) {
      propagator.inject(attemptContext, event.metadata, metadataSetter);
    } else {
      propagation.inject(attemptContext, event.metadata, metadataSetter);
    }
  };

  const onAttemptEnd = (event: AttemptEndEvent, traced: TracedCall): void => {
    const span = traced.attempts[event.attempt - 1];
    if (span === undefined) {
      return;
    }
    traced.attempts[event.attempt - 1] = undefined;
    traced.openAttempts -= 1;
    const reason = event.cancelReason;
    const committed = event.committed;
    // A loser the cancel-rate limit let run was not cancelled: it ran to its own end, with its own status.
    const lostAndCancelled = reason === 'other-attempt-committed' && event.leftRunning !== true;
    span.setAttribute(RETRY_SPAN_ATTRIBUTES.attemptCommitted, committed);
    span.setAttribute(RETRY_SPAN_ATTRIBUTES.cancelledByOtherAttempt, lostAndCancelled);
    if (event.leftRunning === true) {
      span.setAttribute(RETRY_SPAN_ATTRIBUTES.leftRunning, true);
    }
    if (reason !== undefined) {
      span.setAttribute(RETRY_SPAN_ATTRIBUTES.cancelReason, reason);
    }
    if (event.peer !== undefined) {
      setPeer(span, event.peer);
    }
    if (lostAndCancelled) {
      span.setAttribute(RETRY_SPAN_ATTRIBUTES.statusCode, event.code);
    } else {
      setRpcStatus(span, event.code, event.details);
    }
    span.end();
  };

  const onCallEnd = (event: CallEndEvent, traced: TracedCall): void => {
    const span = traced.span;
    span.setAttribute(RETRY_SPAN_ATTRIBUTES.attempts, event.attempts);
    span.setAttribute(RETRY_SPAN_ATTRIBUTES.retryDelayMs, event.retryDelayMs);
    if (event.reason !== undefined) {
      span.setAttribute(RETRY_SPAN_ATTRIBUTES.endReason, event.reason);
    }
    setRpcStatus(span, event.code, event.details);
    traced.callEnded = true; // before end(): a span processor that throws there must not keep the call tracked
    span.end();
  };

  let closed = false;
  const onEvent: RetryEventListener = (event: RetryEvent) => {
    if (closed) {
      return;
    }
    if (event.type === 'call-start') {
      onCallStart(event);
      return;
    }
    const traced = calls.get(event.callId);
    if (traced === undefined) {
      return;
    }
    try {
      dispatch(event, traced);
    } finally {
      // Losing attempts may end after the call: the call is forgotten once its last span has ended (also when a
      // span processor threw from a span's end).
      if (traced.callEnded && traced.openAttempts === 0) {
        calls.delete(event.callId);
      }
    }
  };

  const dispatch = (event: Exclude<RetryEvent, { type: 'call-start' }>, traced: TracedCall): void => {
    switch (event.type) {
      case 'attempt-start':
        onAttemptStart(event, traced);
        break;
      case 'attempt-end':
        onAttemptEnd(event, traced);
        break;
      case 'retry-scheduled':
      case 'hedge-scheduled':
        traced.span.addEvent(
          event.type === 'retry-scheduled'
            ? RETRY_SPAN_EVENTS.retryScheduled
            : RETRY_SPAN_EVENTS.hedgeScheduled,
          {
            [RETRY_SPAN_ATTRIBUTES.eventAttempt]: event.attempt,
            [RETRY_SPAN_ATTRIBUTES.eventDelayMs]: event.delayMs,
            [RETRY_SPAN_ATTRIBUTES.eventReason]: event.reason,
          },
        );
        break;
      case 'hedge-held':
        traced.span.addEvent(RETRY_SPAN_EVENTS.hedgeHeld, {
          [RETRY_SPAN_ATTRIBUTES.eventAttempt]: event.attempt,
        });
        break;
      case 'throttled': {
        const attributes: Attributes = {
          [RETRY_SPAN_ATTRIBUTES.eventAttempt]: event.attempt,
          [RETRY_SPAN_ATTRIBUTES.eventKind]: event.kind,
          [RETRY_SPAN_ATTRIBUTES.eventGate]: event.gate,
        };
        if (!Number.isNaN(event.tokens)) {
          attributes[RETRY_SPAN_ATTRIBUTES.eventTokens] = event.tokens;
        }
        traced.span.addEvent(RETRY_SPAN_EVENTS.throttled, attributes);
        break;
      }
      case 'committed':
        traced.span.setAttribute(RETRY_SPAN_ATTRIBUTES.committedAttempt, event.attempt);
        traced.span.addEvent(RETRY_SPAN_EVENTS.committed, {
          [RETRY_SPAN_ATTRIBUTES.eventAttempt]: event.attempt,
          [RETRY_SPAN_ATTRIBUTES.eventReason]: event.reason,
        });
        break;
      case 'internal-error':
        traced.span.addEvent(RETRY_SPAN_EVENTS.internalError, { 'exception.message': event.message });
        break;
      case 'call-end':
        onCallEnd(event, traced);
        break;
      // Carried by other events: a hedge's attempt-start (kind `hedge`), a loser's attempt-end (`leftRunning`).
      case 'hedge-sent':
      case 'attempt-left-running':
        break;
      default:
        // A new event type is a compile error here until it is traced or listed above.
        untracedEvent(event);
    }
  };

  return {
    onEvent,
    combine(other?: RetryEventListener): RetryEventListener {
      return combineListeners(onEvent, other, 'RetryTracing');
    },
    get trackedCalls() {
      return calls.size;
    },
    close(): void {
      closed = true;
      for (const [callId, traced] of [...calls]) {
        forget(callId, traced);
      }
    },
  };
}

/** `server.address` and `server.port` of the call span, for the call's target (none when it names no server). */
function serverAttributesOf(target: string): Attributes {
  const server = serverAddressOf(target);
  if (server === undefined) {
    return {};
  }
  return server.port === undefined
    ? { [RETRY_SPAN_ATTRIBUTES.serverAddress]: server.address }
    : {
        [RETRY_SPAN_ATTRIBUTES.serverAddress]: server.address,
        [RETRY_SPAN_ATTRIBUTES.serverPort]: server.port,
      };
}

/**
 * The attempt's peer (`127.0.0.1:50051`, `[::1]:50051`, or a unix socket's path: what `servedPeer` lets through) as
 * OpenTelemetry's network.peer.address and network.peer.port, read as the call span's server is.
 */
function setPeer(span: Span, peer: string): void {
  const { address, port } = parseHostPort(peer, undefined);
  span.setAttribute(RETRY_SPAN_ATTRIBUTES.peerAddress, address);
  if (port !== undefined) {
    span.setAttribute(RETRY_SPAN_ATTRIBUTES.peerPort, port);
  }
}

/** `compute`, its results kept for the first `limit` keys it is asked of. */
function keptForFirst<T>(limit: number, compute: (key: string) => T): (key: string) => T {
  const kept = new Map<string, T>();
  return (key) => {
    let value = kept.get(key);
    if (value === undefined) {
      value = compute(key);
      if (kept.size < limit) {
        kept.set(key, value);
      }
    }
    return value;
  };
}

/** Takes only `never`: a `RetryEvent` type `dispatch` does not name is a compile error there. */
function untracedEvent(_event: never): void {}
