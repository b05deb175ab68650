import { vi } from 'vitest';

/** One `process.emitWarning` call: its message and its code. */
export interface CapturedWarning {
  message: string;
  code: string | undefined;
}

/**
 * Captures `process.emitWarning` until the test's mocks are restored (`vi.restoreAllMocks()` in an `afterEach`):
 * the returned array fills as warnings are emitted, and nothing reaches stderr.
 */
export function captureWarnings(): CapturedWarning[] {
  const warnings: CapturedWarning[] = [];
  vi.spyOn(process, 'emitWarning').mockImplementation(((
    message: string | Error,
    options?: string | { code?: string },
  ) => {
    warnings.push({ message: String(message), code: typeof options === 'object' ? options.code : undefined });
  }) as typeof process.emitWarning);
  return warnings;
}
