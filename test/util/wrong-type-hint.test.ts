import { describe, expect, it } from 'vitest';
import { wrongTypeHint } from '../../src/util/wrong-type-hint.js';

describe('wrongTypeHint', () => {
  it.each<[unknown, 'number' | 'boolean' | 'string', string]>([
    ['3', 'number', '; did you mean 3 (a number, not a string)?'],
    [' 2.5 ', 'number', '; did you mean 2.5 (a number, not a string)?'],
    ['-1', 'number', '; did you mean -1 (a number, not a string)?'],
    ['three', 'number', ''],
    ['1e3', 'number', ''],
    ['', 'number', ''],
    [3, 'number', ''],
    ['true', 'boolean', '; did you mean true (a boolean, not a string)?'],
    [' False ', 'boolean', '; did you mean false (a boolean, not a string)?'],
    ['yes', 'boolean', ''],
    [1, 'boolean', ''],
    [50, 'string', '; did you mean "50" (a string)?'],
    [false, 'string', '; did you mean "false" (a string)?'],
    [null, 'string', ''],
    [{}, 'string', ''],
    // Each hint only for the type asked for, and only for text that is wholly such a value.
    ['3', 'boolean', ''],
    ['3', 'string', ''],
    ['2.55', 'number', '; did you mean 2.55 (a number, not a string)?'],
    ['true', 'number', ''],
    ['true', 'string', ''],
    [true, 'boolean', ''],
    ['not true', 'boolean', ''],
    ['true or false', 'boolean', ''],
  ])('%j as a %s: %j', (value, want, hint) => {
    expect(wrongTypeHint(value, want)).toBe(hint);
  });
});
