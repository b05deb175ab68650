import type { InterceptingCallInterface, MessageContext } from '../shared/grpc-types.js';
import type { BufferPool } from './buffer-pool.js';
import type { RequestSerializer } from './request-serializer.js';

/** Every message goes on the wire behind a 5-byte gRPC frame header; an empty message is never free. */
export const FRAME_HEADER_BYTES = 5;

/**
 * What one buffered message is charged beyond its serialized size and frame: the fixed heap cost of the request
 * object the buffer keeps alive (a small JS object with its header and property slots takes about this much on its
 * own). The buffer's own bookkeeping is a slot in an array, about 3 B per message (measured over 200,000 buffered
 * messages; the previous engine's per-message records took about 59 B). Charging it makes the byte limits bound
 * the heap that buffering really takes, even for a stream of tiny or empty messages.
 */
export const ENTRY_OVERHEAD_BYTES = 48;

/**
 * Whether a further attempt can resend what the application sent: `fits`; `full`, the limits do not hold it;
 * `changed`, a message is no longer what it was when written (the application changed the object after its write
 * callback, or a single request after making the call), so a resend would carry other data; `unserializable`, a
 * message cannot be serialized, so every attempt fails alike.
 * @internal
 */
export type ReplayVerdict = 'fits' | 'full' | 'changed' | 'unserializable';

/**
 * The messages the application sent that some attempt may still need, in order, with the bytes they hold in the
 * shared {@link BufferPool}. Messages have absolute indexes (0, 1, ...); each attempt keeps its own position.
 *
 * Before the call commits, every message is accounted for; a message that does not fit is still kept (so the
 * attempt that commits can send it) but `append` says the buffer overflowed. Once committed, accounting stops and
 * the buffer only holds what the committed attempt has not written yet.
 *
 * The buffer keeps the application's message objects, as grpc-js's interceptor API passes them down (only the
 * bottom of the chain serializes). Each message is also serialized as it comes, before the commit: that is its
 * size, the snapshot a resend is checked against (see {@link replayable} and {@link handOver}), and the bytes
 * grpc-js sends for it, in place of a serialization of its own (see {@link send}). A writer is
 * called back once every attempt handed its message has written it or ended ({@link writeDone}), as without the
 * interceptor: until then the application must leave the object alone, and afterwards it may reuse it.
 * @internal
 */
export class ReplayBuffer {
  private messages: unknown[] = [];
  /**
   * Each message's serialized bytes as written, by position (null: it did not serialize; undefined: written after
   * the commit, when only the committed attempt sends it, first).
   */
  private snapshots: (Uint8Array | null | undefined)[] = [];
  /** Absolute index one past the last message an attempt has been handed: the messages some attempt has sent. */
  private handedOut = 0;
  /** How many attempts hold each message handed to them, by absolute index, until their write completes. */
  private readonly outstanding = new Map<number, number>();
  /** Messages whose writer may be called back once the attempts have all been handed them (see holdReleases). */
  private held: number[] | undefined;
  /**
   * What the serializer threw for each message that did not serialize when written, by absolute index (created only
   * when one does not): grpc-js's serialization of it throws the same (see {@link send}). Its first attempt fails
   * on it and no other is made, so it holds the few written before the call ends, until {@link clear}.
   */
  private serializeErrors: Map<number, unknown> | undefined;
  /** Write flags by position, created only when a message has some. */
  private flags: (number | undefined)[] | undefined;
  /** Application write callbacks still waiting, by absolute index, until no attempt holds the message. */
  private pendingCallbacks: Map<number, () => void> | undefined;
  /** Absolute index of `messages[0]`. */
  private base = 0;
  /** Bytes reserved in the pool; 0 once released. */
  private reserved = 0;
  private accounting = true;

  /** The method's request serializer: a message is charged its serialized length. */
  private readonly serialize: (message: unknown) => Uint8Array;
  /** What lets a snapshot stand for grpc-js's serialization of its message (see request-serializer.ts). */
  private readonly serializer: RequestSerializer | undefined;

  constructor(
    private readonly pool: BufferPool,
    /** The method's request serializer, or the engine's view of it (which lets snapshots be sent as they are). */
    serializer: RequestSerializer | ((message: unknown) => Uint8Array),
    /** Check resends against the snapshots (`checkResentRequests`); when false, every resend is taken as is. */
    private readonly checkResends = true,
  ) {
    if (typeof serializer === 'function') {
      this.serialize = serializer;
    } else {
      this.serialize = serializer.serialize;
      this.serializer = serializer;
    }
  }

  /** Absolute index of the first message still held: where a new attempt starts. */
  get start(): number {
    return this.base;
  }

  /** Absolute index one past the last message. */
  get end(): number {
    return this.base + this.messages.length;
  }

  /** Bytes this call holds in the pool. */
  get reservedBytes(): number {
    return this.reserved;
  }

  /** The message at an absolute index, which must be in [start, end). */
  messageAt(index: number): unknown {
    return this.messages[index - this.base];
  }

