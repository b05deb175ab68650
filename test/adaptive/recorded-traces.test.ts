import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  BENCH_SLOW_MS,
  formatTrace,
  parseTrace,
  replayTrace,
  type TraceOutcome,
} from '../../bench/lib/adaptive-trace.js';

/**
 * The adaptive hedging delay against what a real client and server did: the traces in bench/traces/ were recorded
 * by `npm run trace:adaptive` (bench:adaptive's server in its own process, regime A, then B, then A again), GC
 * pauses of both processes included. Each is replayed through the current estimator; the replay is open loop (the
 * trace keeps its own hedges), so these check how the estimator reads real outcomes, not the p99 it would get.
 */
const DIR = fileURLToPath(new URL('../../bench/traces', import.meta.url));
const TRACES = readdirSync(DIR)
  .filter((f) => f.endsWith('.csv'))
  .sort()
  .map((f) => ({ name: f, outcomes: parseTrace(readFileSync(join(DIR, f), 'utf8'), f) }));

describe('recorded traces of adaptive hedging, replayed', () => {
  it('are there, each with its three phases of about 1,500 outcomes', () => {
    expect(TRACES.length).toBeGreaterThanOrEqual(4);
    for (const { outcomes } of TRACES) {
      for (const phase of ['a1', 'b', 'a2']) {
        expect(outcomes.filter((o) => o.phase === phase).length).toBeGreaterThan(1450);
      }
    }
  });

  describe.each(TRACES)('$name', ({ outcomes }) => {
    const { replayed } = replayTrace(outcomes, { slowMs: BENCH_SLOW_MS });
    const phase = (key: string) => replayed.find((r) => r.phase === key);

    it('sends hedges for no more than 0.06 of the calls, in every phase (to one call)', () => {
      // One call of slack: in seed-103's A, from an older host, the estimate puts 72 of 1,199 outcomes above the
      // delay (71 before whole-ms reading: the first measured call found it a tick lower, right after a shift).
      for (const r of replayed) expect(r.aboveDelay, r.phase).toBeLessThanOrEqual(0.06 + 1 / r.outcomes);
    });

    it('keeps the slow calls of regime A waiting 12 ms or less on average, pauses of the client and server notwithstanding', () => {
      // The fast path tops out at 6 to 9 ms; pause victims between it and the slow mode held the delay at 12 to
      // 29 ms before the sparse top rule (step 2b), and without it one of these traces reads 16.8 ms.
      expect(phase('a1')?.delayAtSlowCalls).toBeLessThanOrEqual(12);
      expect(phase('a2')?.delayAtSlowCalls).toBeLessThanOrEqual(12);
    });

    it('follows the shift up to regime B, and back down to A', () => {
      // B's fast path is 10 to 30 ms: its delay sits above A's, and below B's 400 ms slow mode by far.
      expect(phase('b')?.medianDelay).toBeGreaterThanOrEqual(25);
      expect(phase('b')?.delayAtSlowCalls).toBeLessThanOrEqual(50);
      expect(phase('a2')?.medianDelay).toBeLessThanOrEqual(10);
    });
  });
});

/**
 * Traces of bench:adaptive's own adaptive variant (`--trace=FILE`), whose client had run ten variants before it and
 * paused more. In bench-424242 and bench-777 (the tracker before the stall rule), a pause of the machine held
 * about ten calls at once: the fifth in a row to outlive the delay set off a shift up, and the victims of the same
 * pause kept answering after it. The tracker that recorded them kept those later victims, and held the delay at
 * 11 ms for 2 s of the 777 script's A again, and at 29 ms for the end of the 424242 script's A. In
 * bench-1398313959 and bench-31337 (with the stall rule, before the burst rule), a pause in regime B held fewer
 * calls, too few in a row for a shift up. In bench-424242-pair (with both rules, before the rule for two late
 * answers together), a pause held two.
 */
const IN_BENCH = join(DIR, 'in-bench');
const inBench = (name: string) => {
  const outcomes = parseTrace(readFileSync(join(IN_BENCH, name), 'utf8'), name);
  const { replayed } = replayTrace(outcomes, { slowMs: BENCH_SLOW_MS });
  return (key: string) => replayed.find((r) => r.phase === key);
};

