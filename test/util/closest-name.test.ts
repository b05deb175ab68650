import { describe, expect, it } from 'vitest';
import { closestName } from '../../src/util/closest-name.js';

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
