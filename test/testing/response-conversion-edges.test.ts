/**
 * The walk that turns the proto3 JSON forms in a response into the objects protobufjs serializes: what it leaves as
 * it is (values that are not object literals, map fields without a message type, instances of message classes),
 * and that it copies only what changed.
 */
import { describe, expect, it } from 'vitest';
import { serializeWithWellKnownValues, withWellKnownValues } from '../../src/testing/response-conversion.js';
import type { MessageFields } from '../../src/testing/response-fields.js';

function message(
  name: string,
  keys: Record<string, MessageFields | undefined>,
  extra: Partial<MessageFields> = {},
): MessageFields {
  return { name, keys: new Map(Object.entries(keys)), ...extra };
}

const stamped = message(
  'Stamped',
  { at: undefined, note: undefined },
  {
    wellKnown: new Map([
      ['at', 'google.protobuf.Timestamp' as const],
      ['note', 'google.protobuf.StringValue' as const],
    ]),
  },
);

describe('withWellKnownValues on what is not an object literal', () => {
  it('hands back null, undefined and primitives as they are', () => {
    expect(withWellKnownValues(null, stamped)).toBeNull();
    expect(withWellKnownValues(undefined, stamped)).toBeUndefined();
    expect(withWellKnownValues('at', stamped)).toBe('at');
    expect(withWellKnownValues(5, stamped)).toBe(5);
  });

  it('leaves an instance of a class (a message object) to the serializer', () => {
    class Stamp {
      at = '1970-01-01T00:00:01Z';
    }
    const instance = new Stamp();
    const out = withWellKnownValues(instance, stamped);
    expect(out).toBe(instance);
    expect(instance.at).toBe('1970-01-01T00:00:01Z');
    const array = ['1970-01-01T00:00:01Z'];
    expect(withWellKnownValues(array, stamped)).toBe(array);
  });

  it('converts an object without a prototype, like a literal', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, {
      at: '1970-01-01T00:00:03Z',
    });
    expect(withWellKnownValues(bare, stamped)).toEqual({ at: { seconds: 3, nanos: 0 } });
  });

  it('does not walk into a nested value that is not an object literal', () => {
    const outer = message('Outer', { inner: stamped, list: stamped });
    class Stamp {
      at = '1970-01-01T00:00:01Z';
    }
    const instance = new Stamp();
    const response = { inner: instance, list: [instance, null] };
    expect(withWellKnownValues(response, outer)).toBe(response);
  });
});

describe('withWellKnownValues on well-known fields', () => {
  it('wraps a bare wrapper value and leaves a {value} object as it is (not as a map)', () => {
    const response = { note: { value: 'x' } };
    expect(withWellKnownValues(response, stamped)).toBe(response);
    expect(withWellKnownValues({ note: 'x' }, stamped)).toEqual({ note: { value: 'x' } });
  });

  it('converts each element of an array, even for a map field (the check refuses it)', () => {
    const byKey = message(
      'ByKey',
      { at: undefined },
      { maps: new Set(['at']), wellKnown: new Map([['at', 'google.protobuf.Timestamp' as const]]) },
    );
    expect(withWellKnownValues({ at: ['1970-01-01T00:00:02Z'] }, byKey)).toEqual({
      at: [{ seconds: 2, nanos: 0 }],
    });
    expect(withWellKnownValues({ at: { k: '1970-01-01T00:00:02Z' } }, byKey)).toEqual({
      at: { k: { seconds: 2, nanos: 0 } },
    });
  });

  it('hands back the same map, array and message when no value in them changed', () => {
    const byKey = message(
      'ByKey',
      { at: undefined, list: undefined },
      {
        maps: new Set(['at']),
        wellKnown: new Map([
          ['at', 'google.protobuf.Timestamp' as const],
          ['list', 'google.protobuf.Duration' as const],
        ]),
      },
    );
    const response = { at: { k: { seconds: 1 }, j: null }, list: [{ seconds: 2 }, null] };
    expect(withWellKnownValues(response, byKey)).toBe(response);
    const mixed = { at: { k: { seconds: 1 }, j: '1970-01-01T00:00:04Z' }, list: [{ seconds: 2 }, '1s'] };
    const out = withWellKnownValues(mixed, byKey) as typeof mixed;
    expect(out).toEqual({
      at: { k: { seconds: 1 }, j: { seconds: 4, nanos: 0 } },
      list: [{ seconds: 2 }, { seconds: 1, nanos: 0 }],
    });
    expect(out.at.k).toBe(mixed.at.k);
    expect(out.list[0]).toBe(mixed.list[0]);
    expect(mixed.at.j).toBe('1970-01-01T00:00:04Z');
    expect(mixed.list[1]).toBe('1s');
  });
});

describe('withWellKnownValues on message and map fields', () => {
  it('leaves a map field without a message type for its values as it is, even with keys like the fields', () => {
    const outer = message('Outer', { byName: stamped }, { maps: new Set(['byName']) });
    const response = { byName: { at: '1970-01-01T00:00:01Z' } };
    expect(withWellKnownValues(response, outer)).toBe(response);
  });

  it('leaves an object for a field of no known message type as it is', () => {
    const outer = message('Outer', { other: undefined });
    const response = { other: { at: '1970-01-01T00:00:01Z' } };
    expect(withWellKnownValues(response, outer)).toBe(response);
  });

  it('walks each value of a map of messages, and each element of a repeated message', () => {
    const outer = message(
      'Outer',
      { byName: undefined, list: stamped },
      { maps: new Set(['byName']), mapValues: new Map([['byName', stamped]]) },
    );
    const unchanged = { byName: { a: { at: { seconds: 1 } } }, list: [{ at: null }] };
    expect(withWellKnownValues(unchanged, outer)).toBe(unchanged);
    expect(
      withWellKnownValues(
        { byName: { a: { note: 'n' } }, list: [{}, { at: '1970-01-01T00:00:05Z' }] },
        outer,
      ),
    ).toEqual({ byName: { a: { note: { value: 'n' } } }, list: [{}, { at: { seconds: 5, nanos: 0 } }] });
  });

  it('serializes the converted message through the wrapped serializer', () => {
    const seen: unknown[] = [];
    const wrapped = serializeWithWellKnownValues((m) => {
      seen.push(m);
      return 'ok';
    }, stamped);
    expect(wrapped({ at: '1970-01-01T00:00:06.5Z', note: null })).toBe('ok');
    expect(seen).toEqual([{ at: { seconds: 6, nanos: 500_000_000 }, note: null }]);
  });
});
