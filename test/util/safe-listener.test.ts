/**
 * `safeListener` and `sharedSafeListener`: a listener's first error is reported, its later ones are not (their
 * text may differ, so the process-wide once-per-text rule would not hold them back), and a listener given again
 * gets the wrapper it got before.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { safeListener, sharedSafeListener } from '../../src/util/safe-listener.js';
import { captureWarnings } from '../helpers/warnings.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('safeListener', () => {
  it('reports the first error, in full, and none of the errors after it, whatever their text', () => {
    const warnings = captureWarnings();
    let n = 0;
    const listener = safeListener((_event: number) => {
      n += 1;
      throw new Error(`failure ${n}`);
    }, 'the onEvent listener');
    expect(() => {
      listener(1);
      listener(2);
      listener(3);
    }).not.toThrow();
    expect(n).toBe(3);
    expect(warnings).toEqual([
      {
        message:
          'grpc-retry-hedging: the onEvent listener threw (failure 1); the call goes on, and further errors from this listener are not reported',
        code: 'GRPC_RETRY_HEDGING_LISTENER_ERROR',
      },
    ]);
  });

  it('passes each event through to a listener that does not throw', () => {
    const seen: string[] = [];
    const listener = safeListener((event: string) => seen.push(event), 'the listener');
    listener('a');
    listener('b');
    expect(seen).toEqual(['a', 'b']);
  });
});

describe('sharedSafeListener', () => {
  it('gives a listener the same wrapper each time for each name, and another for another name', () => {
    const listener = (_event: unknown) => {};
    const first = sharedSafeListener(listener, 'the onEvent listener');
    const other = sharedSafeListener(listener, 'the onAttemptEnd hook');
    expect(other).not.toBe(first);
    expect(sharedSafeListener(listener, 'the onEvent listener')).toBe(first);
    expect(sharedSafeListener(listener, 'the onAttemptEnd hook')).toBe(other);
    expect(sharedSafeListener((_event: unknown) => {}, 'the onEvent listener')).not.toBe(first);
  });

  it('so a listener given to every call reports its first error only, across calls', () => {
    const warnings = captureWarnings();
    let n = 0;
    const listener = () => {
      n += 1;
      throw new Error(`call ${n} failed`);
    };
    for (let call = 0; call < 3; call++) {
      sharedSafeListener(listener, 'the per-call onEvent listener')({});
    }
    expect(warnings.map((w) => w.message)).toEqual([
      'grpc-retry-hedging: the per-call onEvent listener threw (call 1 failed); the call goes on, and further errors from this listener are not reported',
    ]);
  });
});
