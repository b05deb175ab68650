/**
 * Holes in the arrays of a config given as an object (`new Array(2)`, `[ , {...}]`): JSON text has none, but code
 * can make them, and the array methods the rules use skip them. A `methodConfig` of two holes read as a config of
 * no entries, then `createChannelOptions` wrote `[null, null]` for grpc-js, which threw a TypeError from the client's
 * constructor; and a sparse array of length 1e9 took the rules minutes. So a hole is an error before any rule runs.
 */
import type { JsonPath } from './json-path.js';

/** Deeper than any service config: beyond it the walk stops (the rules report what they find there). */
const MAX_DEPTH = 64;

/**
 * The first hole found in `root`'s arrays, depth first: the path of the array and the index of its first hole.
 * Linear in the elements present (a sparse array's length does not count). Cycles are not followed.
 * @internal
 */
export function findArrayHole(root: unknown): { path: JsonPath; index: number } | undefined {
  const seen = new Set<object>();
  const visit = (value: unknown, path: JsonPath): { path: JsonPath; index: number } | undefined => {
    if (typeof value !== 'object' || value === null || seen.has(value) || path.length > MAX_DEPTH) {
      return undefined;
    }
    seen.add(value);
    if (Array.isArray(value)) {
      const present = Object.keys(value).length;
      if (present !== value.length) {
        let index = 0;
        while (index in value) {
          index += 1;
        }
        return { path, index };
      }
      for (let i = 0; i < value.length; i++) {
        const found = visit(value[i], [...path, i]);
        if (found !== undefined) {
          return found;
        }
      }
      return undefined;
    }
    for (const [key, field] of Object.entries(value)) {
      const found = visit(field, [...path, key]);
      if (found !== undefined) {
        return found;
      }
    }
    return undefined;
  };
  return visit(root, []);
}
