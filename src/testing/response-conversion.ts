/**
 * A response as the method's serializer takes it: every Timestamp or Duration given in its proto3 JSON form (an
 * RFC 3339 string, `"1.5s"`), at any depth (nested and repeated messages, map values), becomes the
 * `{seconds, nanos}` object protobufjs serializes (see well-known-values.ts). The flaky server runs each response
 * through it before the serializer, whoever built it (a script, the `respond` option), so a script can be written
 * in the JSON form other gRPC tooling uses.
 */

import type { MessageFields } from './response-fields.js';
import { type WellKnownType, wireValueOf } from './well-known-values.js';

function isObjectLiteral(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** `values` with `convert` applied to each; the same array when nothing changed. */
function mapArray(values: readonly unknown[], convert: (value: unknown) => unknown): unknown {
  let out: unknown[] | undefined;
  values.forEach((value, i) => {
    const converted = convert(value);
    if (converted !== value) {
      out ??= [...values];
      out[i] = converted;
    }
  });
  return out ?? values;
}

/** The values of the object `map` with `convert` applied to each; the same object when nothing changed. */
function mapValues(map: Record<string, unknown>, convert: (value: unknown) => unknown): unknown {
  let out: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(map)) {
    const converted = convert(value);
    if (converted !== value) {
      out ??= { ...map };
      out[key] = converted;
    }
  }
  return out ?? map;
}

function convertField(value: unknown, key: string, fields: MessageFields): unknown {
  const wellKnown: WellKnownType | undefined = fields.wellKnown?.get(key);
  const isMap = fields.maps?.has(key) === true;
  if (wellKnown !== undefined) {
    const convert = (item: unknown): unknown => wireValueOf(wellKnown, item);
    if (isMap && isObjectLiteral(value)) {
      return mapValues(value, convert);
    }
    return Array.isArray(value) ? mapArray(value, convert) : convert(value);
  }
  const valueFields = fields.mapValues?.get(key);
  if (valueFields !== undefined && isObjectLiteral(value)) {
    return mapValues(value, (item) => withWellKnownValues(item, valueFields));
  }
  const nested = fields.keys.get(key);
  if (nested === undefined || isMap) {
    return value;
  }
  return Array.isArray(value)
    ? mapArray(value, (item) => withWellKnownValues(item, nested))
    : withWellKnownValues(value, nested);
}

/**
 * `message` (a response of the message `fields` describes) with each Timestamp and Duration string turned into its
 * `{seconds, nanos}`; the same object when there is none. Anything else (an instance of a message class, a value
 * that is neither form) is left to the serializer.
 */
export function withWellKnownValues(message: unknown, fields: MessageFields): unknown {
  if (!isObjectLiteral(message)) {
    return message;
  }
  let out: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(message)) {
    if (!fields.keys.has(key) || value === null || value === undefined) {
      continue;
    }
    const converted = convertField(value, key, fields);
    if (converted !== value) {
      out ??= { ...message };
      out[key] = converted;
    }
  }
  return out ?? message;
}

/**
 * `serialize`, taking Timestamps and Durations in their proto3 JSON form in responses of the message `fields`. The
 * walk follows the response's own values, so its cost is the message's size; the message types are not walked
 * ahead (a type graph where every message refers to the others has factorially many paths).
 */
export function serializeWithWellKnownValues<T>(
  serialize: (message: unknown) => T,
  fields: MessageFields | undefined,
): (message: unknown) => T {
  return fields === undefined ? serialize : (message) => serialize(withWellKnownValues(message, fields));
}
