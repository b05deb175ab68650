/**
 * `interceptChannel`: grpc-js client interceptors for clients that are built on a `Channel` the application hands
 * over, such as nice-grpc's `createClient(definition, channel)`, which gives its grpc-js client no interceptors.
 */

import {
  type CallCredentials,
  type ChannelInterface,
  connectivityState,
  type Deadline,
  type InterceptingListener,
  type Interceptor,
  type InterceptorOptions,
  type Metadata,
  type MethodDefinition,
  type NextCall,
  type status,
} from '@grpc/grpc-js';
import { markChannelLevel } from '../shared/channel-level.js';
import type { InterceptingCallInterface as AttemptCall, MessageContext } from '../shared/grpc-types.js';
import { describeValue } from '../util/option-checks.js';
import { UnstartableCall } from './unstartable-call.js';

/** A call as a grpc-js channel creates it (grpc-js does not export the type by name). */
type ChannelCall = ReturnType<ChannelInterface['createCall']>;

const identity = (message: Buffer): Buffer => message;

/**
 * A channel that runs every call it creates through `interceptors` (the first is the outermost, as in a grpc-js
 * client's `interceptors` option), then through `channel`. Pass it wherever a grpc-js `Channel` is taken, e.g.
 * nice-grpc's `createClient(definition, interceptChannel(createChannel(address), [interceptor]))`.
 *
 * At the channel, calls are already serialized and their kind is unknown, so the interceptors see:
 * - messages as `Buffer`s (the retry interceptor's replay buffer charges their exact size; an interceptor that
 *   reads or edits request fields, such as the request-id interceptor's `field` mode, cannot work here);
 * - a `method_definition` with the path, identity (de)serializers, and `requestStream`/`responseStream` both true
 *   (every call is treated as a stream: a unary request is half-closed once its one write has completed);
 * - no per-call options beyond what the channel is given: the deadline, host, parent call and per-call
 *   credentials (grpc-js's `Channel.createCall` is given these, not the call options). So options that only
 *   reach a client's own interceptors are not seen, whichever client makes the call: `withRetryOptions(...)`
 *   given to a call is dropped silently, and the call gets the interceptor's own policy. For calls that need
 *   their own options, put the interceptor in the client's `interceptors` where the client takes them (a
 *   grpc-js client, ts-proto, protobuf-ts, NestJS); with nice-grpc, use another client on another
 *   `interceptChannel` with the policy those calls need; with google-gax, add it to each call with the client
 *   option `'grpc.callInvocationTransformer'` (docs/integrations.md).
 *   An attempt's channel call gets the parent call only if the interceptors left `parent` in the options they
 *   hand down, with the propagate flags they hand down (the retry interceptor keeps the parent and its flags but
 *   `propagate.CANCELLATION`: it follows the parent's cancellation once per call, and gives each attempt the
 *   call's deadline, the parent's when earlier).
 *
 * The returned channel inherits everything but `createCall` from `channel` (so it is still an instance of the
 * channel's class); closing either closes both.
 * @throws TypeError when `channel` is not a grpc-js channel or an interceptor is not a function.
 */
export function interceptChannel<C extends ChannelInterface>(
  channel: C,
  interceptors: readonly Interceptor[],
): C {
  if (typeof channel !== 'object' || channel === null || typeof channel.createCall !== 'function') {
    throw new TypeError(
      `interceptChannel: \`channel\` must be a grpc-js Channel (with a createCall method), got ${describeValue(channel)}`,
    );
  }
  if (!Array.isArray(interceptors)) {
    throw new TypeError(
      `interceptChannel: \`interceptors\` must be an array of grpc-js interceptors, got ${describeValue(interceptors)}`,
    );
  }
  interceptors.forEach((interceptor, index) => {
    if (typeof interceptor !== 'function') {
      throw new TypeError(
        `interceptChannel: interceptors[${index}] is not a function (got ${typeof interceptor})`,
      );
    }
  });
  const chain = [...interceptors];
  let callNumber = 0;
  const createCall: ChannelInterface['createCall'] = (method, deadline, host, parentCall, propagateFlags) => {
    if (channel.getConnectivityState(false) === connectivityState.SHUTDOWN) {
      // A call on a closed channel throws when it is made, as grpc-js makes it throw (its own error).
      return channel.createCall(method, deadline, host, parentCall, propagateFlags);
    }
    callNumber += 1;
    return new InterceptedCall(
      channel,
      chain,
      callNumber,
      method,
      deadline,
      host,
      parentCall,
      propagateFlags,
    );
  };
  // Everything but createCall is the channel's own: an object inheriting from it is still a grpc-js Channel (as
  // nice-grpc's types require) and shares its state, so closing either closes both.
  const intercepted: C = Object.create(channel);
  Object.defineProperty(intercepted, 'createCall', { value: createCall });
  return intercepted;
}

