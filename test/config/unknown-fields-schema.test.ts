/**
 * Every field the shipped JSON Schema defines is a known field to `findUnknownFields` (the `check` warning and
 * the interceptor's misspelling hints), so that a field added to the schema and the parser but not to
 * src/config/unknown-fields.ts is caught here, not by a user's "unknown field" warning.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findUnknownFields } from '../../src/config/unknown-fields.js';

interface SchemaNode {
  readonly properties?: Readonly<Record<string, unknown>>;
}
const schema = JSON.parse(readFileSync('schema/service-config.schema.json', 'utf8')) as SchemaNode & {
  readonly definitions: Readonly<Record<string, SchemaNode>>;
};

/** An object with every property the schema node defines, each null (only names are compared). */
function everyField(
  node: SchemaNode | undefined,
  nested: Record<string, unknown> = {},
): Record<string, unknown> {
  const names = Object.keys(node?.properties ?? {});
  expect(names.length).toBeGreaterThan(0);
  return { ...Object.fromEntries(names.map((name) => [name, null])), ...nested };
}

describe('the JSON Schema and the unknown-field finder', () => {
  it('know the same fields at every level the schema describes', () => {
    const defs = schema.definitions;
    const config = everyField(schema, {
      methodConfig: [
        everyField(defs.methodConfig, {
          name: [everyField(defs.name)],
          retryPolicy: everyField(defs.retryPolicy),
          hedgingPolicy: everyField(defs.hedgingPolicy),
        }),
      ],
      retryThrottling: everyField(defs.retryThrottling),
    });
    expect(findUnknownFields(config)).toEqual([]);
  });

  it('would notice a field the finder does not know', () => {
    expect(findUnknownFields({ retryThrottling: { maxTokens: 1, tokenRatio: 1, burst: 2 } })).toEqual([
      expect.objectContaining({ key: 'burst' }),
    ]);
  });
});
