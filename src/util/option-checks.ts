/**
 * The one checker for the options objects of every module: the object's shape, unknown and renamed keys, numbers
 * in range, booleans, functions and clocks, with one describer for bad values. Each check takes the option's path
 * (`createRetryInterceptor: options.adaptiveHedging`), so every message names where and what, in one wording:
 *
 * - `<path> must be an object, got 3`
 * - `<path>.ratio must be a number in [0, 1), got 2`
 * - `<path>.windowMS is not an option; did you mean "windowMs"? (known: ...)`
 * - `<path>.throttle was renamed to "gate" (...)`
 * @internal
 */
import { type Clock, isClock } from '../shared/clock.js';
import { closestName } from './closest-name.js';
import { wrongTypeHint } from './wrong-type-hint.js';

/**
 * Renders a value for an error message (`got ...`): JSON for plain data, a type name otherwise; long renderings
 * are shortened. What JSON would drop or turn into `null` or `{}` is named, at any depth: a function (`a function`,
 * so `[fn, null]` reads `[a function,null]`), a RegExp (its source, `/a/`), a Promise (`a Promise`), a symbol and a
 * bigint.
 */
export function describeValue(value: unknown): string {
  if (value === undefined) {
    return 'nothing';
  }
  if (typeof value === 'number' && !Number.isFinite(value)) {
    return String(value);
  }
  let text = namedValue(value);
  if (text === undefined) {
    try {
      text = JSON.stringify(value, nameUnserializable) ?? String(value);
      text = text.replace(NAMED_IN_JSON, (_match, named: string) => JSON.parse(`"${named}"`) as string);
    } catch {
      text = Object.prototype.toString.call(value);
    }
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Marks a value {@link namedValue} named inside JSON text, so that it shows unquoted. */
const NAMED_MARK = '\u0000';
const NAMED_IN_JSON = /"\\u0000((?:[^"\\]|\\.)*?)\\u0000"/g;

/**
 * The JSON replacer of {@link describeValue}: a value JSON would drop or mangle becomes its marked name, under any
 * key, the empty one included (which is also the key of the whole value, already known not to be such a value).
 */
function nameUnserializable(_key: string, value: unknown): unknown {
  const named = namedValue(value);
  return named === undefined ? value : `${NAMED_MARK}${named}${NAMED_MARK}`;
}

/** How a value JSON cannot show is named in a message; undefined for the rest. */
function namedValue(value: unknown): string | undefined {
  switch (typeof value) {
    case 'function':
    case 'symbol':
      return `a ${typeof value}`;
    case 'bigint':
      return `${value}n`;
    case 'object':
      if (value instanceof RegExp) {
        return String(value);
      }
      return isThenable(value) ? 'a Promise' : undefined;
    default:
      return undefined;
  }
}

/** Whether `value` is a Promise or another thenable: a forgotten `await`, where a value was expected. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * The class `value` is an instance of (`HedgeBudget`), or undefined for a plain object (of any realm) and a
 * value that is not an object.
 */
export function instanceClassName(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) {
    return undefined;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === null || prototype === Object.prototype) {
    return undefined;
  }
  const maker = (prototype as { constructor?: unknown }).constructor;
  const name = typeof maker === 'function' ? maker.name : '';
  return name === '' || name === 'Object' ? undefined : name;
}

/** `; did you mean "x"?` or nothing. */
export function didYouMean(name: string, known: readonly string[]): string {
  const match = closestName(name, known);
  return match === undefined ? '' : `; did you mean "${match}"?`;
}

/** Whether `value` is a plain options object (not null, not an array). */
export function isOptionsObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Old option name → what to write instead (a new name, and a hint when the shape changed too). */
export type Renames = Readonly<Record<string, { readonly now: string; readonly hint?: string }>>;

/**
 * The options object at `path`: `{}` when left out, else it must be a plain object whose keys are all `known`.
 * A key listed in `renames` is an error naming its new name; any other unknown key names the closest known one,
 * or, on an instance of a class (a HedgeBudget where its options go), says so, with `instanceHint` when given.
 * A Promise is a forgotten `await`.
 */
