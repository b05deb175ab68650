import type { FleetSimulationConfig } from './fleet-simulation.js';
import type { FleetRunSummary } from './recovery.js';

/** One policy's outage run and its run without the outage. */
export interface FleetComparison {
  withOutage: FleetRunSummary;
  withoutOutage: FleetRunSummary;
  wallMs: number;
}

const seconds = (ms: number | undefined) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`);
const int = (n: number) => (Number.isNaN(n) ? '—' : Math.round(n).toLocaleString('en-US'));

/** Whether the policy came back within twice the settling time of its run without the outage. */
export function recoversInTime(c: FleetComparison): boolean {
  const settle = c.withoutOutage.timeToRecoverMs;
  const recover = c.withOutage.timeToRecoverMs;
  return settle !== undefined && recover !== undefined && recover <= 2 * settle;
}

/** The Markdown table of a set of comparisons. */
export function fleetTable(rows: FleetComparison[], config: FleetSimulationConfig): string {
  const after = (config.durationMs - config.outageStartMs - config.outageMs) / 1000;
  const lines = [
    '| policy | amplification during outage | goodput before (OK/s) | goodput after outage (OK/s) | time to recover | settling, no outage | recovered within 2× settling | at the end | attempts/s offered to the pool at the end | wasted work | local rejections |',
    '|---|---:|---:|---:|---:|---:|---|---|---:|---:|---:|',
  ];
  for (const c of rows) {
    const o = c.withOutage;
    const state = o.metastable
      ? '**metastable failure**'
      : o.timeToRecoverMs === undefined
        ? `not recovered after ${after} s`
        : 'recovered';
    lines.push(
      `| ${o.label} | ${Number.isNaN(o.outageAmplification) ? '—' : o.outageAmplification.toFixed(2)} | ${int(o.baselineGoodput)} | ${int(o.goodputAfterOutage)} | ${seconds(o.timeToRecoverMs)} | ${seconds(c.withoutOutage.timeToRecoverMs)} | ${recoversInTime(c) ? 'yes' : 'no'} | ${state} | ${int(o.finalAttemptsPerSec)} (${o.finalAmplification.toFixed(2)}/call) | ${(o.wastedShare * 100).toFixed(0)}% | ${int(o.localRejections)} |`,
    );
  }
  return lines.join('\n');
}
