import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { collectGarbage, hasShortGcPauses, SHORT_GC_PAUSE_FLAGS } from '../../bench/lib/short-gc-pauses.js';

describe("bench:adaptive's short GC pauses", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('are flags this Node takes: a young generation that stays at 1 MB a half, and gc() exposed', () => {
    // Enough young objects that Node's default young generation grows past its initial 1 MB.
    const probe = [
      'const kept = [];',
      'for (let i = 0; i < 3e6; i++) kept.push({ i });',
      "const v8 = require('node:v8');",
      "const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');",
      'console.log(JSON.stringify({ young: young.space_size, gc: typeof globalThis.gc }));',
    ].join('\n');
    const withFlags = JSON.parse(
      execFileSync(process.execPath, [...SHORT_GC_PAUSE_FLAGS, '-e', probe], { encoding: 'utf8' }),
    ) as { young: number; gc: string };
    const without = JSON.parse(execFileSync(process.execPath, ['-e', probe], { encoding: 'utf8' })) as {
      young: number;
      gc: string;
    };
    // Two semi-spaces of at most 1 MB each; Node's default grew past that.
    expect(withFlags.young).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(without.young).toBeGreaterThan(2 * 1024 * 1024);
    expect(withFlags.gc).toBe('function');
    expect(without.gc).toBe('undefined');
  });

  it('tells whether a process runs with every one of the flags', () => {
    expect(hasShortGcPauses(['--import', 'tsx', ...SHORT_GC_PAUSE_FLAGS])).toBe(true);
    expect(hasShortGcPauses(['--import', 'tsx', ...SHORT_GC_PAUSE_FLAGS.slice(1)])).toBe(false);
    expect(hasShortGcPauses([])).toBe(false);
  });

  it('collects when gc() is exposed, and says which flag is missing when it is not', () => {
    const gc = vi.fn();
    vi.stubGlobal('gc', gc);
    expect(collectGarbage()).toBe(true);
    expect(gc).toHaveBeenCalledTimes(1);
    vi.stubGlobal('gc', undefined);
    expect(() => collectGarbage()).toThrow(/--expose-gc/);
  });
});
