import { upperBound } from './attempt-window.js';

/**
 * The hedging delay a window of first attempts calls for: its quantile 1 − `exceedance`, lowered across the gap
 * below it. `sorted[0, n)` holds the window in ascending order: the latency of each attempt that answered, and +∞
 * for each one a hedge superseded (all that is known of it: it outlived the delay it was sent with, so a hedge was
 * needed). Returns undefined when every attempt of the window was superseded (no latency to go by). Pure
 * arithmetic; three steps:
 *
 * 1. **The quantile**: the smallest latency q in the window with no more than a of the window's n attempts above
 *    it, where a = ⌊exceedance · (n + 1)⌋ − 1, so that the expected share above q, (a + 1) / (n + 1), is at most
 *    `exceedance`.
 * 2. **Across gaps**: the window's latencies fall into clusters, split wherever one is more than `gapRatio` times
 *    the next below it. While the top of the next cluster below q has no more than a + t attempts above it, q
 *    becomes that top (a whole cluster is crossed or none of it, and a continuous tail is one cluster, so it is
 *    never slid down). The tolerance t is three standard deviations of the count above q, 3√(a + 1) (3 in a small
 *    window: one call slow on both attempts does not hold it up). Where a slow mode holds about `exceedance` of
 *    the calls (a fast path and 5% at 200 ms), every delay in the gap sends the same share of hedges and the
 *    lowest is best; but the slow mode holds more than a of the window half the time by chance, and then step 1's
 *    q is in the slow mode.
 *    - A crossing may hedge only ⌊√(a + 1)⌋ attempts more than step 1's cluster and those above it hold (where a
 *      slow mode holds about the target share, its attempts): sparse jitter between a fast path and its slow mode
 *      would otherwise take the rest of the tolerance, and on a real machine put the extra load at 0.07. (The
 *      superseded attempts, +∞, are a cluster of their own, so the odd slow attempt that answered, both attempts
 *      having been slow, counts among the few; with half as many allowed, the sweeps' p99 went up to ×24.)
 *    - Still within that, q drops below a sparse top of its cluster: up to three attempts that together span a
 *      gap's ratio or more over the next one below (the victims of a pause of the server, or of the client when a
 *      hedge went before it, spread between a fast path and its slow mode: in traces against `bench:adaptive`'s
 *      server they held the delay at 12–29 ms over a fast path topping at 6–9 ms, and every slow call's hedge
 *      waited that long);
 *    - and below up to two stragglers, three attempts in all: each a lone attempt, or two read the same, more
 *      than 1.25 times the next below (a lone slow read or a stall's victim, less than twice the fast path's top,
 *      held the delay at its latency while it was in the window);
 *    - or, where neither of those applied, below a pair at the top that together spans more than 1.25 times the
 *      next below: in whole milliseconds, as a client measures, lone fast calls at 6 and then 7 ms over a fast path
 *      topping at 5 (or 10 and 12 over 9) are neither of them a straggler, and held the delay for the window's 2 s
 *      against the best static delay at the fast path's top. On continuous tails (40,000 calls through the tracker,
 *      5 ms apart) the share of calls over the delay moved by 0.001 at most (log-normal σ = 1: 0.0442 and 0.0442;
 *      Pareto α = 1: 0.0517 → 0.0527; α = 0.5: 0.0766 → 0.0774).
 *    - Read in whole clock ticks (`resolutionMs`: 1 for `Date.now()`), an attempt one tick above the next below
 *      may be a straggler too: read as 6 ms it may have taken up to 7, more than 1.25 times 5. So one tick counts
 *      under 8 ms, but not onto a value more than 2⌊√(a + 1)⌋ attempts read the same (8 in a window of 400): a
 *      delay of d hedges some of the attempts read at d, as the timer's tick and the clock's fall apart. Without
 *      it, on a host where regime A's fast path of `bench:adaptive` topped at 5 ms, one or two calls at 6 ms (one
 *      in a few hundred) held the delay at 6 for as long as they were in the window, while the best static delay
 *      was 5 ms: every slow call's hedge waited a millisecond longer, a tenth of its p99. At 8 ms and up a tick is
 *      within the ratio, and exact latencies (`resolutionMs` 0) are read as before.
 * 3. **When q is +∞** (superseded attempts alone are more than a + t), the slowest answered latency.
 *
 * On a continuous distribution neither step 2 nor step 3 applies and the delay is step 1's quantile.
 * @internal
 */
