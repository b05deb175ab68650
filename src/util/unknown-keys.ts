import { closestName } from './closest-name.js';

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
