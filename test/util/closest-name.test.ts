import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/testing/seeded-random.js';
import { closestName, editDistance } from '../../src/util/closest-name.js';

const KNOWN = ['maxAttempts', 'initialBackoff', 'maxBackoff', 'backoffMultiplier', 'retryableStatusCodes'];

describe('closestName', () => {
  it.each([
    ['max_attempts', 'maxAttempts'],
    ['MaxAttempts', 'maxAttempts'],
    ['maxAttempt', 'maxAttempts'],
    ['intialBackoff', 'initialBackoff'],
    ['backofMultiplier', 'backoffMultiplier'],
    ['retryableCodes', 'retryableStatusCodes'],
    ['maxBackof', 'maxBackoff'],
  ])('suggests %s → %s', (word, expected) => {
    expect(closestName(word, KNOWN)).toBe(expected);
  });

  it.each(['colour', 'comment', 'x', 'attempts'])('suggests nothing for %s', (word) => {
    expect(closestName(word, KNOWN)).toBeUndefined();
  });

  it('prefers a name cut short over an edit of the same size: --prot is --proto, not --port', () => {
    expect(closestName('--prot', ['--port', '--proto', '--host'])).toBe('--proto');
    expect(closestName('--prot', ['--proto', '--port'])).toBe('--proto');
  });
});

describe('closestName: how candidates are weighed', () => {
  it('never suggests the word itself', () => {
    expect(closestName('port', ['port', 'post'])).toBe('post');
    expect(closestName('port', ['port'])).toBeUndefined();
  });

  it('prefers the same name in another case or spelling over one it starts', () => {
    expect(closestName('max_attempts', ['maxAttemptsLimit', 'maxAttempts'])).toBe('maxAttempts');
  });

  it('keeps the first of candidates at the same distance', () => {
    expect(closestName('cod', ['cad', 'cud'])).toBe('cad');
    expect(closestName('cod', ['cud', 'cad'])).toBe('cud');
  });

  it('matches words in any case and with leading separators', () => {
    expect(closestName('non_fatal_codes', ['nonFatalStatusCodes'])).toBe('nonFatalStatusCodes');
    expect(closestName('_max_ms', ['maxBackoffMs'])).toBe('maxBackoffMs');
    expect(closestName('_max_ms', ['maxBackoffSeconds'])).toBeUndefined();
  });

  it('allows one edit up to 4 characters, two up to 8, three past that', () => {
    expect(closestName('ocde', ['code'])).toBe('code'); // one transposition
    expect(closestName('hxsx', ['host'])).toBeUndefined(); // two edits in 4 characters
    expect(closestName('hxsxs', ['hosts'])).toBe('hosts'); // two in 5
    expect(closestName('axxcdefg', ['abcdefgh'])).toBeUndefined(); // three in 8
    expect(closestName('axxcdefgh', ['abcdefghi'])).toBe('abcdefghi'); // three in 9
  });
});

/** Optimal string alignment distance, computed another way: recursion over the last characters, memoized. */
function referenceDistance(a: string, b: string): number {
  const memo = new Map<string, number>();
  const at = (i: number, j: number): number => {
    const key = `${i},${j}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let best: number;
    if (i === 0) best = j;
    else if (j === 0) best = i;
    else {
      best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, at(i - 2, j - 2) + 1);
      }
    }
    memo.set(key, best);
    return best;
  };
  return at(a.length, b.length);
}

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['', 'abc', 3],
    ['abc', '', 3],
    ['abc', 'abc', 0],
    ['xabc', 'abc', 1],
    ['abc', 'abcx', 1],
    ['abc', 'axc', 1],
    ['ab', 'ba', 1],
    ['abcd', 'badc', 2],
    ['ca', 'abc', 3], // optimal string alignment: no edit of a transposed pair
    ['kitten', 'sitting', 3],
  ])('%j → %j: %d', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
  });

  it('agrees with a reference on 2,000 random pairs over a small alphabet', () => {
    const random = seededRandom(7);
    const word = () =>
      Array.from({ length: Math.floor(random() * 7) }, () => 'abc'[Math.floor(random() * 3)]).join('');
    for (let i = 0; i < 2_000; i++) {
      const a = word();
      const b = word();
      expect(editDistance(a, b), `${a} → ${b}`).toBe(referenceDistance(a, b));
    }
  });
});
