import type { BufferPool } from './buffer-pool.js';

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
  /** Write flags by position, created only when a message has some. */
  private flags: (number | undefined)[] | undefined;
  /** Absolute index of the first message not yet charged to the pool (lazy buffers charge on `reserveAll`). */
  private charged = 0;
  /** Application write callbacks still waiting, by absolute index (only messages not safely buffered). */
  private pendingCallbacks: Map<number, () => void> | undefined;
  /** Absolute index of `messages[0]`. */
  private base = 0;
  /** Bytes reserved in the pool; 0 once released. */
  private reserved = 0;
  private accounting = true;

  constructor(
    private readonly pool: BufferPool,
    /** The method's request serializer: a message is charged its serialized length. */
    private readonly serialize: (message: unknown) => { readonly length: number },
    /**
     * Measure messages only when a further attempt needs them (`reserveAll`), not as they come: for a single
     * request, which most calls never resend, serializing it twice would be the largest cost of the interceptor.
     */
    private readonly lazy = false,
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
    return this.flags?.[index - this.base];
  }

  /**
   * Keep a message. Returns `'kept'` when it fits the limits (or is not measured yet, in a lazy buffer): the writer
   * may go on at once. Returns `'overflow'` when it does not fit: it is kept anyway, with its `callback` held until
   * an attempt has written it, and the call must commit.
   */
  append(
    message: unknown,
    flags: number | undefined,
    callback: (() => void) | undefined,
  ): 'kept' | 'overflow' {
    if (!this.accounting) {
      this.push(message, flags, callback);
      return 'kept';
    }
    if (this.lazy) {
      this.push(message, flags, undefined);
      return 'kept';
    }
    const bytes = this.charge(message);
    if (this.pool.tryReserve(this.reserved, bytes)) {
      this.reserved += bytes;
      this.push(message, flags, undefined);
      this.charged = this.end;
      return 'kept';
    }
    this.push(message, flags, callback);
    this.charged = this.end;
    return 'overflow';
  }

  /**
   * Make sure every message is accounted for, measuring those kept lazily: what a further attempt must resend has
   * to fit. False when it does not (the call may then make no further attempt).
   */
  reserveAll(): boolean {
    if (!this.accounting) {
      return false;
    }
    const end = this.end;
    while (this.charged < end) {
      const bytes = this.charge(this.messageAt(this.charged));
      if (!this.pool.tryReserve(this.reserved, bytes)) {
        return false;
      }
      this.reserved += bytes;
      this.charged += 1;
    }
    return true;
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
      if (this.flags) {
        this.flags.length = 0;
      }
    } else {
      this.messages.splice(0, count);
      this.flags?.splice(0, count);
    }
    this.base = index;
  }

  /** The call ended: release everything and return the callbacks of writers still waiting (undefined: none). */
  clear(): (() => void)[] | undefined {
    this.release();
    this.base = this.end;
    this.messages.length = 0;
    this.flags = undefined;
    const pending = this.pendingCallbacks;
    if (pending === undefined || pending.size === 0) {
      return undefined;
    }
    this.pendingCallbacks = undefined;
    return [...pending.values()];
  }

  private charge(message: unknown): number {
    let length = 0;
    try {
      length = this.serialize(message).length;
    } catch {
      // A message that cannot be serialized counts only its overhead: its attempt fails with the error anyway.
    }
    return length + FRAME_HEADER_BYTES + ENTRY_OVERHEAD_BYTES;
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
