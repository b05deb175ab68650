/**
 * The formatting helpers behind the reports of `check`: durations, method names, status codes, sums of backoffs and
 * indentation, each at the edges of its rules, and as the report shows them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  formatDuration,
  formatDurationSum,
  formatMethodName,
  formatStatusCodes,
  indentLines,
} from '../../src/cli/format.js';
import { check } from '../helpers/check-run.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const SCRATCH = mkdtempSync(join(tmpdir(), 'grh-format-'));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

describe('formatDuration', () => {
  it.each<[number, string]>([
    [0, '0 ms'],
    [0.5, '0.5 ms'],
    // under a millisecond: 3 significant digits, not 3 decimals (a nanosecond is 0.000001 ms)
    [0.0015, '0.0015 ms'],
    [0.000001, '0.000001 ms'],
    [1, '1 ms'],
    [999.5, '999.5 ms'],
    [1000, '1 s'],
    [1500, '1.5 s'],
    [59_999, '59.999 s'],
    [60_000, '1 min'],
    [90_000, '1.5 min'],
    [3_599_000, '59.983 min'],
    [3_600_000, '1 h'],
    [5_400_000, '1.5 h'],
    [86_400_000, '24 h'],
    [-1500, '-1.5 s'],
    // rounded as shown, a value that reaches the next unit is written in it
    [999.9996, '1 s'],
    [59_999.9, '1 min'],
    [-59_999.9, '-1 min'],
    [3_599_999.9, '1 h'],
    [59_999.4, '59.999 s'],
  ])('writes %d ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('writes a value that is not finite as it is, with no unit', () => {
    expect(formatDuration(Number.POSITIVE_INFINITY)).toBe('Infinity');
    expect(formatDuration(Number.NEGATIVE_INFINITY)).toBe('-Infinity');
    expect(formatDuration(Number.NaN)).toBe('NaN');
  });
});

describe('formatMethodName', () => {
  it('writes the default name {} as *, a service as service/*, a method as service/method', () => {
    expect(formatMethodName({})).toBe('*');
    expect(formatMethodName({ service: 'pkg.v1.Svc' })).toBe('pkg.v1.Svc/*');
    expect(formatMethodName({ service: 'pkg.v1.Svc', method: 'Get' })).toBe('pkg.v1.Svc/Get');
  });
});

describe('formatStatusCodes', () => {
  it('names each code with its number, and says none for an empty list', () => {
    expect(formatStatusCodes([14, 8])).toBe('UNAVAILABLE (14), RESOURCE_EXHAUSTED (8)');
    expect(formatStatusCodes([0])).toBe('OK (0)');
    expect(formatStatusCodes([])).toBe('none');
  });
});

describe('formatDurationSum', () => {
  it('adds up to six terms in full', () => {
    expect(formatDurationSum([])).toBe('');
    expect(formatDurationSum([100])).toBe('100 ms');
    expect(formatDurationSum([100, 200, 400, 800, 1000, 1000])).toBe(
      '100 ms + 200 ms + 400 ms + 800 ms + 1 s + 1 s',
    );
  });

  it('elides the middle of a longer sum: the first terms, ..., the last', () => {
    expect(formatDurationSum([10, 20, 40, 80, 160, 320, 640])).toBe(
      '10 ms + 20 ms + 40 ms + 80 ms + ... + 640 ms',
    );
    expect(formatDurationSum([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 4)).toBe('1 ms + 2 ms + ... + 10 ms');
    expect(formatDurationSum([1, 2, 3, 4], 4)).toBe('1 ms + 2 ms + 3 ms + 4 ms');
  });
});

describe('indentLines', () => {
  it('indents each line by two spaces a level and ends each with a newline', () => {
    expect(indentLines(['a', 'b'], 1)).toBe('  a\n  b\n');
    expect(indentLines(['a', '  b'], 2)).toBe('    a\n      b\n');
    expect(indentLines(['a'], 0)).toBe('a\n');
    expect(indentLines([], 3)).toBe('');
  });
});

describe('durations in the check report', () => {
  it('shows a backoff under a millisecond to its significant digits, not rounded to 0.002 ms', async () => {
    const file = join(SCRATCH, 'sub-millisecond.json');
    writeFileSync(
      file,
      JSON.stringify({
        methodConfig: [
          {
            name: [{ service: 'a.B' }],
            retryPolicy: { ...RETRY_UNAVAILABLE_POLICY.retryPolicy, initialBackoff: '0.0000015s' },
          },
        ],
        retryThrottling: { maxTokens: 10, tokenRatio: 0.1 },
      }),
    );
    const run = await check(file);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('backoff: initial 0.0015 ms, × 2 per retry, capped at 1 s');
    expect(run.stdout).toContain('(0.0015 ms + 0.003 ms, each × 1.2 jitter upper bound; pushback ignored)');
  });
});
