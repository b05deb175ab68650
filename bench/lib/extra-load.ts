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
