/**
 * Vitest setup (vitest.config.ts, `setupFiles`): the package gives a warning once per process, and a test file is
 * one process for many cases, each of which may expect the warning it causes. Forget what was said between cases.
 */
import { beforeEach } from 'vitest';
import { forgetGivenWarnings } from '../../src/util/warn-once.js';

beforeEach(() => {
  forgetGivenWarnings();
});