  /**
   * Hands the message at `index` to `call`. A message written before the commit goes with its snapshot standing for
   * grpc-js's serialization of it, so that it is serialized once, not twice (see request-serializer.ts).
   */
  send(call: InterceptingCallInterface, context: MessageContext, index: number): void {
    const message = this.messages[index - this.base];
    const snapshot = this.snapshots[index - this.base];
    const armed =
      snapshot != null
        ? this.serializer?.arm(call, message, snapshot) === true
        : snapshot === null && this.armFailure(call, message, index);
    try {
      call.sendMessageWithContext(context, message);
    } finally {
      if (armed) {
        this.serializer?.disarm();
      }
    }
  }

  /** A message that threw when written throws the same error when grpc-js serializes it, not a second run's result. */
  private armFailure(call: InterceptingCallInterface, message: unknown, index: number): boolean {
    // A null snapshot always has its error kept: append keeps both, and only clear forgets the errors.
    return this.serializer?.armFailure(call, message, this.serializeErrors?.get(index)) === true;
  }

  flagsAt(index: number): number | undefined {
    return this.flags?.[index - this.base];
  }

  /**
   * Keep a message; its `callback` waits until the attempts handed it have written it. Returns `'kept'` when it fits
   * the limits. Returns `'overflow'` when it does not fit: it is kept anyway, and the call must commit.
   *
   * Every message is charged to the pool as it is written, a single request too (A6: a new call whose request does
   * not fit the space left is not retryable, and the calls admitted before it keep theirs). Charging a single request
   * only when a retry asked for it let a later call's retry take the room of an earlier call still in flight, and
   * left the requests of calls in flight out of the total.
   */
  append(
    message: unknown,
    flags: number | undefined,
    callback: (() => void) | undefined,
  ): 'kept' | 'overflow' {
    this.push(message, flags, callback);
    if (!this.accounting) {
      this.snapshots.push(undefined);
      return 'kept';
    }
    let snapshot: Uint8Array | null;
    try {
      snapshot = this.keepable(message, this.serialize(message));
    } catch (error) {
      snapshot = null;
      this.serializeErrors ??= new Map();
      this.serializeErrors.set(this.end - 1, error);
    }
    this.snapshots.push(snapshot);
    const bytes = chargeOf(snapshot);
    if (this.pool.tryReserve(this.reserved, bytes)) {
      this.reserved += bytes;
      return 'kept';
    }
    return 'overflow';
  }

  /**
   * Whether a further attempt may resend every message held (asked before each retry and hedge): each serialized
   * when written, is accounted for in the pool, and serializes as it did then. Reading each message again is the price of never resending other data than the application wrote; it is
   * paid only when an attempt is about to be added.
   */
  replayable(): ReplayVerdict {
    const snapshots = this.snapshots;
    if (!this.accounting) {
      return 'full';
    }
    if (snapshots.includes(null)) {
      return 'unserializable';
    }
    if (!this.checkResends) {
      return 'fits';
    }
    for (let i = 0; i < snapshots.length; i++) {
      const now = this.compare(this.messages[i], snapshots[i] as Uint8Array);
      if (now !== 'same') {
        return now;
      }
    }
    return 'fits';
  }

  /**
   * Whether `message` still serializes to `snapshot`. When it does not, it is serialized once more: a serializer
   * that gives other bytes each time (a random IV, a nonce) cannot show a change, and its message is taken as
   * unchanged (resent as it is, as without the check).
   */
  private unchanged(message: unknown, snapshot: Uint8Array): boolean {
    return this.compare(message, snapshot) === 'same';
  }

  /**
   * {@link unchanged}, telling a message that serializes to other bytes (`changed`) from one whose serializer now
   * throws (`unserializable`: the message may be as it was, and the call's end must not say the application
   * changed it).
   */
  private compare(message: unknown, snapshot: Uint8Array): 'same' | 'changed' | 'unserializable' {
    const now = this.snapshotOf(message);
    if (now === null) {
      return 'unserializable';
    }
    if (sameBytes(now, snapshot)) {
      return 'same';
    }
    const again = this.snapshotOf(message);
    if (again === null) {
      return 'unserializable';
    }
    return sameBytes(again, now) ? 'changed' : 'same';
  }

  /**
   * An attempt is about to send the message at `index`: false when it must not, because another attempt has
   * written it already, its writer was called back then (and may reuse the object), and it no longer serializes
   * as it did when written. The first attempt to be handed a message sends it as it is, as does any attempt while
   * its writer still waits.
   */
  handOver(index: number): boolean {
    if (!this.unchangedFor(index)) {
      return false;
    }
    // Counted only while a writer waits on it (a single request has none): it is what the count releases.
    if (this.pendingCallbacks?.has(index)) {
      this.outstanding.set(index, (this.outstanding.get(index) ?? 0) + 1);
    }
    return true;
  }