export function checkOptions(
  path: string,
  value: unknown,
  known: readonly string[],
  renames?: Renames,
  instanceHint?: string,
): Record<string, unknown> {
  if (value === undefined) {
    return {};
  }
  if (isThenable(value)) {
    throw new TypeError(`${path} must be an object, got a Promise; await it and pass what it resolves to`);
  }
  if (!isOptionsObject(value)) {
    throw new TypeError(`${path} must be an object, got ${describeValue(value)}`);
  }
  for (const key of Object.keys(value)) {
    if (known.includes(key)) {
      continue;
    }
    const renamed = renames !== undefined && Object.hasOwn(renames, key) ? renames[key] : undefined;
    if (renamed !== undefined) {
      const hint = renamed.hint === undefined ? '' : ` (${renamed.hint})`;
      throw new TypeError(`${path}.${key} was renamed to "${renamed.now}"${hint}`);
    }
    const className = instanceClassName(value);
    if (className !== undefined) {
      // One of our objects (or another class's) where its options go: its fields are not options.
      throw new TypeError(
        `${path}: got an instance of ${className} where an options object is expected${
          instanceHint === undefined ? ` (known options: ${known.join(', ')})` : `; ${instanceHint}`
        }`,
      );
    }
    throw new TypeError(
      `${path}.${key} is not an option${didYouMean(key, known)} (known: ${known.join(', ')})`,
    );
  }
  return value;
}

/** The bounds of a number option; each end is inclusive unless marked exclusive. */
export interface NumberRule {
  readonly min?: number;
  readonly max?: number;
  readonly minExclusive?: boolean;
  readonly maxExclusive?: boolean;
  readonly integer?: boolean;
  /** What the number counts, for the message ("ms", "bytes"). */
  readonly unit?: string;
}

/** `an integer >= 1`, `a number in [0, 1)`, `a number > 0` ... */
export function describeNumberRule(rule: NumberRule): string {
  const kind = rule.integer ? 'an integer' : 'a number';
  const unit = rule.unit === undefined ? '' : ` (${rule.unit})`;
  const { min, max } = rule;
  if (min !== undefined && max !== undefined) {
    return `${kind} in ${rule.minExclusive ? '(' : '['}${min}, ${max}${rule.maxExclusive ? ')' : ']'}${unit}`;
  }
  if (min !== undefined) {
    return `${kind} ${rule.minExclusive ? '>' : '>='} ${min}${unit}`;
  }
  if (max !== undefined) {
    return `${kind} ${rule.maxExclusive ? '<' : '<='} ${max}${unit}`;
  }
  return `a finite number${unit}`;
}

/**
 * The number option `name` of the options at `path`: `fallback` when left out; a TypeError when it is not a
 * number (NaN included; a number written as text is hinted), a RangeError when it breaks `rule` (infinities
 * included).
 */
export function checkNumber(
  path: string,
  name: string,
  value: unknown,
  fallback: number,
  rule: NumberRule,
): number;
export function checkNumber(
  path: string,
  name: string,
  value: unknown,
  fallback: number | undefined,
  rule: NumberRule,
): number | undefined;
export function checkNumber(
  path: string,
  name: string,
  value: unknown,
  fallback: number | undefined,
  rule: NumberRule,
): number | undefined {
  if (value === undefined) {
    return fallback;
  }
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new TypeError(
      `${path}.${name} must be ${describeNumberRule(rule)}, got ${describeValue(value)}${wrongTypeHint(value, 'number')}`,
    );
  }
  if (!fitsRule(value, rule)) {
    throw new RangeError(`${path}.${name} must be ${describeNumberRule(rule)}, got ${describeValue(value)}`);
  }
  return value;
}

/** Whether the number `value` keeps `rule` (infinities never do). */
function fitsRule(value: number, rule: NumberRule): boolean {
  const { min, max } = rule;
  return (
    Number.isFinite(value) &&
    (!rule.integer || Number.isInteger(value)) &&
    (min === undefined || (rule.minExclusive ? value > min : value >= min)) &&
    (max === undefined || (rule.maxExclusive ? value < max : value <= max))
  );
}

