import { describe, expect, it } from 'vitest';
import { closestName } from '../../src/util/closest-name.js';
import { rejectUnknownKeys } from '../../src/util/unknown-keys.js';

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
});

describe('rejectUnknownKeys', () => {
  it('names the unknown key and the closest known one', () => {
    expect(() => rejectUnknownKeys({ maxAttempt: 3 }, ['maxAttemptsLimit', 'jitter'], 'here')).toThrow(
      /here: unknown option "maxAttempt"; did you mean "maxAttemptsLimit"\?/,
    );
    expect(() => rejectUnknownKeys({ zzz: 1 }, ['jitter'], 'here')).toThrow(
      /unknown option "zzz" \(known: jitter\)/,
    );
    expect(() => rejectUnknownKeys({ jitter: 'a6' }, ['jitter'], 'here')).not.toThrow();
  });
});
