/** `warnOncePerMessage`: each distinct message once per process, up to the returned function's cap. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { warnOncePerMessage } from '../../src/util/warn-once.js';
import { captureWarnings } from '../helpers/warnings.js';

describe('warnOncePerMessage', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('emits each message once with its code, and none past the cap', () => {
    const warnings = captureWarnings();
    const warn = warnOncePerMessage('CODE_X', 2);
    warn('a');
    warn('a');
    warn('b');
    warn('c');
    expect(warnings).toEqual([
      { message: 'a', code: 'CODE_X' },
      { message: 'b', code: 'CODE_X' },
    ]);
  });

  it('counts against its cap only the messages it gave, not those the process had given already', () => {
    const warnings = captureWarnings();
    warnOncePerMessage('CODE_Y', 1)('a');
    const warn = warnOncePerMessage('CODE_Y', 1);
    warn('a'); // given already, by another warner: not again, and not counted
    warn('b');
    warn('c'); // past the cap
    expect(warnings).toEqual([
      { message: 'a', code: 'CODE_Y' },
      { message: 'b', code: 'CODE_Y' },
    ]);
  });
});
