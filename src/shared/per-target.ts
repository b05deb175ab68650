/** A value per target: what a call reads of {@link PerTarget}. @internal */
export interface ByTarget<T> {
  for(target: string): T;
}

/**
 * What an interceptor keeps of each server its calls go to, keyed by the channel's target (see
 * `src/retry/call-target.ts`): made on first use, at most `maxTargets` of them. Past that, the values `idle` says
 * hold nothing worth keeping go first, then the target used least recently.
 * @internal
 */
export class PerTarget<T> implements ByTarget<T> {
  private readonly values = new Map<string, T>();
  /** The target used last: already at the end of the map's order, so using it again moves nothing. */
  private last: string | undefined;

  constructor(
    private readonly make: () => T,
    private readonly maxTargets: number,
    /** A value that is the same as a new one (a throttle at full tokens): forgotten first. */
    private readonly idle?: (value: T) => boolean,
  ) {}

  /** The value of `target`, made on first use; it becomes the most recently used. */
  for(target: string): T {
    const found = this.values.get(target);
    if (found !== undefined) {
      if (target !== this.last) {
        this.values.delete(target);
        this.values.set(target, found);
        this.last = target;
      }
      return found;
    }
    if (this.values.size >= this.maxTargets) {
      this.forget();
    }
    const value = this.make();
    this.values.set(target, value);
    this.last = target;
    return value;
  }

  /** Targets with a value now. */
  get size(): number {
    return this.values.size;
  }

  private forget(): void {
    const idle = this.idle;
    if (idle !== undefined) {
      for (const [target, value] of this.values) {
        if (idle(value)) {
          this.values.delete(target);
        }
      }
    }
    if (this.values.size >= this.maxTargets) {
      this.values.delete(this.values.keys().next().value as string);
    }
  }
}
