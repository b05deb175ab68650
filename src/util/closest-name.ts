/**
 * "Did you mean ...?" suggestions for misspelled names.
 */

/**
 * The candidate closest to `word`, if one is close enough to be a likely misspelling: the same name in another
 * letter case or with `_`/`-` (`retry_policy` → `retryPolicy`), or within a small edit distance (1 for names up to 4
 * characters, 2 up to 8, then 3), or naming some of its words in order (`nonFatalCodes` → `nonFatalStatusCodes`), or the start of it (`maxAttempt` →
 * `maxAttemptsLimit`; preferred over an edit of the same size).
 *
 * @param word The unknown name.
 * @param candidates The known names.
 * @returns The best candidate, or `undefined` when none is close.
 */
export function closestName(word: string, candidates: Iterable<string>): string | undefined {
  const folded = fold(word);
  const allowed = allowedDistance(word);
  const parts = words(word);
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    if (candidate === word) {
      continue;
    }
    const foldedCandidate = fold(candidate);
    const distance =
      foldedCandidate === folded
        ? 0
        : folded.length >= 4 && foldedCandidate.startsWith(folded)
          ? // a name cut short: nearer than an edit of the same size (`--prot` is `--proto`, not `--port`)
            0.5
          : isWordSubset(parts, candidate)
            ? 1
            : // the distance is at least the difference in length: a name far longer or shorter than the
              // candidate is not measured (an unknown key of 100 KB took a second per config)
              Math.abs(word.length - candidate.length) > allowed
              ? Number.POSITIVE_INFINITY
              : editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best !== undefined && bestDistance <= allowed ? best : undefined;
}

/** Whether a name of these words has at least two, and they all appear, in order, among the words of `candidate`. */
function isWordSubset(parts: readonly string[], candidate: string): boolean {
  const candidateParts = words(candidate);
  if (parts.length < 2) {
    return false;
  }
  let next = 0;
  for (const part of candidateParts) {
    if (part === parts[next]) {
      next++;
    }
  }
  return next === parts.length;
}

/** camelCase, snake_case and kebab-case words, lower-cased. */
function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter((part) => part !== '')
    .map((part) => part.toLowerCase());
}

function fold(name: string): string {
  return name.replace(/[_-]/g, '').toLowerCase();
}

function allowedDistance(word: string): number {
  if (word.length <= 4) {
    return 1;
  }
  return word.length <= 8 ? 2 : 3;
}

/** Levenshtein distance with adjacent transpositions counted as one edit (optimal string alignment). @internal */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(
        (d[i - 1]?.[j] ?? 0) + 1,
        (d[i]?.[j - 1] ?? 0) + 1,
        (d[i - 1]?.[j - 1] ?? 0) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, (d[i - 2]?.[j - 2] ?? 0) + 1);
      }
      const row = d[i];
      if (row !== undefined) {
        row[j] = value;
      }
    }
  }
  return d[a.length]?.[b.length] ?? 0;
}