describe('traces of bench:adaptive, replayed: a stall taken for a shift up', () => {
  it('is judged against the delay from before the run (script 777, A again)', () => {
    const phase = inBench('bench-777.csv');
    // Recorded: slow calls waited 7.9 ms on average, and the delay's p90 was 11 ms. Its first victims had moved
    // the delay to 29 ms before the run was five long; judged against that, the calls after it are back under
    // at once and its later victims (11, 11, 11 and 25 ms) stay.
    expect(phase('a2')?.delayAtSlowCalls).toBeLessThanOrEqual(7);
    expect(phase('a2')?.p90Delay).toBeLessThanOrEqual(8);
  });

  it('keeps none of the victims that answered after the run (script 424242, A)', () => {
    const phase = inBench('bench-424242.csv');
    // Recorded: 8.2 ms; the delay sat at 29 ms from the stall until a shift down 0.34 s later. Seven of the ten
    // calls after the shift were victims of the same stall (10 to 29 ms), so the stall shows in the last ten only
    // four calls later, and the window it restores must leave those seven out.
    expect(phase('a1')?.delayAtSlowCalls).toBeLessThanOrEqual(7.5);
  });
});

describe('traces of bench:adaptive, replayed: a burst too short for a shift up', () => {
  it('leaves the window when the calls after it are back under (script 1398313959, B)', () => {
    const phase = inBench('bench-1398313959.csv');
    // Recorded (item 12's tracker): four victims in the same millisecond, out of a row by one under the delay,
    // held the delay at 44 ms for 2 s, and six later ones at 54 ms; its median was 44 ms over a fast path
    // topping at 33 ms.
    expect(phase('b')?.medianDelay).toBeLessThanOrEqual(36);
    expect(phase('b')?.delayAtSlowCalls).toBeLessThanOrEqual(41);
  });

  it('leaves the window in another run (script 31337, B)', () => {
    const phase = inBench('bench-31337.csv');
    // Recorded: the delay's p90 was 43 ms, its slow calls' mean 35.6 ms.
    expect(phase('b')?.p90Delay).toBeLessThanOrEqual(34);
    expect(phase('b')?.delayAtSlowCalls).toBeLessThanOrEqual(33);
  });
});

describe('traces of bench:adaptive, replayed: two late answers together', () => {
  it('leave the window when the calls after them are back under (script 424242, A again)', () => {
    // Recorded (fb6a369, the tracker before the rule): two victims of one pause answered in the same millisecond,
    // at 15 and 12 ms over a fast path topping at 9 ms, and held the delay at 15 ms for 2 s: its p90 was 15 ms,
    // the slow calls' mean 10.8 ms, and the phase's p99 ×1.31 the best static delay's.
    const phase = inBench('bench-424242-pair.csv');
    expect(phase('a2')?.p90Delay).toBeLessThanOrEqual(12);
    expect(phase('a2')?.delayAtSlowCalls).toBeLessThanOrEqual(10);
  });
});

describe('traces of bench:adaptive, replayed: stop 36 (393aa00, recorded on a faster host)', () => {
  it('answers together, three of four late, leave the window where pairs are common (script 1398313959, B)', () => {
    // Recorded: a pause's victims answered in the same millisecond at 54, 48 and 43 ms (one at 32 ms among them,
    // under the delay of 42, and one a hedge superseded) over a fast path topping at 32 ms: a quarter of B's answers
    // come in pairs, so a pair says nothing there, and none of the three followed another late. The delay's p90
    // was 54 ms, the slow calls' mean 39.2 ms, and the paired time to adapt 4.3 s.
    const phase = inBench('bench-1398313959-together.csv');
    // (The pair at the top alone reads 43 ms and 36.2 ms; the run of answers together takes the rest.)
    expect(phase('b')?.p90Delay).toBeLessThanOrEqual(42);
    expect(phase('b')?.delayAtSlowCalls).toBeLessThanOrEqual(36);
  });

  it('a pair at the top of the fast path does not hold the delay up (script 777, A again)', () => {
    // Recorded: single fast calls at 6 and then 7 ms over a fast path topping at 5 ms (neither 1.25 times the one
    // below, in whole milliseconds) held the delay at 6-7 ms for 3 s against the best static delay of 5 ms: p99
    // ×1.18, time to adapt 5.3 s.
    const phase = inBench('bench-777-top-pair.csv');
    expect(phase('a2')?.p90Delay).toBeLessThanOrEqual(6);
    expect(phase('a2')?.delayAtSlowCalls).toBeLessThanOrEqual(5.5);
  });
});