/**
 * One call through the chain. The chain is built on the first operation, not at creation, because grpc-js sets a
 * call's per-call credentials right after creating it and the interceptors must see them in their options.
 */
class InterceptedCall implements ChannelCall {
  private credentials: CallCredentials | undefined;
  private top: AttemptCall | undefined;

  constructor(
    private readonly channel: ChannelInterface,
    private readonly interceptors: readonly Interceptor[],
    private readonly callNumber: number,
    private readonly method: string,
    private readonly deadline: Deadline,
    private readonly host: string | null | undefined,
    private readonly parentCall: Parameters<ChannelInterface['createCall']>[3],
    private readonly propagateFlags: number | null | undefined,
  ) {}

  private chain(): AttemptCall {
    if (this.top) {
      return this.top;
    }
    const definition: MethodDefinition<Buffer, Buffer> = markChannelLevel({
      path: this.method,
      requestStream: true,
      responseStream: true,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    });
    const options: InterceptorOptions = {
      method_definition: definition,
      deadline: this.deadline,
      ...(this.host ? { host: this.host } : {}),
      // grpc-js types a channel call's parent more loosely than the interceptor option; it is the same object.
      ...(this.parentCall ? { parent: this.parentCall as NonNullable<InterceptorOptions['parent']> } : {}),
      ...(this.propagateFlags !== null && this.propagateFlags !== undefined
        ? { propagate_flags: this.propagateFlags }
        : {}),
      ...(this.credentials ? { credentials: this.credentials } : {}),
    };
    // Innermost: a new call on the channel for every attempt, with the options the interceptors hand down.
    let next: NextCall = (attemptOptions) => this.channelCall(attemptOptions);
    for (const interceptor of [...this.interceptors].reverse()) {
      const inner = next;
      next = (callOptions) => interceptor(callOptions, inner);
    }
    try {
      this.top = next(options);
    } catch (error) {
      // The channel was closed since the call was made, or an interceptor threw: the call ends with a status.
      this.top = new UnstartableCall(error);
    }
    return this.top;
  }

  private channelCall(options: InterceptorOptions): AttemptCall {
    const call = this.channel.createCall(
      this.method,
      options.deadline ?? this.deadline,
      options.host ?? this.host,
      // The parent only when the chain left it in the options: an interceptor that took it out must not have it
      // put back on every attempt. (The retry interceptor leaves it with the cancellation flag cleared, so that
      // grpc-js adds no 'cancelled' listener to the parent per attempt: it listens itself, once per call.)
      'parent' in options ? (options.parent ?? null) : null,
      options.propagate_flags ?? this.propagateFlags,
    );
    if (options.credentials) {
      call.setCredentials(options.credentials);
    }
    return {
      // The listener may be a class instance: call its methods on it rather than copy them off it.
      start: (metadata: Metadata, listener?: Partial<InterceptingListener>) =>
        call.start(metadata, {
          onReceiveMetadata: (md) => listener?.onReceiveMetadata?.(md),
          onReceiveMessage: (message) => listener?.onReceiveMessage?.(message),
          onReceiveStatus: (status) => listener?.onReceiveStatus?.(status),
        }),
      sendMessageWithContext: (context: MessageContext, message: Buffer) =>
        call.sendMessageWithContext(context, message),
      sendMessage: (message: Buffer) => call.sendMessageWithContext({}, message),
      startRead: () => call.startRead(),
      halfClose: () => call.halfClose(),
      cancelWithStatus: (code: status, details: string) => call.cancelWithStatus(code, details),
      getPeer: () => call.getPeer(),
      getAuthContext: () => call.getAuthContext?.() ?? null,
    };
  }

  start(metadata: Metadata, listener: InterceptingListener): void {
    this.chain().start(metadata, listener);
  }

  sendMessageWithContext(context: MessageContext, message: Buffer): void {
    this.chain().sendMessageWithContext(context, message);
  }

  startRead(): void {
    this.chain().startRead();
  }

  halfClose(): void {
    this.chain().halfClose();
  }

  cancelWithStatus(code: status, details: string): void {
    this.chain().cancelWithStatus(code, details);
  }

  /** Before the call starts, the channel's target, as a grpc-js call answers. */
  getPeer(): string {
    return this.top?.getPeer() ?? this.channel.getTarget();
  }

  getAuthContext(): ReturnType<ChannelCall['getAuthContext']> {
    return this.top?.getAuthContext() ?? null;
  }

  getCallNumber(): number {
    return this.callNumber;
  }

  setCredentials(credentials: CallCredentials): void {
    this.credentials = credentials;
  }
}