/**
 * The required number argument `name` of the function `fn` (not an option): `fn: name must be ..., got ...`, a
 * TypeError when it is not a number (NaN and a left-out argument included), a RangeError when it breaks `rule`.
 */
export function checkNumberArgument(fn: string, name: string, value: unknown, rule: NumberRule): number {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new TypeError(
      `${fn}: ${name} must be ${describeNumberRule(rule)}, got ${describeValue(value)}${wrongTypeHint(value, 'number')}`,
    );
  }
  if (!fitsRule(value, rule)) {
    throw new RangeError(`${fn}: ${name} must be ${describeNumberRule(rule)}, got ${describeValue(value)}`);
  }
  return value;
}

/** The required function argument `name` of the function `fn`; `what` says what it must do. */
export function checkFunctionArgument<T>(fn: string, name: string, value: unknown, what = 'a function'): T {
  if (typeof value !== 'function') {
    throw new TypeError(`${fn}: ${name} must be ${what}, got ${describeValue(value)}`);
  }
  return value as T;
}

/** The required boolean argument `name` of the function `fn`. */
export function checkBooleanArgument(fn: string, name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') {
    throw new TypeError(
      `${fn}: ${name} must be true or false, got ${describeValue(value)}${wrongTypeHint(value, 'boolean')}`,
    );
  }
  return value;
}

/** The boolean option `name`: `fallback` when left out, else it must be true or false. */
export function checkBoolean(path: string, name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) {
    return fallback;
  }
  if (typeof value !== 'boolean') {
    throw new TypeError(
      `${path}.${name} must be true or false, got ${describeValue(value)}${wrongTypeHint(value, 'boolean')}`,
    );
  }
  return value;
}

/** The function option `name`, or undefined when left out; `what` says what it must do. */
export function checkFunction<T>(
  path: string,
  name: string,
  value: unknown,
  what = 'a function',
): T | undefined {
  if (value === undefined) {
    return undefined;
  }
  if (typeof value !== 'function') {
    throw new TypeError(`${path}.${name} must be ${what}, got ${describeValue(value)}`);
  }
  return value as T;
}

/**
 * One reading of the clock option `name`, taken when options are checked: a clock that throws or reads no finite
 * number of ms is refused then, by name, rather than found out inside a grpc-js callback.
 */
export function readClockNow(path: string, name: string, clock: Pick<Clock, 'now'>): number {
  let reading: unknown;
  try {
    reading = clock.now();
  } catch (error) {
    throw new TypeError(
      `${path}.${name}.now() threw when read: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (typeof reading !== 'number' || !Number.isFinite(reading)) {
    throw new TypeError(
      `${path}.${name}.now() must return a finite number of ms (since the epoch, as Date.now() does; a FakeClock's own time under test), got ${describeValue(reading)}`,
    );
  }
  return reading;
}

/** The clock option `name` (an object with now, setTimer and clearTimer), or undefined when left out. */
export function checkClock(path: string, name: string, value: unknown): Clock | undefined {
  if (value === undefined) {
    return undefined;
  }
  if (!isClock(value)) {
    throw new TypeError(
      `${path}.${name} must be a Clock (an object with now, setTimer and clearTimer methods), got ${describeValue(value)}`,
    );
  }
  readClockNow(path, name, value);
  const resolution = value.resolutionMs;
  if (
    resolution !== undefined &&
    !(typeof resolution === 'number' && Number.isFinite(resolution) && resolution >= 0)
  ) {
    throw new RangeError(
      `${path}.${name}.resolutionMs must be a finite number of ms, 0 or more, got ${describeValue(resolution)}`,
    );
  }
  return value;
}

/** A time source option `name`: an object with a `now()` method (a Clock will do), or undefined when left out. */
export function checkNowSource(path: string, name: string, value: unknown): { now(): number } | undefined {
  if (value === undefined) {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || typeof (value as { now?: unknown }).now !== 'function') {
    throw new TypeError(
      `${path}.${name} must be an object with a now() method (a Clock), got ${describeValue(value)}`,
    );
  }
  return value as { now(): number };
}
