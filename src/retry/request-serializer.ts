/**
 * A request serialized once, not twice. The engine serializes each request message as it is written, before the
 * call commits (its size for the replay buffer, and the snapshot a resend is checked against); grpc-js then
 * serializes the same message again at the bottom of the interceptor chain, with the method definition's own
 * `requestSerialize`, for each attempt it is handed to. For an upload of 1 MiB that second serialization was a
 * fifth more client CPU than a bare client spends.
 *
 * So the method definition's `requestSerialize` is wrapped, once per definition: while the engine hands an attempt
 * a message it has a snapshot of, the wrapper answers grpc-js's serialization of that very object with the
 * snapshot's bytes. Those are the bytes the message had when it was written, which is what grpc-js sends without
 * the interceptor (its writable stream serializes each message as it is written) and what its own retries resend.
 * A message whose serialization threw when it was written is answered alike: the wrapper throws that error again,
 * so the attempt fails as the call does without the interceptor, where the serializer runs once (a serializer that
 * throws only now and then must not pass on a second run). At any other time, and for any other object, the
 * wrapper calls the method's serializer as before; a layer below that holds a message back (an interceptor waiting
 * in `start`) gets it serialized then, as before. A message is
 * armed only for a send to grpc-js's own call (reached directly, or through this package's calls that pass messages
 * on untouched): an interceptor between could change the object in place before grpc-js serializes it, and its
 * change must go out, so there grpc-js serializes the message again.
 *
 * A definition whose serializer is already a wrapper (one shared by calls, or a retry interceptor above this one) is
 * not wrapped again: the wrapper carries its state under a `Symbol.for` key, which the ESM and CJS copies of this
 * package in one process both know. A definition that cannot be written to (frozen) keeps its serializer, and
 * messages are serialized twice there, as before.
 * @internal
 */

import { lastForwardOf } from '../shared/message-passthrough.js';

type Serialize = (message: unknown) => Uint8Array;

/** What a wrapper holds: the serializer it wraps, and the message standing armed, if any. */
interface WrapperState {
  /** The serializer the definition had before it was wrapped. */
  readonly original: Serialize;
  /**
   * A message is armed: a serialization of {@link message} (the object itself) is answered with {@link bytes}, or,
   * when {@link fails}, by throwing {@link error}.
   */
  armed: boolean;
  message: unknown;
  bytes: Uint8Array | undefined;
  fails: boolean;
  error: unknown;
}

/** The engine's view of one method's request serializer. @internal */
export interface RequestSerializer {
  /**
   * The method's own serializer (never the wrapper), called as grpc-js calls it: as a method of the definition, so
   * that a serializer that reads `this` makes the same bytes for the engine as for grpc-js.
   */
  readonly serialize: Serialize;
  /**
   * From now until {@link disarm}, a serialization of `message` (the object itself) gives `bytes`, once, for a send
   * to `call`. Returns false, arming nothing, when the serializer could not be wrapped, another send is armed (a
   * send made from inside another's: it is serialized as usual), or `call` is not grpc-js's own call serializing
   * with this definition, reached directly or through this package's calls that pass messages on untouched: an
   * interceptor between could change the message in place before grpc-js serializes it, and the change must go.
   */
  arm(call: unknown, message: unknown, bytes: Uint8Array): boolean;
  /**
   * {@link arm} for a message whose serialization threw when it was written: grpc-js's serialization of it throws
   * `error` again, rather than running the serializer a second time. Without the interceptor the message is
   * serialized once, and a serializer that throws fails the call with INTERNAL
   * (`Request message serialization failure: ...`) even if it would have succeeded when run again.
   */
  armFailure(call: unknown, message: unknown, error: unknown): boolean;
  /** Ends what {@link arm} or {@link armFailure} began (call it only when it returned true). */
  disarm(): void;
}

/** The key under which a wrapper carries its state (`Symbol.for`: the package's ESM and CJS copies know each other's). */
const STATE: unique symbol = Symbol.for('grpc-retry-hedging.request-serializer');

