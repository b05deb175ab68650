/**
 * A min-heap of timed events for the fleet simulation. Events at the same time come out in the order they were
 * pushed, so a run is fully determined by its seed.
 * @internal
 */
export class EventQueue<T> {
  private times: number[] = [];
  private seqs: number[] = [];
  private items: T[] = [];
  private nextSeq = 0;

  get size(): number {
    return this.items.length;
  }

  push(time: number, item: T): void {
    const times = this.times;
    const seqs = this.seqs;
    const items = this.items;
    const seq = this.nextSeq++;
    let i = items.length;
    times.push(time);
    seqs.push(seq);
    items.push(item);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pt = times[parent]!;
      if (pt < time || (pt === time && seqs[parent]! < seq)) {
        break;
      }
      times[i] = pt;
      seqs[i] = seqs[parent]!;
      items[i] = items[parent]!;
      i = parent;
    }
    times[i] = time;
    seqs[i] = seq;
    items[i] = item;
  }

  /** Time of the earliest event (Infinity when empty). */
  peekTime(): number {
    return this.items.length > 0 ? this.times[0]! : Number.POSITIVE_INFINITY;
  }

  /** Remove and return the earliest event. */
  pop(): T | undefined {
    const items = this.items;
    const n = items.length;
    if (n === 0) {
      return undefined;
    }
    const top = items[0]!;
    const times = this.times;
    const seqs = this.seqs;
    const lastTime = times.pop()!;
    const lastSeq = seqs.pop()!;
    const lastItem = items.pop()!;
    const size = n - 1;
    if (size > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= size) {
          break;
        }
        const right = left + 1;
        let child = left;
        if (
          right < size &&
          (times[right]! < times[left]! || (times[right] === times[left] && seqs[right]! < seqs[left]!))
        ) {
          child = right;
        }
        const ct = times[child]!;
        if (lastTime < ct || (lastTime === ct && lastSeq < seqs[child]!)) {
          break;
        }
        times[i] = ct;
        seqs[i] = seqs[child]!;
        items[i] = items[child]!;
        i = child;
      }
      times[i] = lastTime;
      seqs[i] = lastSeq;
      items[i] = lastItem;
    }
    return top;
  }
}
