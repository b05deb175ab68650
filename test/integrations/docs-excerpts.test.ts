import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const ELISION = '// …';

/** Every code block of docs/integrations.md marked `<!-- excerpt: PATH -->`, with the file it comes from. */
function excerpts(): Array<{ path: string; code: string }> {
  const found: Array<{ path: string; code: string }> = [];
  const pattern = /<!-- excerpt: (\S+) -->\n```ts\n([\s\S]*?)\n```/g;
  for (const match of read('docs/integrations.md').matchAll(pattern)) {
    found.push({ path: match[1]!, code: match[2]! });
  }
  return found;
}

/** Lines without their indentation, blank ones dropped: an excerpt may be dedented. */
const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');

describe('docs/integrations.md', () => {
  it('has one excerpt per integration example', () => {
    expect(excerpts().map((e) => e.path)).toEqual([
      'examples/integrations/nestjs.ts',
      'examples/integrations/ts-proto.ts',
      'examples/integrations/protobuf-ts.ts',
      'examples/integrations/nice-grpc.ts',
      'examples/integrations/nice-grpc.ts',
      'examples/integrations/google-gax.ts',
      'examples/integrations/etcd3.ts',
    ]);
  });

  it.each(excerpts())(
    'the excerpt of $path is code of that file, in order ("// …" skips lines)',
    ({ path, code }) => {
      const source = lines(read(path));
      const chunks = code.split(ELISION).map(lines);
      let from = 0;
      for (const chunk of chunks) {
        let at = -1;
        for (let i = from; i + chunk.length <= source.length && at < 0; i += 1) {
          if (chunk.every((line, k) => source[i + k] === line)) at = i;
        }
        expect(
          at,
          `${path} has no run of lines\n${chunk.join('\n')}\nafter line ${from}`,
        ).toBeGreaterThanOrEqual(0);
        from = at + chunk.length;
      }
    },
  );
});