  /**
   * An attempt's write of the message at `index` completed, or the attempt ended before it did. Returns the
   * writer's callback once no attempt holds the message any more (a layer below an attempt may keep the object
   * until its write completes, serializing it late: an interceptor that waits for a token before sending), so the
   * writer reuses it only when nothing will read it again unchecked.
   */
  writeDone(index: number): (() => void) | undefined {
    if (this.pendingCallbacks?.has(index) !== true) {
      return undefined;
    }
    const left = (this.outstanding.get(index) ?? 1) - 1;
    if (left > 0) {
      this.outstanding.set(index, left);
      return undefined;
    }
    this.outstanding.delete(index);
    if (this.held !== undefined) {
      this.held.push(index);
      return undefined;
    }
    return this.takeCallback(index);
  }

  /**
   * While a message is handed to each live attempt in turn, a write that completes at once (a layer below that
   * calls back before returning) must not call the writer back before the other attempts were handed the message
   * too: such releases are held until {@link releaseHeld}.
   */
  holdReleases(): void {
    this.held = [];
  }

  /** The callbacks held since {@link holdReleases} whose message no attempt holds any more, in order. */
  releaseHeld(): (() => void)[] {
    const held = this.held ?? [];
    this.held = undefined;
    const callbacks: (() => void)[] = [];
    for (const index of held) {
      const callback = this.outstanding.has(index) ? undefined : this.takeCallback(index);
      if (callback !== undefined) {
        callbacks.push(callback);
      }
    }
    return callbacks;
  }

  private unchangedFor(index: number): boolean {
    if (index >= this.handedOut) {
      this.handedOut = index + 1;
      return true;
    }
    if (this.pendingCallbacks?.has(index)) {
      return true;
    }
    const snapshot = this.snapshots[index - this.base];
    if (!this.checkResends || snapshot === undefined || snapshot === null) {
      return true;
    }
    return this.unchanged(this.messageAt(index), snapshot);
  }

  /** The call committed: give the bytes back and stop accounting. */
  release(): void {
    this.accounting = false;
    if (this.reserved > 0) {
      this.pool.release(this.reserved);
    }
    this.reserved = 0;
  }

  /** The application's callback for the message at `index`, if it still waits for it; it is handed out once. */
  takeCallback(index: number): (() => void) | undefined {
    const pending = this.pendingCallbacks;
    if (pending === undefined) {
      return undefined;
    }
    const callback = pending.get(index);
    if (callback !== undefined) {
      pending.delete(index);
    }
    return callback;
  }

  /** Forget the messages before absolute index `index` (the committed attempt has written them). */
  dropBefore(index: number): void {
    const count = index - this.base;
    if (count <= 0) {
      return;
    }
    if (count >= this.messages.length) {
      this.messages.length = 0;
      this.snapshots.length = 0;
      if (this.flags) {
        this.flags.length = 0;
      }
    } else {
      this.messages.splice(0, count);
      this.snapshots.splice(0, count);
      this.flags?.splice(0, count);
    }
    this.base = index;
  }

  /** The call ended: release everything and return the callbacks of writers still waiting (undefined: none). */
  clear(): (() => void)[] | undefined {
    this.release();
    this.base = this.end;
    this.messages.length = 0;
    this.snapshots.length = 0;
    this.serializeErrors = undefined;
    this.outstanding.clear();
    this.flags = undefined;
    const pending = this.pendingCallbacks;
    if (pending === undefined || pending.size === 0) {
      return undefined;
    }
    this.pendingCallbacks = undefined;
    return [...pending.values()];
  }

  /** The message's bytes, or null when it does not serialize. */
  private snapshotOf(message: unknown): Uint8Array | null {
    try {
      return this.keepable(message, this.serialize(message));
    } catch {
      return null;
    }
  }

  /**
   * `bytes`, serialized from `message`, in a form that may be kept. A serializer of raw bytes may hand back the
   * application's own memory: copy it, or a change to the message would change its snapshot too. The copy is of the
   * same kind (a Buffer stays one): it is what grpc-js is handed in the serializer's place.
   */
  private keepable(message: unknown, bytes: Uint8Array): Uint8Array {
    if (ArrayBuffer.isView(message) && bytes.buffer === message.buffer) {
      return Buffer.isBuffer(bytes) ? Buffer.from(bytes) : Uint8Array.from(bytes);
    }
    return bytes;
  }

  private push(message: unknown, flags: number | undefined, callback: (() => void) | undefined): void {
    if (callback !== undefined) {
      this.pendingCallbacks ??= new Map();
      this.pendingCallbacks.set(this.end, callback);
    }
    if (flags !== undefined || this.flags !== undefined) {
      this.flags ??= new Array<number | undefined>(this.messages.length).fill(undefined);
      this.flags.push(flags);
    }
    this.messages.push(message);
  }
}

/** What a message is charged in the pool: its bytes (none when it does not serialize), frame and overhead. */
function chargeOf(snapshot: Uint8Array | null): number {
  return (snapshot?.length ?? 0) + FRAME_HEADER_BYTES + ENTRY_OVERHEAD_BYTES;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}
