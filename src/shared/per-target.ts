/** A value per target: what a call reads of {@link PerTarget}. @internal */
export interface ByTarget<T> {
  for(target: string): T;
  /** The entry of `target`, counted as in use by one more call until that call gives it back ({@link release}). */
  acquire(target: string): TargetEntry<T>;
}

/** A target's value, and how many calls hold it now. @internal */
export interface TargetEntry<T> {
  readonly value: T;
  /** Calls that acquired the entry and have not ended; never forgotten as idle while above 0. */
  users: number;
}

/** A call that acquired `entry` has ended. @internal */
export function release(entry: TargetEntry<unknown>): void {
  entry.users -= 1;
}

/**
 * What an interceptor keeps of each server its calls go to, keyed by the channel's target (see
 * `src/retry/call-target.ts`): made on first use, at most `maxTargets` of them. Past that many, the values `idle`
 * says hold nothing worth keeping, and that no call holds, go first; then the target used least recently. The first
 * target's value is made at once (unless given), so that `make` throws (an option it checks) where the store is
 * made, not at a call.
 * @internal
 */
export class PerTarget<T> implements ByTarget<T> {
  private readonly entries = new Map<string, TargetEntry<T>>();
  /** The target used last: already at the end of the map's order, so using it again moves nothing. */
  private last: string | undefined;
  /** The first target's value, made (or given) at construction. */
  private spare: T | undefined;
  /** A value that is the same as a new one (a throttle at full tokens): forgotten first, unless a call holds it. */
  private readonly idle: ((value: T) => boolean) | undefined;

  constructor(
    private readonly make: () => T,
    private readonly maxTargets: number,
    options: { readonly idle?: (value: T) => boolean; readonly first?: T } = {},
  ) {
    this.idle = options.idle;
    this.spare = options.first ?? make();
  }

  /** The value of `target`, made on first use; it becomes the most recently used. */
  for(target: string): T {
    return this.entry(target).value;
  }

  acquire(target: string): TargetEntry<T> {
    const entry = this.entry(target);
    entry.users += 1;
    return entry;
  }

  /** Targets with a value now. */
  get size(): number {
    return this.entries.size;
  }

  private entry(target: string): TargetEntry<T> {
    const found = this.entries.get(target);
    if (found !== undefined) {
      if (target !== this.last) {
        this.entries.delete(target);
        this.entries.set(target, found);
        this.last = target;
      }
      return found;
    }
    if (this.entries.size >= this.maxTargets) {
      this.forget();
    }
    const entry: TargetEntry<T> = { value: this.spare ?? this.make(), users: 0 };
    this.spare = undefined;
    this.entries.set(target, entry);
    this.last = target;
    return entry;
  }

  private forget(): void {
    const idle = this.idle;
    if (idle !== undefined) {
      for (const [target, entry] of this.entries) {
        if (entry.users === 0 && idle(entry.value)) {
          this.entries.delete(target);
        }
      }
    }
    if (this.entries.size >= this.maxTargets) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
  }
}
