import { RetryThrottle } from '../retry/retry-throttle.js';
import type { Clock } from '../shared/clock.js';
import type { RetryGate } from '../shared/retry-gate.js';
import type { AdaptiveThrottleRuleOptions } from '../throttle/adaptive-throttle-rule.js';
import { RetryBudget, type RetryBudgetOptions } from '../throttle/retry-budget.js';

/** A client-side retry policy as the fleet simulation runs it: the package's own gates and throttle. */
export interface SimPolicy {
  /** Short id, used on the command line. */
  key: string;
  /** What the report calls it. */
  label: string;
  /** 1 = no retries. */
  maxAttempts: number;
  /** Makes one client's retry gate (an A6 RetryThrottle, a RetryBudget, ...), or none. */
  gate?: (clock: Pick<Clock, 'now'>) => RetryGate;
  /** Puts the adaptive throttle (this rule) in front of every attempt of the client. */
  adaptive?: AdaptiveThrottleRuleOptions;
}

/** The A6 throttle settings the storm benchmark uses too. */
export const SIM_A6_THROTTLING = { maxTokens: 10, tokenRatio: 0.1 } as const;

const budget = (options: RetryBudgetOptions) => (clock: Pick<Clock, 'now'>) =>
  new RetryBudget({ ...options, clock });

/** Every policy the simulation knows; the first five are the ones BENCHMARKS.md records. */
export const SIM_POLICIES: readonly SimPolicy[] = [
  { key: 'none', label: 'no retries', maxAttempts: 1 },
  {
    key: 'a6',
    label: 'retries + A6 throttle',
    maxAttempts: 5,
    gate: () => new RetryThrottle(SIM_A6_THROTTLING),
  },
  { key: 'budget', label: 'retries + RetryBudget (defaults)', maxAttempts: 5, gate: budget({}) },
  { key: 'adaptive', label: 'retries + adaptive throttle (defaults)', maxAttempts: 5, adaptive: {} },
  { key: 'retries', label: 'retries, unthrottled', maxAttempts: 5 },
  {
    key: 'budget-no-reserve',
    label: 'retries + RetryBudget (minRetriesPerSecond 0)',
    maxAttempts: 5,
    gate: budget({ minRetriesPerSecond: 0 }),
  },
  {
    key: 'adaptive-30s',
    label: 'retries + adaptive throttle (30 s window, grpc-go)',
    maxAttempts: 5,
    adaptive: { windowMs: 30_000 },
  },
  {
    key: 'adaptive-2min',
    label: 'retries + adaptive throttle (2 min window, SRE book)',
    maxAttempts: 5,
    adaptive: { windowMs: 120_000 },
  },
  {
    key: 'adaptive-cap',
    label: 'retries + adaptive throttle (maxRejectionProbability 0.5)',
    maxAttempts: 5,
    adaptive: { maxRejectionProbability: 0.5 },
  },
];

/** The policy with this key, or a RangeError listing the known keys. */
export function simPolicy(key: string): SimPolicy {
  const policy = SIM_POLICIES.find((p) => p.key === key);
  if (!policy) {
    throw new RangeError(`unknown policy '${key}' (known: ${SIM_POLICIES.map((p) => p.key).join(', ')})`);
  }
  return policy;
}
