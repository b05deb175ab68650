/**
 * The A6 rule for `retryThrottling.tokenRatio`: decimals beyond the third are ignored.
 */

/**
 * `tokenRatio` with every decimal beyond the third dropped (0.5466 → 0.546, 0.57 → 0.57, 0.0009 → 0).
 *
 * Works on the shortest decimal form of the number (what `String(value)` prints, which is what the JSON text said
 * for any number written with at most 17 significant digits), so no float artefact such as 0.57 × 1000 =
 * 569.9999999999999 can lose a thousandth. Numbers too large to have decimals are returned as they are.
 *
 * @param value A finite number greater than 0 (callers reject anything else first).
 * @returns The truncated ratio; 0 when the value is below 0.001.
 */
export function truncateTokenRatio(value: number): number {
  const text = String(value);
  if (text.includes('e-')) {
    return 0; // below 1e-6
  }
  if (text.includes('e')) {
    return value; // 1e21 and above: no decimals
  }
  const dot = text.indexOf('.');
  return dot === -1 ? value : Number(text.slice(0, dot + 4));
}

/** `truncateTokenRatio(value)` in thousandths, as an integer: the unit a token bucket can count exactly. */
export function tokenRatioThousandths(value: number): number {
  return Math.round(truncateTokenRatio(value) * 1000);
}
