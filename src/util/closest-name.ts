/** Edit distance (insertions, deletions, substitutions, adjacent swaps) between two short strings. @internal */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        ((d[i - 1] as number[])[j] as number) + 1,
        ((d[i] as number[])[j - 1] as number) + 1,
        ((d[i - 1] as number[])[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, ((d[i - 2] as number[])[j - 2] as number) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/**
 * The known name closest to `name` (case and `_`/`-` ignored), when it is close enough to be a likely typo:
 * at most a third of its length away. @internal
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const fold = (s: string) => s.toLowerCase().replace(/[_-]/g, '');
  const folded = fold(name);
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(folded, fold(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(folded.length / 3)) ? best : undefined;
}

/** `; did you mean "x"?` or nothing. @internal */
export function didYouMean(name: string, known: readonly string[]): string {
  const match = closestName(name, known);
  return match === undefined ? '' : `; did you mean "${match}"?`;
}

/**
 * Throws a TypeError naming the first key of `value` that is not in `known`, with the closest known key.
 * @internal
 */
export function rejectUnknownKeys(value: object, known: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw new TypeError(
        `${where}: unknown option "${key}"${didYouMean(key, known)} (known: ${known.join(', ')})`,
      );
    }
  }
}