type Wrapper = Serialize & { [STATE]?: WrapperState };

/**
 * The request serializer of `definition`, its `requestSerialize` wrapped if it is not yet. grpc-js makes a method
 * definition for each call, so this runs once per call: it costs two closures and two small objects (about 20 ns).
 * @internal
 */
export function requestSerializerOf(definition: { requestSerialize: Serialize }): RequestSerializer {
  const current = definition.requestSerialize as Wrapper;
  if (typeof current !== 'function') {
    return new PlainSerializer(current); // not grpc-js's: serializing fails as it would have
  }
  const serialize: Serialize = (message) => current.call(definition, message);
  const kept = current[STATE];
  if (kept !== undefined) {
    // a definition shared by calls, or a retry interceptor above: its own serializer, as the definition's method
    return new WrappedSerializer(kept, definition, (message) => kept.original.call(definition, message));
  }
  const state: WrapperState = {
    original: current,
    armed: false,
    message: undefined,
    bytes: undefined,
    fails: false,
    error: undefined,
  };
  // A function, not an arrow: grpc-js calls it as the definition's method, and `this` goes on to the original.
  const wrapper: Wrapper = function serializeRequest(this: unknown, message: unknown): Uint8Array {
    if (state.armed && message === state.message) {
      const { bytes, fails, error } = state;
      clear(state);
      if (fails) {
        throw error;
      }
      return bytes as Uint8Array;
    }
    return current.call(this, message);
  };
  wrapper[STATE] = state;
  try {
    definition.requestSerialize = wrapper;
  } catch {
    // frozen, or a getter without a setter
  }
  return definition.requestSerialize === wrapper
    ? new WrappedSerializer(state, definition, serialize)
    : new PlainSerializer(serialize);
}

class WrappedSerializer implements RequestSerializer {
  constructor(
    private readonly state: WrapperState,
    /** The definition grpc-js's bottom call must serialize with for the armed bytes to stand for its run. */
    private readonly definition: object,
    readonly serialize: Serialize,
  ) {}

  arm(call: unknown, message: unknown, bytes: Uint8Array): boolean {
    // A message that is bytes itself goes to grpc-js as it is: its serializer (an identity, typically) costs next
    // to nothing, and grpc-js reads its memory when it frames it, a change made before the write's callback
    // included, which a copy of the snapshot would leave out.
    if (ArrayBuffer.isView(message) || !this.armable(call)) {
      return false;
    }
    const state = this.state;
    state.armed = true;
    state.message = message;
    state.bytes = bytes;
    return true;
  }

  armFailure(call: unknown, message: unknown, error: unknown): boolean {
    if (!this.armable(call)) {
      return false;
    }
    const state = this.state;
    state.armed = true;
    state.message = message;
    state.fails = true;
    state.error = error;
    return true;
  }

  disarm(): void {
    clear(this.state);
  }

  private armable(call: unknown): boolean {
    return !this.state.armed && serializesWith(lastForwardOf(call), this.definition);
  }
}

function clear(state: WrapperState): void {
  state.armed = false;
  state.message = undefined;
  state.bytes = undefined;
  state.fails = false;
  state.error = undefined;
}

/**
 * Whether `call` is grpc-js's own call at the bottom of the chain, serializing with `definition` (its
 * `BaseInterceptingCall` keeps the definition as `methodDefinition`, in grpc-js 1.10 to 1.14 at least; a version
 * that renamed it would get its messages serialized twice, as before this was done).
 */
function serializesWith(call: unknown, definition: object): boolean {
  return (
    typeof call === 'object' &&
    call !== null &&
    (call as { methodDefinition?: unknown }).methodDefinition === definition
  );
}

class PlainSerializer implements RequestSerializer {
  constructor(readonly serialize: Serialize) {}

  arm(): boolean {
    return false;
  }

  armFailure(): boolean {
    return false;
  }

  disarm(): void {}
}
