/**
 * The one helper through which the commands print text taken from their input.
 */
import { describe, expect, it } from 'vitest';
import { escapeControlCharacters } from '../../src/cli/format.js';

describe('escapeControlCharacters', () => {
  it('writes C0 controls as JSON escapes, the usual ones short', () => {
    expect(escapeControlCharacters('a\nb\rc\td\be\ff')).toBe('a\\nb\\rc\\td\\be\\ff');
    expect(escapeControlCharacters('\u0000\u0007\u001b[31m\u001f')).toBe('\\u0000\\u0007\\u001b[31m\\u001f');
  });

  it('writes DEL and C1 controls as \\u escapes', () => {
    expect(escapeControlCharacters('\u007f\u0080\u0085\u009b\u009f')).toBe(
      '\\u007f\\u0080\\u0085\\u009b\\u009f',
    );
  });

  it('writes the line and paragraph separators and the bidi formatting characters as \\u escapes', () => {
    expect(escapeControlCharacters('\u2028\u2029')).toBe('\\u2028\\u2029');
    expect(escapeControlCharacters('\u202a\u202b\u202c\u202d\u202e')).toBe(
      '\\u202a\\u202b\\u202c\\u202d\\u202e',
    );
    expect(escapeControlCharacters('\u2066\u2067\u2068\u2069')).toBe('\\u2066\\u2067\\u2068\\u2069');
    expect(escapeControlCharacters('\u200e\u200f\u061c')).toBe('\\u200e\\u200f\\u061c');
  });

  it('leaves every other character as it is, backslashes, quotes and non-ASCII letters included', () => {
    const text = 'pkg.Service/Method "x" C:\\dir café 日本 \u00a0 \u00a0\u2027\u202f\u2065\u206a 🙂';
    expect(escapeControlCharacters(text)).toBe(text);
  });
});
