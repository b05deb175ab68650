/**
 * The defaults the option tables of docs/ quote are the ones the code applies: each row is read from the doc and
 * compared with the exported constant, or with what a default-built object resolved its options to.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_ATTEMPTS_LIMIT } from '../../src/config/types.js';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import { MAX_ADAPTIVE_TARGETS } from '../../src/hedging/adaptive-hedging-per-target.js';
import { CancelRateLimiter } from '../../src/hedging/cancel-rate-limiter.js';
import { MAX_LEARNED_DELAYS } from '../../src/otel/learned-delays.js';
import { DEFAULT_MAX_TRACKED_CALLS } from '../../src/otel/max-tracked-calls.js';
import {
  DEFAULT_PER_RPC_BUFFER_BYTES,
  DEFAULT_TOTAL_BUFFER_BYTES,
} from '../../src/retry/interceptor-options.js';
import { DEFAULT_RETRY_INFO_MAX_DELAY_MS } from '../../src/retry/retry-info.js';
import { MAX_THROTTLED_TARGETS } from '../../src/retry/throttles-per-target.js';
import { DEFAULT_MAX_TRACKED_CALL_IDS } from '../../src/testing/call-id-counters.js';
import {
  DEFAULT_MAX_RECORDED_ATTEMPTS,
  DEFAULT_MAX_RECORDED_BYTES,
} from '../../src/testing/flaky-server-options.js';
import { DEFAULT_ADAPTIVE_THROTTLE_RULE } from '../../src/throttle/adaptive-throttle-rule.js';
import { RetryBudget } from '../../src/throttle/retry-budget.js';

/** The table row of `docs/<doc>` whose first cell starts with the option's name in backquotes. */
function row(doc: string, option: string): string {
  const lines = readFileSync(`docs/${doc}`, 'utf8').split('\n');
  const found = lines.filter((line) => line.startsWith(`| \`${option}\``));
  expect(found, `one row for ${option} in docs/${doc}`).toHaveLength(1);
  return found[0] as string;
}

/** The second cell of a row: the default. */
function defaultCell(doc: string, option: string): string {
  return (row(doc, option).split(' | ')[1] as string).trim();
}

describe('docs/configuration.md, the interceptor options', () => {
  it('quotes the attempt limit and the replay-buffer sizes the code uses', () => {
    expect(defaultCell('configuration.md', 'maxAttemptsLimit')).toBe(`\`${DEFAULT_MAX_ATTEMPTS_LIMIT}\``);
    expect(defaultCell('configuration.md', 'perRpcBufferBytes')).toBe(
      `\`${DEFAULT_PER_RPC_BUFFER_BYTES}\` (${DEFAULT_PER_RPC_BUFFER_BYTES / 2 ** 20} MiB)`,
    );
    expect(defaultCell('configuration.md', 'totalBufferBytes')).toBe(
      `\`${DEFAULT_TOTAL_BUFFER_BYTES}\` (${DEFAULT_TOTAL_BUFFER_BYTES / 2 ** 20} MiB)`,
    );
  });

  it('quotes the RetryInfo cap and the cancel-rate limit the code uses', () => {
    expect(defaultCell('configuration.md', 'retryInfo')).toBe(
      `on (\`{ maxDelayMs: ${DEFAULT_RETRY_INFO_MAX_DELAY_MS} }\`)`,
    );
    const limiter = new CancelRateLimiter();
    expect(defaultCell('configuration.md', 'cancelRateLimit')).toBe(
      `on: burst ${limiter.burst}, then ${limiter.ratePerSecond}/s per target`,
    );
  });
});

describe('docs/hedging.md, adaptive hedging and the cancel-rate limit', () => {
  const resolved = new AdaptiveHedging().options;

  it("quotes AdaptiveHedging's defaults as it resolves them", () => {
    expect(defaultCell('hedging.md', 'maxExtraLoad')).toBe(`\`${resolved.maxExtraLoad}\``);
    expect(defaultCell('hedging.md', 'recentCalls')).toContain(`(${resolved.recentCalls})`);
    expect(defaultCell('hedging.md', 'minDelayMs')).toBe(
      `\`${resolved.minDelayMs}\` / \`${resolved.maxDelayMs}\``,
    );
    expect(defaultCell('hedging.md', 'windowMs')).toBe(
      `\`${resolved.windowMs}\` / \`${resolved.windowBins}\``,
    );
    const budget = resolved.budget;
    expect(budget).toBeDefined();
    expect(defaultCell('hedging.md', 'budget')).toBe(
      `\`{ minPerSecond: ${budget?.minPerSecond}, ttlMs: ${budget?.ttlMs}, chanceSd: ${budget?.chanceSd} }\``,
    );
    expect(defaultCell('hedging.md', 'holdInStalls')).toBe(`\`${resolved.holdInStalls}\``);
    expect(defaultCell('hedging.md', 'maxMethods')).toBe(`\`${resolved.maxMethods}\``);
  });

  it("quotes the cancel-rate limiter's defaults in its prose and its snippet", () => {
    const hedging = readFileSync('docs/hedging.md', 'utf8');
    const limiter = new CancelRateLimiter();
    expect(hedging).toContain(
      `a token bucket of ${limiter.burst}, refilled at ${limiter.ratePerSecond} a second`,
    );
    expect(hedging).toContain(`\`loserCapMs\` (${limiter.loserCapMs / 1000} s)`);
    expect(hedging).toContain(
      `cancelRateLimit: { ratePerSecond: ${limiter.ratePerSecond}, burst: ${limiter.burst}, loserCapMs: ${limiter.loserCapMs.toLocaleString('en').replace(',', '_')} }`,
    );
  });
});

