/**
 * The latency script of bench/adaptive.ts: whether an attempt is slow, and its fast-path factor, as a function of
 * (seed, phase, call index, attempt number) alone. Every variant of one run meets the same script: call 17 of
 * regime B is slow on its first attempt and fast on its hedge for no hedging, for every static delay and for the
 * adaptive delay alike (common random numbers). Variants then differ only by their policy and the machine's noise,
 * not by how many slow attempts their own draws held: over 1,200 calls the slow share of an independent 5% draw is
 * 5% ± 0.6%, more than half the 0.01 of extra load the targets allow above maxExtraLoad. The share still varies
 * from phase to phase and run to run, as it would on a real service; the bench prints it.
 */
import { seededRandom } from '../../src/testing/seeded-random.js';

/** Request header carrying a call's place in the script: `<phase>:<index>` (index from 0, learning calls included). */
export const SCRIPT_CALL_METADATA_KEY = 'x-bench-call';

/** What the script holds for one attempt. */
export interface ScriptedAttempt {
  slow: boolean;
  /** The fast path's factor, in [0.5, 1.5). */
  fastFactor: number;
}

/** A 32-bit mix of the parts (murmur3's finalizer over a running combination). */
function mix(parts: readonly number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/**
 * The attempt numbered `attempt` (0 for the first, the `grpc-previous-rpc-attempts` value for a hedge) of call
 * `index` of phase `phase` (0, 1, 2) under `seed`.
 */
export function scriptedAttempt(
  seed: number,
  phase: number,
  index: number,
  attempt: number,
  slowFraction: number,
): ScriptedAttempt {
  const random = scriptedRandom(seed, phase, index, attempt);
  const slow = random() < slowFraction;
  return { slow, fastFactor: 0.5 + random() };
}

/**
 * The uniform draws of one attempt, in order: the first two are {@link scriptedAttempt}'s (slow, fast factor); a
 * simulation may take more (bench/adaptive-sim.ts draws its noise tail from the next two).
 */
export function scriptedRandom(seed: number, phase: number, index: number, attempt: number): () => number {
  return seededRandom(mix([seed, phase, index, attempt]));
}

/** Parses a {@link SCRIPT_CALL_METADATA_KEY} value; undefined when it is absent or malformed. */
export function parseScriptCall(value: unknown): { phase: number; index: number } | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d+):(\d+)$/.exec(value);
  if (!match) return undefined;
  return { phase: Number(match[1]), index: Number(match[2]) };
}
