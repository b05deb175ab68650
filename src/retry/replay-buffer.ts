import type { BufferPool } from './buffer-pool.js';

/** Every message goes on the wire behind a 5-byte gRPC frame header; an empty message is never free. */
export const FRAME_HEADER_BYTES = 5;

/**
 * What one buffered message costs beyond its serialized size: the slots it takes in the buffer's arrays and the
 * bookkeeping around them, measured with `bench/replay-memory.ts`. Charging it makes the byte limits bound the
 * heap that buffering really takes, even for a stream of tiny messages.
 */
export const ENTRY_OVERHEAD_BYTES = 48;

/** A message not yet measured (a single request is measured only when a second attempt needs it). */
const UNMEASURED = -1;

/**
 * The messages the application sent that some attempt may still need, in order, with the bytes they hold in the
 * shared {@link BufferPool}. Messages have absolute indexes (0, 1, ...); each attempt keeps its own position.
 *
 * Before the call commits, every message is accounted for; a message that does not fit is still kept (so the
 * attempt that commits can send it) but `append` says the buffer overflowed. Once committed, accounting stops and
 * the buffer only holds what the committed attempt has not written yet.
 * @internal
 */
export class ReplayBuffer {
  private messages: unknown[] = [];
  private flags: (number | undefined)[] = [];
  private sizes: number[] = [];
  /** Application write callbacks still waiting, by absolute index (only messages not safely buffered). */
  private readonly pendingCallbacks = new Map<number, () => void>();
  /** Absolute index of `messages[0]`. */
  private base = 0;
  /** Bytes reserved in the pool; 0 once released. */
  private reserved = 0;
  private accounting = true;

  constructor(
    private readonly pool: BufferPool,
    /** Serialized size of a message; a message that cannot be serialized counts 0 (its attempt will fail). */
    private readonly measure: (message: unknown) => number,
  ) {}

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

  flagsAt(index: number): number | undefined {
    return this.flags[index - this.base];
  }

  /**
   * Keep a message. `lazy`: do not measure it now (a single request). Returns `'kept'` when it fits the limits (the
   * writer may go on at once), `'overflow'` when it does not: it is kept anyway, with its `callback` held until an
   * attempt has written it, and the call must commit.
   */
  append(
    message: unknown,
    flags: number | undefined,
    callback: (() => void) | undefined,
    lazy: boolean,
  ): 'kept' | 'overflow' {
    if (!this.accounting) {
      this.push(message, flags, 0, callback);
      return 'kept';
    }
    if (lazy) {
      this.push(message, flags, UNMEASURED, undefined);
      return 'kept';
    }
    const bytes = this.charge(message);
    if (this.pool.tryReserve(this.reserved, bytes)) {
      this.reserved += bytes;
      this.push(message, flags, bytes, undefined);
      return 'kept';
    }
    this.push(message, flags, 0, callback);
    return 'overflow';
  }

  /**
   * Make sure every message is accounted for, measuring those kept lazily: what a further attempt must resend has
   * to fit. False when it does not (the call may then make no further attempt).
   */
  reserveAll(): boolean {
    if (!this.accounting) return false;
    const sizes = this.sizes;
    for (let i = 0; i < sizes.length; i++) {
      if (sizes[i] !== UNMEASURED) continue;
      const bytes = this.charge(this.messages[i]);
      if (!this.pool.tryReserve(this.reserved, bytes)) return false;
      this.reserved += bytes;
      sizes[i] = bytes;
    }
    return true;
  }

  /** The call committed: give the bytes back and stop accounting. */
  release(): void {
    this.accounting = false;
    if (this.reserved > 0) this.pool.release(this.reserved);
    this.reserved = 0;
  }

  /** The application's callback for the message at `index`, if it still waits for it; it is handed out once. */
  takeCallback(index: number): (() => void) | undefined {
    const callback = this.pendingCallbacks.get(index);
    if (callback !== undefined) this.pendingCallbacks.delete(index);
    return callback;
  }

  /** Forget the messages before absolute index `index` (the committed attempt has written them). */
  dropBefore(index: number): void {
    const count = index - this.base;
    if (count <= 0) return;
    this.messages.splice(0, count);
    this.flags.splice(0, count);
    this.sizes.splice(0, count);
    this.base = index;
  }

  /** The call ended: release everything and return the callbacks of writers still waiting. */
  clear(): (() => void)[] {
    this.release();
    this.base = this.end;
    this.messages = [];
    this.flags = [];
    this.sizes = [];
    const callbacks = [...this.pendingCallbacks.values()];
    this.pendingCallbacks.clear();
    return callbacks;
  }

  private charge(message: unknown): number {
    return this.measure(message) + FRAME_HEADER_BYTES + ENTRY_OVERHEAD_BYTES;
  }

  private push(
    message: unknown,
    flags: number | undefined,
    bytes: number,
    callback: (() => void) | undefined,
  ): void {
    if (callback !== undefined) this.pendingCallbacks.set(this.end, callback);
    this.messages.push(message);
    this.flags.push(flags);
    this.sizes.push(bytes);
  }
}
