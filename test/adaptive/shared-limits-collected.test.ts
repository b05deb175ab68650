/**
 * The limits shared by interceptors of the same cancel-rate settings are held weakly: an application that makes
 * interceptors with settings of its own each time (a burst worked out per client) and drops them does not pile up
 * the shared state (about 400 bytes per setting before, measured over 40,000 interceptors), while interceptors
 * alive with the same settings still share one.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { checkCancelRateLimiterOptions } from '../../src/hedging/cancel-rate-limiter.js';
import {
  sharedPerConnectionLimits,
  sharedSettingsHeld,
} from '../../src/hedging/connection-cancel-limiters.js';
import { FakeClock } from '../../src/testing/fake-clock.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function collectGarbage(): Promise<void> {
  for (let round = 0; round < 5; round++) {
    gc();
    // Finalization callbacks run after the collection, on a later turn of the event loop.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('shared per-connection cancel limits', () => {
  it('go once no interceptor holds them; those still held stay shared', async () => {
    const clock = new FakeClock(0);
    const settings = (burst: number) =>
      checkCancelRateLimiterOptions({ clock, burst, ratePerSecond: 1 }, 'test');
    const kept = sharedPerConnectionLimits(settings(1));
    // The settings hold the clock guarded (one guard per clock), and the shared limits are kept per that clock.
    const held = settings(1).clock;
    for (let burst = 2; burst <= 200; burst++) {
      sharedPerConnectionLimits(settings(burst)).forTarget('dns:a:1');
    }
    expect(sharedSettingsHeld(held)).toBe(200);
    await collectGarbage();
    expect(sharedSettingsHeld(held)).toBe(1);
    expect(sharedPerConnectionLimits(settings(1))).toBe(kept);
  });
});
