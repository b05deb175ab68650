import { describe, expect, it } from 'vitest';
import {
  DEFAULT_FLEET_SIMULATION,
  type FleetSimulationConfig,
  runFleetSimulation,
} from '../../bench/sim/fleet-simulation.js';
import { summarizeFleetRun } from '../../bench/sim/recovery.js';
import { simPolicy } from '../../bench/sim/sim-policies.js';

/** A tiny fleet: 20 clients, 400 calls/s offered to a pool of 500/s, a 5 s outage. */
const tiny: FleetSimulationConfig = {
  ...DEFAULT_FLEET_SIMULATION,
  clients: 20,
  offeredRps: 400,
  capacityRps: 500,
  durationMs: 40_000,
  outageStartMs: 10_000,
  outageMs: 5_000,
  seed: 42,
};

describe('fleet simulation', () => {
  it('is deterministic with a seed, and a different seed gives a different run', () => {
    const a = runFleetSimulation(simPolicy('budget'), tiny);
    const b = runFleetSimulation(simPolicy('budget'), tiny);
    const c = runFleetSimulation(simPolicy('budget'), { ...tiny, seed: 43 });
    expect(b.timeline).toEqual(a.timeline);
    expect(b.events).toBe(a.events);
    expect(c.timeline.calls).not.toEqual(a.timeline.calls);
  });

  it('shows the metastable failure of unthrottled retries, and recovery with the A6 throttle', () => {
    const storm = summarizeFleetRun(runFleetSimulation(simPolicy('retries'), tiny));
    expect(storm.outageAmplification).toBeGreaterThan(3);
    expect(storm.timeToRecoverMs).toBeUndefined();
    expect(storm.metastable).toBe(true);
    expect(storm.finalAttemptsPerSec).toBeGreaterThan(tiny.capacityRps);
    expect(storm.wastedShare).toBeGreaterThan(0.5);

    const throttled = summarizeFleetRun(runFleetSimulation(simPolicy('a6'), tiny));
    expect(throttled.metastable).toBe(false);
    expect(throttled.timeToRecoverMs).toBeLessThanOrEqual(2000);
    expect(throttled.outageAmplification).toBeLessThan(1.5);
  });

  it('with no retries the pool recovers as soon as the outage ends', () => {
    const none = summarizeFleetRun(runFleetSimulation(simPolicy('none'), tiny));
    expect(none.outageAmplification).toBe(1);
    expect(none.timeToRecoverMs).toBeLessThanOrEqual(1000);
    expect(none.baselineGoodput).toBeGreaterThan(0.9 * tiny.offeredRps);
  });

  it('the adaptive throttle rejects locally during the outage and lets traffic back afterwards', () => {
    const run = runFleetSimulation(simPolicy('adaptive'), tiny);
    const summary = summarizeFleetRun(run);
    expect(summary.localRejections).toBeGreaterThan(0);
    expect(summary.metastable).toBe(false);
    expect(summary.timeToRecoverMs).toBeDefined();
    expect(run.timeline.localRejections.slice(-10).reduce((s, v) => s + v, 0)).toBe(0);
  });

  it('rejects a bad configuration naming the field', () => {
    expect(() => runFleetSimulation(simPolicy('none'), { ...tiny, clients: 0 })).toThrow(
      /clients must be an integer/,
    );
    expect(() => runFleetSimulation(simPolicy('none'), { ...tiny, capacityRps: -1 })).toThrow(
      /capacityRps must be/,
    );
    expect(() => simPolicy('nope')).toThrow(/unknown policy 'nope' \(known: none, a6/);
  });
});
