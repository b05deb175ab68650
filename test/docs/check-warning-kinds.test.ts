/** docs/cli.md lists exactly the warning kinds `check --json` can report. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHECK_WARNING_KINDS } from '../../src/cli/check-report.js';

describe('check warning kinds', () => {
  it("docs/cli.md's --json paragraph lists every kind, and no other", () => {
    const cli = readFileSync('docs/cli.md', 'utf8');
    const intro = 'warnings with a `kind`:';
    const start = cli.indexOf(intro) + intro.length;
    expect(start).toBeGreaterThan(intro.length);
    const list = cli.slice(start, cli.indexOf(')', start));
    const listed = [...list.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]);
    expect(CHECK_WARNING_KINDS.length).toBeGreaterThan(5);
    expect([...listed].sort()).toEqual([...CHECK_WARNING_KINDS].sort());
  });
});
