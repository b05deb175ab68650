/**
 * Byte accounting for replay buffers: A6's per-RPC limit and the total shared by the calls of one interceptor.
 * A call that would exceed either limit commits to the attempt it has, and its bytes are released.
 */
export class BufferPool {
  private used = 0;

  constructor(
    readonly perCallLimit: number,
    readonly totalLimit: number,
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
    if (callBytes + bytes > this.perCallLimit || this.used + bytes > this.totalLimit) return false;
    this.used += bytes;
    return true;
  }

  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}