describe('docs/overload.md, the retry budget and the adaptive throttle', () => {
  it("quotes RetryBudget's defaults as it resolves them", () => {
    const budget = new RetryBudget();
    expect(defaultCell('overload.md', 'maxExtraLoad')).toBe(`\`${budget.maxExtraLoad}\``);
    expect(defaultCell('overload.md', 'minPerSecond')).toBe(`\`${budget.minPerSecond}\``);
    expect(defaultCell('overload.md', 'ttlMs')).toBe(`\`${budget.ttlMs}\``);
    expect(defaultCell('overload.md', 'chanceSd')).toBe(`\`${budget.chanceSd}\``);
  });

  it("quotes the adaptive throttle rule's defaults", () => {
    const rule = DEFAULT_ADAPTIVE_THROTTLE_RULE;
    expect(defaultCell('overload.md', 'k')).toBe(`\`${rule.k}\``);
    expect(defaultCell('overload.md', 'windowMs')).toBe(`\`${rule.windowMs}\``);
    expect(row('overload.md', 'windowMs')).toContain(`in \`windowBins\` (${rule.windowBins}) steps`);
    expect(defaultCell('overload.md', 'retries')).toBe(`\`'${rule.retries}'\``);
    expect(defaultCell('overload.md', 'padding')).toBe(`\`${rule.padding}\``);
    expect(defaultCell('overload.md', 'maxRejectionProbability')).toBe(`\`${rule.maxRejectionProbability}\``);
  });
});

describe('docs/observability.md and docs/api.md, the OpenTelemetry adapters', () => {
  it('quote the default maxTrackedCalls', () => {
    expect(readFileSync('docs/observability.md', 'utf8')).toContain(
      `\`maxTrackedCalls\` (default ${DEFAULT_MAX_TRACKED_CALLS.toLocaleString('en').replace(',', ' ')};`,
    );
    expect(readFileSync('docs/api.md', 'utf8')).toContain(
      `\`DEFAULT_MAX_TRACKED_CALLS\` (${DEFAULT_MAX_TRACKED_CALLS.toLocaleString('en')})`,
    );
  });
});

describe("docs/api.md and docs/testing.md, the flaky server's memory bounds", () => {
  it('quote the bounds the server applies by default', () => {
    const attempts = DEFAULT_MAX_RECORDED_ATTEMPTS.toLocaleString('en');
    const callIds = DEFAULT_MAX_TRACKED_CALL_IDS.toLocaleString('en');
    const mib = DEFAULT_MAX_RECORDED_BYTES / 2 ** 20;
    const api = readFileSync('docs/api.md', 'utf8');
    expect(api).toContain(`\`maxRecordedAttempts\` (${attempts} attempts)`);
    expect(api).toContain(`\`maxRecordedBytes\` (${mib} MiB of requests`);
    expect(api).toContain(`\`maxTrackedCallIds\` (${callIds} call ids'`);
    const testing = readFileSync('docs/testing.md', 'utf8');
    expect(testing).toContain(`The server keeps the latest ${attempts} attempts`);
    expect(testing).toContain(`the kept attempts hold at most ${mib} MiB of requests`);
    expect(testing).toContain(`counts attempts for the ${callIds} most recent call ids`);
  });
});

describe('the bounds on what is kept per target, quoted in the prose', () => {
  /** Whether docs/`doc` says `phrase`, its line breaks read as spaces (a phrase may wrap over two lines). */
  const expectQuoted = (doc: string, phrase: string) => {
    const prose = readFileSync(`docs/${doc}`, 'utf8').replace(/\s*\n\s*/g, ' ');
    expect(prose.includes(phrase), `docs/${doc} says "${phrase}"`).toBe(true);
  };

  it('quote the throttles, adaptive states and learned delays the code keeps', () => {
    expectQuoted(
      'configuration.md',
      `Past ${MAX_THROTTLED_TARGETS.toLocaleString('en')} targets, the throttles`,
    );
    expectQuoted('hedging.md', `the ${MAX_ADAPTIVE_TARGETS} used most recently are kept`);
    const pairs = MAX_LEARNED_DELAYS.toLocaleString('en');
    expectQuoted('observability.md', `${pairs} pairs seen more recently push it out`);
    expectQuoted('observability.md', `the ${pairs} method and target pairs seen most recently`);
  });
});
