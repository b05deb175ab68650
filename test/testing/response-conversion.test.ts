/** The flaky server's response serializer is wrapped only for messages that can hold a well-known value. */
import { describe, expect, it } from 'vitest';
import { serializeWithWellKnownValues } from '../../src/testing/response-conversion.js';
import type { MessageFields } from '../../src/testing/response-fields.js';

function message(
  name: string,
  keys: Record<string, MessageFields | undefined>,
  extra: Partial<MessageFields> = {},
): MessageFields {
  return { name, keys: new Map(Object.entries(keys)), ...extra };
}

describe('serializeWithWellKnownValues', () => {
  const serialize = (m: unknown) => JSON.stringify(m);

  it('hands back the serializer itself when no message type is known', () => {
    expect(serializeWithWellKnownValues(serialize, undefined)).toBe(serialize);
  });

  it('walks the values, not the types: a message type that refers to itself costs the response size', () => {
    const tree = message('Tree', { label: undefined });
    (tree.keys as Map<string, MessageFields | undefined>).set('children', tree);
    const wrapped = serializeWithWellKnownValues(serialize, tree);
    expect(JSON.parse(wrapped({ label: 'a', children: [{ label: 'b', children: [] }] }))).toEqual({
      label: 'a',
      children: [{ label: 'b', children: [] }],
    });
  });

  it('converts where a nested message or a map value holds a Timestamp', () => {
    const stamped = message(
      'Stamped',
      { at: undefined },
      { wellKnown: new Map([['at', 'google.protobuf.Timestamp' as const]]) },
    );
    const outer = message('Outer', { inner: stamped });
    const byKey = message(
      'ByKey',
      { entries: undefined },
      { maps: new Set(['entries']), mapValues: new Map([['entries', stamped]]) },
    );
    expect(
      JSON.parse(
        serializeWithWellKnownValues(serialize, byKey)({ entries: { k: { at: '1970-01-01T00:00:02Z' } } }),
      ),
    ).toEqual({
      entries: { k: { at: { seconds: 2, nanos: 0 } } },
    });
    const wrapped = serializeWithWellKnownValues(serialize, outer);
    expect(wrapped).not.toBe(serialize);
    expect(JSON.parse(wrapped({ inner: { at: '1970-01-01T00:00:01.5Z' } }))).toEqual({
      inner: { at: { seconds: 1, nanos: 500_000_000 } },
    });
  });
});
