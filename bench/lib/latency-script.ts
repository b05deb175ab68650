/**
 * The latency script of bench/adaptive.ts: whether an attempt is slow, and its fast-path factor, as a function of
 * (seed, phase, call index, attempt number) alone. Every variant of one run meets the same script: call 17 of
 * regime B is slow on its first attempt and fast on its hedge for no hedging, for every static delay and for the
 * adaptive delay alike (common random numbers). Variants then differ only by their policy and the machine's noise,
 * not by how many slow attempts their own draws held. First attempts are slow in exactly the regime's share of each
 * block of 100 calls (see {@link scriptedAttempt}); hedges draw theirs independently.
 */
import { seededRandom } from '../../src/testing/seeded-random.js';

/** Request header carrying a call's place in the script: `<phase>:<index>` (index from 0, learning calls included). */
export const SCRIPT_CALL_METADATA_KEY = 'x-bench-call';

/** What the script holds for one attempt. */
export interface ScriptedAttempt {
  slow: boolean;
  /** The fast path's factor, in [0.5, 1.5). */
  fastFactor: number;
  /** The attempt's further uniform draws, after the two above (a simulation draws its noise from them). */
  random: () => number;
}

/** First attempts are slow in exactly this many of each block of this many calls (at seeded positions). */
export const SLOW_BLOCK_CALLS = 100;

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

/** Tag of the draw that places a block's slow first attempts (apart from any attempt's own draws). */
const BLOCK_TAG = 0xb10c;

/** The positions (0 to SLOW_BLOCK_CALLS − 1) of the slow first attempts in block `block` of phase `phase`. */
function slowPositions(seed: number, phase: number, block: number, slowFraction: number): Set<number> {
  const count = Math.round(slowFraction * SLOW_BLOCK_CALLS);
  const random = seededRandom(mix([seed, phase, block, BLOCK_TAG]));
  const order = Array.from({ length: SLOW_BLOCK_CALLS }, (_, i) => i);
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(random() * (SLOW_BLOCK_CALLS - i));
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  return new Set(order.slice(0, count));
}

let cachedBlock: { key: string; positions: Set<number> } | undefined;

/** The script's seed: `chosen`, or one drawn at random when it is 0 (printed with the results, so it can be repeated). */
export function scriptSeed(chosen: number): number {
  return chosen > 0 ? chosen : 1 + Math.floor(Math.random() * 0x7fffffff);
}

/**
 * The attempt numbered `attempt` (0 for the first, the `grpc-previous-rpc-attempts` value for a hedge) of call
 * `index` of phase `phase` (0, 1, 2) under `seed`. First attempts are slow in exactly `slowFraction` of each block
 * of {@link SLOW_BLOCK_CALLS} calls (rounded to whole calls), at seeded positions in it, so every phase's measured
 * calls hold the regime's share (5% of 1,200: 60) and no run's targets move with the luck of its draws (a Bernoulli
 * 5% over 1,200 calls is 5% ± 0.6%, and the targets allow 0.01 of extra load above maxExtraLoad); slow first
 * attempts still come in runs now and then, as independent draws do. A hedge is slow with probability
 * `slowFraction`, independently.
 */
export function scriptedAttempt(
  seed: number,
  phase: number,
  index: number,
  attempt: number,
  slowFraction: number,
): ScriptedAttempt {
  const random = seededRandom(mix([seed, phase, index, attempt]));
  const drawn = random() < slowFraction;
  let slow = drawn;
  if (attempt === 0) {
    const block = Math.floor(index / SLOW_BLOCK_CALLS);
    const key = `${seed}:${phase}:${block}:${slowFraction}`;
    if (cachedBlock?.key !== key) {
      cachedBlock = { key, positions: slowPositions(seed, phase, block, slowFraction) };
    }
    slow = cachedBlock.positions.has(index % SLOW_BLOCK_CALLS);
  }
  return { slow, fastFactor: 0.5 + random(), random };
}

/**
 * One uniform draw in [0, 1) for block `block` of phase `phase` under a tag of the caller's (apart from every
 * attempt's own draws and from the slow positions): the same for every variant of a run.
 */
export function blockDraw(seed: number, phase: number, block: number, tag: number): number {
  return seededRandom(mix([seed, phase, block, tag]))();
}

/** Parses a {@link SCRIPT_CALL_METADATA_KEY} value; undefined when it is absent or malformed. */
export function parseScriptCall(value: unknown): { phase: number; index: number } | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d+):(\d+)$/.exec(value);
  if (!match) return undefined;
  return { phase: Number(match[1]), index: Number(match[2]) };
}
