import { describe, expect, it } from 'vitest';
import {
  DEFAULT_FLEET_SIMULATION,
  type FleetSimulationConfig,
  runFleetSimulation,
} from '../../bench/sim/fleet-simulation.js';
import { fleetSummaryProblem, summarizeFleetRun } from '../../bench/sim/recovery.js';
import { fleetTable } from '../../bench/sim/report.js';
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

  it('the adaptive throttle holds attempts per call at or below 1 during the outage and recovers within 2 s', () => {
    const fast = summarizeFleetRun(runFleetSimulation(simPolicy('adaptive'), tiny));
    expect(fast.outageAmplification).toBeLessThanOrEqual(1);
    expect(fast.timeToRecoverMs).toBeLessThanOrEqual(2000);
    // The previous default (10 s window, retries rejected with the same probability) took far longer.
    const slow = summarizeFleetRun(runFleetSimulation(simPolicy('adaptive-10s'), tiny));
    expect(slow.timeToRecoverMs ?? Number.POSITIVE_INFINITY).toBeGreaterThan(3000);
  });

  it('the default retry budget stays near its ratio with many light clients, where a floor of 10/s does not', () => {
    // 500 clients sharing 400 calls/s: 0.8 calls/s each, as 10,000 clients share 8,000 calls/s; a 20 s outage,
    // so that what was deposited before it (one 10 s ttl) weighs as little as in the full-size simulation.
    const light = { ...tiny, clients: 500, outageMs: 20_000, durationMs: 50_000 };
    const safe = summarizeFleetRun(runFleetSimulation(simPolicy('budget'), light));
    expect(safe.outageAmplification).toBeLessThanOrEqual(1.3);
    expect(safe.metastable).toBe(false);
    expect(safe.timeToRecoverMs).toBeLessThanOrEqual(1000);
    const floor = summarizeFleetRun(runFleetSimulation(simPolicy('budget-floor-10'), light));
    expect(floor.outageAmplification).toBeGreaterThan(3);
  });

  it('a run whose length is not a whole number of buckets still recovers: its last, partial bucket is not judged', () => {
    // 40.25 s: the last 500 ms bucket holds only 250 ms of calls, half the baseline's, which read as "not recovered".
    const whole = summarizeFleetRun(runFleetSimulation(simPolicy('none'), tiny));
    const ragged = summarizeFleetRun(runFleetSimulation(simPolicy('none'), { ...tiny, durationMs: 40_250 }));
    expect(whole.timeToRecoverMs).toBeLessThanOrEqual(1000);
    expect(ragged.timeToRecoverMs).toBe(whole.timeToRecoverMs);
    expect(ragged.goodput).toBeGreaterThan(0.95 * whole.goodput);
  });

  it('refuses to judge recovery without a baseline: an outage that starts within the 5 s warm-up, or a short run', () => {
    // A baseline of 0 made every bucket good: unthrottled retries, metastable, "recovered" 0.5 s after the outage.
    const early = runFleetSimulation(simPolicy('retries'), { ...tiny, outageStartMs: 2000 });
    expect(() => summarizeFleetRun(early)).toThrow(
      /outageStartMs 2000 leaves no time to measure the goodput before the outage: it must be 5500 or more/,
    );
    const short = runFleetSimulation(simPolicy('none'), { ...tiny, outageMs: 0, durationMs: 4000 });
    expect(() => summarizeFleetRun(short)).toThrow(
      /durationMs 4000 leaves no time to measure the goodput after the 5000 ms warm-up: it must be 5500 or more/,
    );
    expect(fleetSummaryProblem({ ...tiny, outageStartMs: 5500 })).toBeUndefined();
    expect(fleetSummaryProblem({ ...tiny, outageMs: 0, durationMs: 5500 })).toBeUndefined();
  });

  it('refuses to judge recovery when a bucket with no OK call would pass as recovered: too few calls per bucket', () => {
    // 20 calls/s to a pool of 25/s: about 10 OK calls per 500 ms bucket before the outage, less four standard deviations
    // of a Poisson count is below 0. Unthrottled retries then held the pool at 5 attempts per call and 1 OK call/s,
    // and were reported recovered 0.5 s after the outage.
    const thin = { ...tiny, clients: 10, offeredRps: 20, capacityRps: 25, serviceMs: 40, durationMs: 40_000 };
    expect(() => summarizeFleetRun(runFleetSimulation(simPolicy('retries'), thin))).toThrow(
      /goodput before the outage, \d+\.\d OK calls per 500 ms bucket, is too small to tell recovery from noise/,
    );
    // 40 calls/s: 20 per bucket, enough to see that they did not recover.
    const enough = summarizeFleetRun(
      runFleetSimulation(simPolicy('retries'), { ...thin, offeredRps: 40, capacityRps: 50, serviceMs: 20 }),
    );
    expect(enough.timeToRecoverMs).toBeUndefined();
  });

  it('a scenario without an outage reports no amplification during it as a dash, not NaN', () => {
    const quiet = { ...tiny, outageMs: 0 };
    const summary = summarizeFleetRun(runFleetSimulation(simPolicy('none'), quiet));
    const table = fleetTable([{ withOutage: summary, withoutOutage: summary, wallMs: 0 }], quiet);
    expect(table).not.toContain('NaN');
    expect(table.split('\n')[2]).toMatch(/^\| no retries \| — \| \d+ \| — \| /);
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
