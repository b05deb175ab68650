import { describe, expect, it } from 'vitest';
import { a6Duration } from '../../bench/lib/a6-duration.js';
import { adaptiveBenchConfig } from '../../bench/lib/adaptive-phases.js';
import { readDuration } from '../../src/config/duration.js';

describe("the bench scripts' hedgingDelay", () => {
  it('is the delay asked for, to the nanosecond: --hedging-delay-ms 0.4 is not a 0 ms delay', () => {
    // bench:tail and bench:replicas wrote `${(ms / 1000).toFixed(3)}s`: 0.4 ms ran as "0.000s" (every call hedged
    // at once) and 2.5 ms as "0.003s", while their reports said 0.4 and 2.5 ms.
    for (const ms of [0, 0.4, 0.5, 1.25, 2.5, 20, 150, 1000, 0.000_001, 12_345.678_9]) {
      const text = a6Duration(ms);
      expect(text).toMatch(/^\d+(\.\d{1,9})?s$/);
      expect(readDuration(text)).toBeCloseTo(ms, 9);
    }
    expect(a6Duration(0.4)).toBe('0.0004s');
    expect(a6Duration(20)).toBe('0.02s');
    expect(a6Duration(1000)).toBe('1s');
  });

  it("bench:adaptive's service config carries it so too", () => {
    const config = adaptiveBenchConfig(2.5) as {
      methodConfig: [{ hedgingPolicy: { hedgingDelay: string } }];
    };
    expect(config.methodConfig[0].hedgingPolicy.hedgingDelay).toBe('0.0025s');
  });
});
