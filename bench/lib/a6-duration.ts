/**
 * A delay in ms as a service config Duration string (`"0.0004s"`): to the nanosecond, without trailing zeros, and
 * never in exponent form, so that a sub-millisecond delay runs as the delay the report names (`toFixed(3)` made
 * 0.4 ms a 0 ms delay and 2.5 ms a 3 ms one).
 */
export function a6Duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) {
    throw new RangeError(`a6Duration: the delay must be a finite number of ms, 0 or more, got ${ms}`);
  }
  const text = (ms / 1000).toFixed(9).replace(/\.?0+$/, '');
  return `${text}s`;
}