export function gapCrossingQuantile(
  sorted: Float64Array,
  n: number,
  exceedance: number,
  gapRatio: number,
  resolutionMs = 0,
): number | undefined {
  const allowed = Math.max(0, Math.floor(exceedance * (n + 1)) - 1);
  const limit = allowed + Math.ceil(GAP_TOLERANCE_SD * Math.sqrt(allowed + 1));
  let at = n - 1 - allowed;
  // The estimate's cluster and what lies above it (where a slow mode holds about the target share, its
  // attempts; by chance more than allowed): a crossing may hedge only a few more than those.
  let bottom = at;
  while (
    bottom > 0 &&
    n - bottom <= limit &&
    sameCluster(sorted[bottom - 1] as number, sorted[bottom] as number, gapRatio)
  ) {
    bottom -= 1;
  }
  // √(a + 1) attempts: what a crossing may hedge past the slow mode, and half the ties the doubt may drop onto.
  const spare = Math.floor(Math.sqrt(allowed + 1));
  const crossLimit = Math.min(limit, n - bottom + spare);
  // Step 2: down to the next gap below the estimate's cluster, while few enough attempts lie above it.
  // (Once more than the limit lie above i, no gap further down can be crossed: the scan stops there.)
  for (let i = at; i > 0 && n - i <= crossLimit; i--) {
    if ((sorted[i - 1] as number) * gapRatio <= (sorted[i] as number)) {
      at = i - 1;
    }
  }
  const afterGaps = at;
  // Below a sparse top of the cluster, up to SPARSE_TOP attempts spread over a gap's ratio or more (the most that
  // qualify), with no more than the crossing's limit above the new estimate.
  for (let j = Math.min(SPARSE_TOP, at); j > 0; j--) {
    if (n - 1 - (at - j) <= crossLimit && (sorted[at - j] as number) * gapRatio <= (sorted[at] as number)) {
      at -= j;
      break;
    }
  }
  // Below up to MAX_STRAGGLERS stragglers at the top of the cluster: each a lone attempt, or two read the same (in
  // whole milliseconds a straggler may come twice), no more than SPARSE_TOP attempts in all.
  const fewTies = 2 * spare;
  let stragglers = 0;
  for (let k = 0; k < MAX_STRAGGLERS && at > 0; k++) {
    // (Three tied are no straggler: the scan need not pass them.)
    let below = at - 1;
    while (below > 0 && sorted[below] === sorted[at] && at - below <= 2) {
      below -= 1;
    }
    const tied = at - below;
    if (
      sorted[below] === sorted[at] ||
      tied > 2 ||
      stragglers + tied > SPARSE_TOP ||
      n - 1 - below > crossLimit ||
      !straggles(sorted, below, sorted[at] as number, resolutionMs, fewTies)
    ) {
      break;
    }
    stragglers += tied;
    at = below;
  }
  // Or, where neither a sparse top nor a straggler was dropped, below a pair of attempts at the top that together
  // span more than the straggler ratio over the next one below.
  if (
    at === afterGaps &&
    at > 1 &&
    n - (at - 1) <= crossLimit &&
    straggles(sorted, at - 2, sorted[at] as number, resolutionMs, fewTies)
  ) {
    at -= 2;
  }
  // The superseded attempts (+∞) are the last of the sorted window.
  const answered = upperBound(sorted, n, Number.MAX_VALUE);
  if (at >= answered) {
    // Step 3: superseded attempts alone are more than the limit.
    if (answered === 0) {
      return undefined;
    }
    at = answered - 1;
  }
  return sorted[at] as number;
}

/**
 * How far above the expected count of attempts above the delay (a) the count above a gap's bottom may be, in
 * standard deviations of that count (√(a + 1)): a slow mode holding exactly the target share holds more than a of
 * the window half the time by chance, and the gap's bottom must not be refused for that.
 */
const GAP_TOLERANCE_SD = 3;

/**
 * A straggler is an attempt at the top of a cluster more than this factor above the next one below it. A client
 * stall, a slow read or a GC pause leaves one now and then between a fast path and its slow mode, less than twice
 * the fast path's top, so in its cluster; it held the delay at its latency while it was in the window (2 s in
 * `bench:adaptive`).
 */
const STRAGGLER_RATIO = 1.25;
/**
 * Stragglers the delay may drop below, each one or two hedges more per window, three at most (SPARSE_TOP), and
 * within the gap rule's tolerance. On a continuous tail the top of the cluster is step 1's quantile, about 20
 * attempts from the window's top, and even a Pareto tail with α = 0.5 leaves 25% between neighbours there only
 * about one time in eight.
 */
const MAX_STRAGGLERS = 2;
/**
 * At most this many attempts at the top of a cluster are its sparse top, when together they span a gap's ratio
 * over the attempt below them: a pause's victims, a handful per pause. (With four, the crossing's limit, which
 * allows ⌊√(a + 1)⌋ = 4 above the slow mode, was the only bound left: on the simulation's main sweep two more
 * phases of 96 went over 0.06 extra load.) On a continuous tail the attempts near the estimate are dense, and the
 * crossing's limit bounds the hedges it adds: over 40,000 calls drawn from a log-normal (σ = 1) or a Pareto tail
 * (α = 1 or 0.5), the share of calls hedged moved by 0.002 at most.
 */
const SPARSE_TOP = 3;

/**
 * Whether `upper` straggles over the attempt at `i` of the sorted window: it is more than the straggler ratio above
 * it, or, read in clock ticks of `resolutionMs`, it is one tick above it and may be (it may have taken up to a tick
 * more than it reads), and no more than `fewTies` attempts read the same as the one at `i` (counted from `i` down).
 * A delay of d hedges some of the attempts read at d, as the timer's tick and the clock's fall apart: the doubt
 * does not lower the delay onto a value many attempts share.
 */
function straggles(
  sorted: Float64Array,
  i: number,
  upper: number,
  resolutionMs: number,
  fewTies: number,
): boolean {
  const lower = sorted[i] as number;
  if (lower * STRAGGLER_RATIO < upper) {
    return true;
  }
  if (!(upper - lower <= resolutionMs && lower * STRAGGLER_RATIO < upper + resolutionMs)) {
    return false;
  }
  let ties = 1;
  for (let j = i - 1; j >= 0 && sorted[j] === lower && ties <= fewTies; j--) {
    ties += 1;
  }
  return ties <= fewTies;
}

/** Whether two neighbours of the sorted window are in one cluster: equal, or less than `gapRatio` apart. */
function sameCluster(lower: number, upper: number, gapRatio: number): boolean {
  return lower === upper || lower * gapRatio > upper;
}
