import { describe, expect, it } from 'vitest';
import { formatTrace, parseTrace } from '../../bench/lib/adaptive-trace.js';
import { RecordingAdaptiveHedging } from '../../bench/lib/recording-adaptive-hedging.js';

describe("bench:adaptive's trace recorder", () => {
  it('keeps the outcomes of the phases and not those of the warm-up before them, and still learns from both', () => {
    const recorder = new RecordingAdaptiveHedging({ maxExtraLoad: 0.05, budget: false });
    // The warm-up (phase ''): enough fast calls that the delay moves from the configured one.
    for (let i = 0; i < 100; i++) recorder.recordOutcome('/m', 30, 4);
    const learned = recorder.delayOf('/m');
    expect(learned).toBeDefined();
    expect(learned).toBeLessThan(30);
    recorder.phase = 'a1';
    recorder.recordOutcome('/m', learned as number, 3);
    recorder.recordOutcome('/m', learned as number, 250, true);
    expect(recorder.outcomes.map((o) => [o.phase, o.latencyMs, o.superseded])).toEqual([
      ['a1', 3, false],
      ['a1', 250, true],
    ]);
    // What it writes reads back (an outcome with no phase would not).
    expect(parseTrace(formatTrace(recorder.outcomes, ['a test']), 'test')).toHaveLength(2);
  });
});
