/** `warnOncePerProcess` and `warnOnce`: what the process remembers, and past how many warnings it stops. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { forgetGivenWarnings, warnOnce, warnOncePerProcess } from '../../src/util/warn-once.js';
import { captureWarnings } from '../helpers/warnings.js';

afterEach(() => {
  vi.restoreAllMocks();
  forgetGivenWarnings();
});

describe('warnOncePerProcess', () => {
  it('gives a message once per code, and the same text under another code again', () => {
    const warnings = captureWarnings();
    expect(warnOncePerProcess('m', 'CODE_A')).toBe(true);
    expect(warnOncePerProcess('m', 'CODE_A')).toBe(false);
    expect(warnOncePerProcess('m', 'CODE_B')).toBe(true);
    expect(warnings).toEqual([
      { message: 'm', code: 'CODE_A' },
      { message: 'm', code: 'CODE_B' },
    ]);
  });

  it('remembers 1,000 distinct warnings, and gives the ones past that every time, without remembering them', () => {
    const warnings = captureWarnings();
    for (let i = 0; i < 1_000; i++) {
      expect(warnOncePerProcess(`message ${i}`, 'CODE_C')).toBe(true);
    }
    expect(warnOncePerProcess('one more', 'CODE_C')).toBe(true);
    expect(warnOncePerProcess('one more', 'CODE_C')).toBe(true);
    expect(warnOncePerProcess('message 0', 'CODE_C')).toBe(false);
    expect(warnOncePerProcess('message 999', 'CODE_C')).toBe(false);
    expect(warnings).toHaveLength(1_002);
  });
});

describe('warnOnce', () => {
  it('gives its warning on the first call only, even once the process has forgotten it', () => {
    const warnings = captureWarnings();
    const warn = warnOnce('m', 'CODE_D');
    warn();
    forgetGivenWarnings();
    warn();
    expect(warnings).toEqual([{ message: 'm', code: 'CODE_D' }]);
    // Another warner of the same warning, made after the process forgot it, gives it again.
    warnOnce('m', 'CODE_D')();
    expect(warnings).toHaveLength(2);
  });
});
