import { describe, expect, it } from 'vitest';
import { emptyPhaseCalls, recordPhaseCall } from '../../bench/lib/phase-calls.js';
import { slidingTimeToAdapt } from '../../bench/lib/sliding-time-to-adapt.js';

const empty = emptyPhaseCalls;

describe("bench:adaptive's record of a phase's calls", () => {
  it('keeps a failed call in the timeline as +∞, so the time to adapt sees it as the paired measure does', () => {
    // 100 calls a second for 4 s, 3 ms each; calls 150 and 160 (learning ones, 1.5 s in) fail at their deadline.
    // The timeline left failed calls out: the 1 s windows saw only fast calls, and the phase "adapted" at once.
    const d = empty();
    for (let i = 0; i < 400; i++) {
      const failed = i === 150 || i === 160;
      recordPhaseCall(
        d,
        300,
        1_000_000,
        i,
        i / 100,
        failed ? 5000 : 3,
        failed ? new Error('DEADLINE') : undefined,
      );
    }
    expect(d.timeline).toHaveLength(400);
    expect(d.byIndex[150]).toBe(Number.POSITIVE_INFINITY);
    const result = slidingTimeToAdapt(
      d.timeline.map(({ t, latencyMs }) => ({ startMs: t * 1000, latencyMs })),
      10,
    );
    expect(result.timeToAdapt).toBe(2.5);
    // Learning calls are not among the measured ones.
    expect(d.failed).toBe(0);
    expect(d.latencies).toHaveLength(100);
  });

  it('counts a failed measured call, with its first error', () => {
    const d = empty();
    recordPhaseCall(d, 1, 0, 0, 0, 3, undefined);
    recordPhaseCall(d, 1, 0, 1, 0.01, 5000, new Error('DEADLINE_EXCEEDED'));
    expect(d).toMatchObject({ failed: 1, firstError: 'Error: DEADLINE_EXCEEDED', latencies: [] });
    expect(d.startByIndex).toEqual([0, 10]);
  });
});
