import type { CancelLimiter, CancelLimits } from '../shared/cancel-limiter.js';
import { type Clock, systemClock } from '../shared/clock.js';
import { CancelRateLimiter, type CancelRateLimiterSettings } from './cancel-rate-limiter.js';

/** Limiters held before idle ones are looked for and dropped (the bound doubles while none is idle). */
const SWEEP_AT = 64;

/**
 * One {@link CancelRateLimiter} per connection, named by the calls' target. Node's rapid-reset guard counts resets
 * per HTTP/2 connection, and grpc-js puts the channels of every client with the same target and options on one
 * connection (its global subchannel pool), so a limit per interceptor let several clients of one server reset past
 * the guard together. A limiter at rest (its burst whole, no loser waiting) is the same as a new one, so such
 * limiters are dropped once many are held: targets that come and go do not pile up. @internal
 */
export class PerConnectionCancelLimits implements CancelLimits {
  private readonly limiters = new Map<string, CancelRateLimiter>();
  private sweepAt = SWEEP_AT;

  constructor(private readonly settings: CancelRateLimiterSettings) {}

  forTarget(target: string): CancelLimiter {
    const held = this.limiters.get(target);
    if (held !== undefined) {
      return held;
    }
    if (this.limiters.size >= this.sweepAt) {
      this.dropLimitersAtRest();
    }
    const limiter = new CancelRateLimiter(this.settings);
    this.limiters.set(target, limiter);
    return limiter;
  }

  /** Targets with a limiter held (for tests and diagnostics). */
  get size(): number {
    return this.limiters.size;
  }

  private dropLimitersAtRest(): void {
    for (const [target, limiter] of this.limiters) {
      if (limiter.queued === 0 && limiter.tokens >= limiter.burst) {
        this.limiters.delete(target);
      }
    }
    this.sweepAt = Math.max(SWEEP_AT, 2 * this.limiters.size);
  }
}

/**
 * The process's per-connection limits for these settings: every interceptor made with the same rate, burst, cap
 * and clock shares them, as the clients behind those interceptors share grpc-js's connections. They are held
 * weakly: once no interceptor holds the limits of some settings, they go, so an application that makes interceptors
 * with settings of its own each time (a burst worked out per client) does not pile them up. @internal
 */
export function sharedPerConnectionLimits(settings: CancelRateLimiterSettings): PerConnectionCancelLimits {
  const clockKey = settings.clock === systemClock ? shared.systemClockKey : settings.clock;
  let byClock = registry.get(clockKey);
  if (byClock === undefined) {
    byClock = new Map();
    registry.set(clockKey, byClock);
  }
  const key = `${settings.ratePerSecond}/${settings.burst}/${settings.loserCapMs}`;
  let limits = byClock.get(key)?.deref();
  if (limits === undefined) {
    limits = new PerConnectionCancelLimits(settings);
    byClock.set(key, new WeakRef(limits));
    collected.register(limits, { byClock, key });
  }
  return limits;
}

/** How many settings' limits are held for `clock` (for tests). @internal */
export function sharedSettingsHeld(clock: Clock): number {
  return registry.get(clock === systemClock ? shared.systemClockKey : clock)?.size ?? 0;
}

/**
 * The registry of the limits, kept on `globalThis` under a registered symbol: an application may load both the ESM
 * and the CJS build of the package (an ESM app with a CommonJS library), and the interceptors of both reach a server
 * over one connection, whose guard counts the resets of both. Each copy has its own `systemClock` object: the
 * registry names it by one shared key. (Versioned: another version's limits may take other settings.)
 */
const SHARED_LIMITS = Symbol.for('grpc-retry-hedging.per-connection-cancel-limits.v1');
const processWide = globalThis as {
  [SHARED_LIMITS]?: {
    readonly registry: WeakMap<object, Map<string, WeakRef<PerConnectionCancelLimits>>>;
    readonly systemClockKey: object;
  };
};
processWide[SHARED_LIMITS] ??= { registry: new WeakMap(), systemClockKey: {} };
const shared = processWide[SHARED_LIMITS];
const registry = shared.registry;

/** Forgets the key of limits no interceptor holds any more (unless new limits took the key meanwhile). */
const collected = new FinalizationRegistry<{
  readonly byClock: Map<string, WeakRef<PerConnectionCancelLimits>>;
  readonly key: string;
}>(({ byClock, key }) => {
  if (byClock.get(key)?.deref() === undefined) {
    byClock.delete(key);
  }
});

/** The one limiter an application passed: it counts every cancel, whatever the connection. @internal */
export function oneLimiterForAll(limiter: CancelLimiter): CancelLimits {
  return { forTarget: () => limiter };
}