describe('traces of bench:adaptive, replayed: stop 37 (c82d743, the same host)', () => {
  it('one tick over the fast path, read in whole ms, does not hold the delay up (script 9, A again)', () => {
    // Recorded: a fast path topping at 5 ms with calls at 6 ms one in a few hundred, one or two in the window at a
    // time (6 over 5 is less than 1.25 times it): the delay sat at 6 ms for all but 57 of the 1,200 measured calls,
    // against the best static delay of 5 ms. Median and p90 6 ms, the slow calls' mean 6.0 ms; paired time to adapt
    // 7.2 s.
    const phase = inBench('bench-9-tick.csv');
    expect(phase('a2')?.medianDelay).toBeLessThanOrEqual(5);
    expect(phase('a2')?.p90Delay).toBeLessThanOrEqual(5);
    expect(phase('a2')?.delayAtSlowCalls).toBeLessThanOrEqual(5.5);
  });
});

describe('the trace format', () => {
  const outcomes: TraceOutcome[] = [
    { ms: 5, phase: 'a1', delayUsedMs: 30, latencyMs: 4, superseded: false },
    { ms: 41, phase: 'b', delayUsedMs: 8, latencyMs: 12, superseded: true },
  ];

  it('reads back what it wrote, comments left out', () => {
    const text = formatTrace(outcomes, ['recorded by a test']);
    expect(text.startsWith('# recorded by a test\n')).toBe(true);
    expect(parseTrace(text, 'mem')).toEqual(outcomes);
  });

  it('names the file and line of what it cannot read', () => {
    expect(() => parseTrace('ms,phase\n1,a1,2,3,0\n', 't.csv')).toThrow(/t\.csv:1: expected the header/);
    const text = formatTrace(outcomes, []);
    expect(() => parseTrace(`${text}7,a1,x,3,0\n`, 't.csv')).toThrow(
      /t\.csv:4: not an outcome: "7,a1,x,3,0"/,
    );
    expect(() => parseTrace(`${text}7,a1,2,3,2\n`, 't.csv')).toThrow(/t\.csv:4/);
    expect(() => parseTrace('# only a comment\n', 't.csv')).toThrow(/t\.csv: no header/);
  });

  it('refuses an outcome with an empty number or a column too many, and reads a trace saved with CRLF', () => {
    const text = formatTrace(outcomes, []);
    // Number('') is 0: an empty delay was read as a 0 ms delay, and a sixth column was dropped unseen.
    for (const line of ['7,a1,,3,0', '7,a1,2, ,0', ',a1,2,3,0', '7,a1,2,3,0,9']) {
      expect(() => parseTrace(`${text}${line}\n`, 't.csv'), line).toThrow(
        `t.csv:4: not an outcome: "${line}"`,
      );
    }
    expect(parseTrace(text.replaceAll('\n', '\r\n'), 'crlf.csv')).toEqual(outcomes);
  });

  it('replays a trace as it was recorded when the estimator is the same', () => {
    // The first of the committed traces: the delays it recorded and the replayed ones match but for the call or
    // two in flight when the delay moved (a call records the delay it started with).
    const { recorded, replayed } = replayTrace(TRACES[0]?.outcomes ?? [], { slowMs: BENCH_SLOW_MS });
    for (const [i, r] of replayed.entries()) {
      expect(Math.abs(r.aboveDelay - (recorded[i]?.aboveDelay ?? Number.NaN))).toBeLessThan(0.005);
      expect(r.medianDelay).toBe(recorded[i]?.medianDelay);
    }
  });
});
