/** Shared checks for the options objects of this folder. @internal */

/** Throw a TypeError naming the first key of `options` that is not in `known`. */
export function rejectUnknownOptions(where: string, options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new TypeError(`${where}: unknown option '${key}' (known options: ${known.join(', ')})`);
    }
  }
}

/** Throw unless `options` is undefined or a plain object. */
export function checkOptionsObject(where: string, options: unknown): asserts options is object | undefined {
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    throw new TypeError(`${where}: options must be an object, got ${describe(options)}`);
  }
}

/** A finite number in [min, max], or a RangeError/TypeError that names the option. */
export function numberInRange(
  where: string,
  name: string,
  value: unknown,
  fallback: number,
  min: number,
  max: number,
  integer = false,
): number {
  if (value === undefined) {
    return fallback;
  }
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new TypeError(`${where}: ${name} must be a number, got ${describe(value)}`);
  }
  if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    throw new RangeError(
      `${where}: ${name} must be ${integer ? 'an integer' : 'a number'} in [${min}, ${max}], got ${value}`,
    );
  }
  return value;
}

/** An object with a `now()` method (a {@link Clock} will do), or a TypeError that names the option. */
export function checkNowSource(where: string, name: string, value: unknown): { now(): number } | undefined {
  if (value === undefined) {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || typeof (value as { now?: unknown }).now !== 'function') {
    throw new TypeError(
      `${where}: ${name} must be an object with a now() method (a Clock), got ${describe(value)}`,
    );
  }
  return value as { now(): number };
}

/** A function, or a TypeError that names the option. */
export function checkFunction<T>(where: string, name: string, value: unknown): T | undefined {
  if (value === undefined) {
    return undefined;
  }
  if (typeof value !== 'function') {
    throw new TypeError(`${where}: ${name} must be a function, got ${describe(value)}`);
  }
  return value as T;
}

export function describe(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'an array';
  }
  if (typeof value === 'string') {
    return JSON.stringify(value);
  }
  if (typeof value === 'object') {
    return 'an object';
  }
  return `${typeof value === 'function' ? 'a function' : String(value)}`;
}
