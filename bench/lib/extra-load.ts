/**
 * Extra load: attempts that reached the server per call, beyond the call's first, (attempts − calls) / calls.
 *
 * Subtracting before dividing keeps a share that is exactly a limit equal to it: 72 hedges over 1,200 calls is
 * 72 / 1200, the double nearest 0.06, the same as the literal 0.06, while 1272 / 1200 − 1 is 0.06000000000000005
 * and a static delay that spent exactly 0.06 was not "≤ 0.06" (`bench:adaptive` judged it so before stop 44).
 */
export function extraLoad(attempts: number, calls: number): number {
  return (attempts - calls) / calls;
}

/**
 * Whether an extra load is within `limit`, a limit written as a decimal or a sum of them (0.05 + 0.01): the sum's
 * rounding (0.05 + 0.01 is 0.060000000000000005, and other sums land a hair under the decimal they stand for) does
 * not decide: a billionth of a hedge per call does not count.
 */
export function withinLoadLimit(load: number, limit: number): boolean {
  return load <= limit + 1e-9;
}

/** The most extra load a static delay may spend to be the bar the adaptive delay is judged against (issue 22). */
export const STATIC_LOAD_LIMIT = 0.06;
