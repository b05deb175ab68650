import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENERATORS, generate } from '../../examples/integrations/generated/generate.js';

const generatedDir = new URL('../../examples/integrations/generated/', import.meta.url);

describe('committed generated clients (examples/integrations/generated)', () => {
  it('are what ts-proto and @protobuf-ts/plugin make of protos/flaky_test.proto today', () => {
    const files = generate();
    // Every generator produced something: a silent plugin would make the check below vacuous.
    for (const { outDir } of GENERATORS) {
      expect([...files.keys()].some((path) => path.startsWith(`${outDir}/`))).toBe(true);
    }
    for (const [path, content] of files) {
      const committed = readFileSync(new URL(path, generatedDir), 'utf8');
      expect(
        committed,
        `${path} is stale: run node --import tsx examples/integrations/generated/generate.ts`,
      ).toBe(content);
    }
  });
});
