/** `warnOncePerMessage`: each distinct message once per returned function, up to its cap. */
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
});
