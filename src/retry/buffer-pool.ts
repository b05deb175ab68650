import { engineChecks } from './engine-checks.js';

/**
 * Byte accounting for replay buffers: A6's per-RPC limit and the total shared by the calls of one interceptor.
 * A call that would exceed either limit commits to the attempt it has, and its bytes are released.
 * @internal
 */
export class BufferPool {
  private used = 0;

  /**
   * @param strict Throw on an accounting error (releasing more than is reserved) instead of clamping at 0. On under
   *   vitest (see {@link engineChecks}) so that a bug fails the tests; off in production, where a wrong count must
   *   not crash a process.
   */
  constructor(
    readonly perCallLimit: number,
    readonly totalLimit: number,
    private readonly strict: boolean = engineChecks.strict,
  ) {}

  /** Bytes currently held by all calls. */
  get usedBytes(): number {
    return this.used;
  }

  /**
   * Try to add `bytes` to a call that already holds `callBytes`. Returns false (and reserves nothing) when either
   * limit would be exceeded.
   */
  tryReserve(callBytes: number, bytes: number): boolean {
    if (callBytes + bytes > this.perCallLimit || this.used + bytes > this.totalLimit) {
      return false;
    }
    this.used += bytes;
    return true;
  }

  release(bytes: number): void {
    if (bytes > this.used || bytes < 0) {
      if (this.strict) {
        throw new Error(`BufferPool: releasing ${bytes} bytes, but only ${this.used} are reserved`);
      }
      this.used = Math.max(0, this.used - Math.max(0, bytes));
      return;
    }
    this.used -= bytes;
  }
}
