import { Backoff, type JitterStrategy } from '../retry/backoff.js';
import type { RetryGate } from '../shared/retry-gate.js';
import { seededRandom } from '../testing/seeded-random.js';
import { AdaptiveThrottleState, resolveAdaptiveThrottleRule } from '../throttle/adaptive-throttle-rule.js';
import { EventQueue } from './event-queue.js';
import type { SimPolicy } from './sim-policies.js';

/**
 * Fleet simulation: N clients, each running one retry policy with the package's own code (Backoff, RetryThrottle,
 * RetryBudget, the adaptive throttle's rule), against a server pool, in virtual time with no network.
 *
 * Model:
 * - Calls arrive open-loop: a Poisson process of `offeredRps` calls/s for the whole fleet, each call going to a
 *   client chosen uniformly (the same as N Poisson processes of offeredRps / N).
 * - Each attempt takes `networkMs` each way. The pool has `capacityRps × serviceMs / 1000` workers; an attempt
 *   takes a free worker for a service time uniform in [0.5, 1.5] × serviceMs, waits in a FIFO queue of up to
 *   `queueMs` of work when none is free, and is refused with UNAVAILABLE when the queue is full. A refusal costs a
 *   worker `rejectCostMs` (decoding, auth, logging), paid before queued work.
 * - The server does not learn that a client gave up on an attempt (no cancellation), so it works on abandoned
 *   attempts too; that wasted work is what makes retry storms metastable.
 * - A client gives up on an attempt after `attemptTimeoutMs` (a per-attempt timeout) and retries it; every call
 *   also has a deadline of `callDeadlineMs` covering all its attempts (A6).
 * - The outage: from `outageStartMs` for `outageMs` the pool is down. Attempts in it and arriving during it fail
 *   with UNAVAILABLE (connection refused) at no cost to the pool.
 */
export interface FleetSimulationConfig {
  clients: number;
  offeredRps: number;
  capacityRps: number;
  serviceMs: number;
  queueMs: number;
  rejectCostMs: number;
  networkMs: number;
  attemptTimeoutMs: number;
  callDeadlineMs: number;
  /** A6 retry policy of the retrying variants (maxAttempts comes from the SimPolicy). */
  initialBackoffMs: number;
  maxBackoffMs: number;
  backoffMultiplier: number;
  jitter: JitterStrategy;
  durationMs: number;
  outageStartMs: number;
  /** 0: no outage. */
  outageMs: number;
  /** Width of the report's time buckets. */
  bucketMs: number;
  seed: number;
}

export const DEFAULT_FLEET_SIMULATION: FleetSimulationConfig = Object.freeze({
  clients: 1000,
  offeredRps: 8000,
  capacityRps: 10_000,
  serviceMs: 10,
  queueMs: 2000,
  rejectCostMs: 0.5,
  networkMs: 1,
  attemptTimeoutMs: 500,
  callDeadlineMs: 5000,
  initialBackoffMs: 100,
  maxBackoffMs: 1000,
  backoffMultiplier: 2,
  jitter: 'a6',
  durationMs: 90_000,
  outageStartMs: 15_000,
  outageMs: 20_000,
  bucketMs: 500,
  seed: 1,
});

/** Counts per time bucket (index = floor(time / bucketMs)). */
export interface FleetTimeline {
  bucketMs: number;
  /** Calls started. */
  calls: number[];
  /** Calls that ended OK (goodput), by the time they ended. */
  ok: number[];
  /** Calls that ended with an error. */
  failed: number[];
  /** Attempts sent to the pool (retries and first attempts; locally rejected ones not included). */
  attempts: number[];
  /** Attempts the adaptive throttle rejected locally. */
  localRejections: number[];
  /** Attempts the pool finished after their client had given up (wasted work). */
  wasted: number[];
  /** Attempts the pool refused because its queue was full. */
  refused: number[];
  /** Queue length at the end of the bucket. */
  queue: number[];
}

export interface FleetSimulationResult {
  config: FleetSimulationConfig;
  policy: SimPolicy;
  timeline: FleetTimeline;
  /** Events processed (for the speed report). */
  events: number;
}

const OK = 0;
const DEADLINE_EXCEEDED = 4;
const UNAVAILABLE = 14;

interface SimClient {
  gate: RetryGate | undefined;
  adaptive: AdaptiveThrottleState | undefined;
}

interface SimCall {
  client: SimClient;
  deadlineAt: number;
  attempts: number;
  backoff: Backoff | undefined;
  ended: boolean;
}

interface SimAttempt {
  call: SimCall;
  /** The client stopped waiting for it (timed out, or the call ended). */
  abandoned: boolean;
  /** It got its answer. */
  answered: boolean;
}

enum Kind {
  NewCall,
  StartAttempt,
  Arrive,
  ServiceDone,
  Response,
  Timeout,
  OutageStart,
  OutageEnd,
  Sample,
}

interface SimEvent {
  kind: Kind;
  call?: SimCall;
  attempt?: SimAttempt | null;
  code?: number;
  epoch?: number;
}

/** Check a configuration; throws a RangeError naming the first bad field. */
export function checkFleetSimulationConfig(config: FleetSimulationConfig): void {
  const positive: Array<keyof FleetSimulationConfig> = [
    'offeredRps',
    'capacityRps',
    'serviceMs',
    'attemptTimeoutMs',
    'callDeadlineMs',
    'initialBackoffMs',
    'maxBackoffMs',
    'durationMs',
    'bucketMs',
  ];
  for (const key of positive) {
    const v = config[key];
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
      throw new RangeError(`fleet simulation: ${key} must be a number > 0, got ${String(v)}`);
    }
  }
  for (const key of ['queueMs', 'rejectCostMs', 'networkMs', 'outageStartMs', 'outageMs'] as const) {
    const v = config[key];
    if (!Number.isFinite(v) || v < 0) {
      throw new RangeError(`fleet simulation: ${key} must be a number >= 0, got ${v}`);
    }
  }
  if (!Number.isInteger(config.clients) || config.clients < 1 || config.clients > 100_000) {
    throw new RangeError(
      `fleet simulation: clients must be an integer in [1, 100000], got ${config.clients}`,
    );
  }
  if (config.backoffMultiplier < 1) {
    throw new RangeError(`fleet simulation: backoffMultiplier must be >= 1, got ${config.backoffMultiplier}`);
  }
  if (Math.round((config.capacityRps * config.serviceMs) / 1000) < 1) {
    throw new RangeError('fleet simulation: capacityRps × serviceMs must give at least one worker');
  }
}

/** Run one policy through the scenario. Deterministic: the same config and policy give the same result. */
export function runFleetSimulation(policy: SimPolicy, config: FleetSimulationConfig): FleetSimulationResult {
  checkFleetSimulationConfig(config);
  const random = seededRandom(config.seed);
  let now = 0;
  const clock = { now: () => now };
  const rule = policy.adaptive ? resolveAdaptiveThrottleRule('fleet simulation', policy.adaptive) : undefined;
  const clients: SimClient[] = Array.from({ length: config.clients }, () => ({
    gate: policy.gate?.(clock),
    adaptive: rule ? new AdaptiveThrottleState(rule) : undefined,
  }));
  const retryPolicy = {
    initialBackoffMs: config.initialBackoffMs,
    maxBackoffMs: config.maxBackoffMs,
    backoffMultiplier: config.backoffMultiplier,
  };

  const buckets = Math.ceil(config.durationMs / config.bucketMs);
  const zeros = () => new Array<number>(buckets).fill(0);
  const timeline: FleetTimeline = {
    bucketMs: config.bucketMs,
    calls: zeros(),
    ok: zeros(),
    failed: zeros(),
    attempts: zeros(),
    localRejections: zeros(),
    wasted: zeros(),
    refused: zeros(),
    queue: zeros(),
  };
  const bucket = () => Math.min(buckets - 1, Math.floor(now / config.bucketMs));

  // ---- the server pool ----
  const workers = Math.round((config.capacityRps * config.serviceMs) / 1000);
  const queueLimit = Math.floor((config.capacityRps * config.queueMs) / 1000);
  let busy = 0;
  let pendingRefusalWork = 0;
  let queue: SimAttempt[] = [];
  let queueHead = 0;
  let down = false;
  let epoch = 0;

  const events = new EventQueue<SimEvent>();
  let processed = 0;

  const respond = (attempt: SimAttempt, code: number, at: number) => {
    events.push(at, { kind: Kind.Response, attempt, code });
  };
  const startJob = (attempt: SimAttempt | null, ms: number) => {
    busy += 1;
    events.push(now + ms, { kind: Kind.ServiceDone, attempt, epoch });
  };
  const serviceTime = () => config.serviceMs * (0.5 + random());
  const queueLength = () => queue.length - queueHead;

  const arrive = (attempt: SimAttempt) => {
    if (down) {
      respond(attempt, UNAVAILABLE, now + config.networkMs);
    } else if (busy < workers) {
      startJob(attempt, serviceTime());
    } else if (queueLength() < queueLimit) {
      queue.push(attempt);
    } else {
      timeline.refused[bucket()]! += 1;
      respond(attempt, UNAVAILABLE, now + config.networkMs);
      if (config.rejectCostMs > 0) {
        pendingRefusalWork += 1;
      }
    }
  };
  const nextJob = () => {
    if (pendingRefusalWork > 0) {
      pendingRefusalWork -= 1;
      startJob(null, config.rejectCostMs);
      return;
    }
    if (queueHead < queue.length) {
      const attempt = queue[queueHead]!;
      queueHead += 1;
      if (queueHead > 4096 && queueHead * 2 > queue.length) {
        queue = queue.slice(queueHead);
        queueHead = 0;
      }
      startJob(attempt, serviceTime());
    }
  };

  // ---- the clients ----
  const endCall = (call: SimCall, code: number) => {
    if (call.ended) {
      return;
    }
    call.ended = true;
    if (code === OK) {
      timeline.ok[bucket()]! += 1;
      call.client.gate?.recordSuccess();
    } else {
      timeline.failed[bucket()]! += 1;
    }
  };
  const startAttempt = (call: SimCall) => {
    if (call.ended) {
      return;
    }
    call.attempts += 1;
    const adaptive = call.client.adaptive;
    if (adaptive && adaptive.decide(now, random()) >= 0) {
      // Rejected locally: UNAVAILABLE with a do-not-retry pushback; the engine counts it against its gate once.
      timeline.localRejections[bucket()]! += 1;
      call.client.gate?.recordFailure();
      endCall(call, UNAVAILABLE);
      return;
    }
    const attempt: SimAttempt = { call, abandoned: false, answered: false };
    timeline.attempts[bucket()]! += 1;
    events.push(now + config.networkMs, { kind: Kind.Arrive, attempt });
    const timeoutAt = Math.min(now + config.attemptTimeoutMs, call.deadlineAt);
    events.push(timeoutAt, { kind: Kind.Timeout, attempt });
  };
  /** The attempt failed (`code`, or timed out); retry it if the policy and the gate allow. */
  const afterFailure = (call: SimCall, code: number) => {
    if (call.ended) {
      return;
    }
    const gate = call.client.gate;
    gate?.recordFailure();
    if (call.attempts >= policy.maxAttempts || now >= call.deadlineAt) {
      endCall(call, code);
      return;
    }
    if (gate && !gate.allowAttempt('retry')) {
      endCall(call, code);
      return;
    }
    call.backoff ??= new Backoff(retryPolicy, config.jitter, random);
    const delay = call.backoff.next();
    if (now + delay >= call.deadlineAt) {
      endCall(call, DEADLINE_EXCEEDED);
      return;
    }
    events.push(now + delay, { kind: Kind.StartAttempt, call });
  };

  // ---- the scenario ----
  const meanGapMs = 1000 / config.offeredRps;
  events.push(-meanGapMs * Math.log(1 - random()), { kind: Kind.NewCall });
  if (config.outageMs > 0) {
    events.push(config.outageStartMs, { kind: Kind.OutageStart });
    events.push(config.outageStartMs + config.outageMs, { kind: Kind.OutageEnd });
  }
  for (let t = config.bucketMs; t <= config.durationMs; t += config.bucketMs) {
    events.push(t - 1e-6, { kind: Kind.Sample });
  }

  while (events.size > 0 && events.peekTime() < config.durationMs) {
    now = events.peekTime();
    const event = events.pop()!;
    processed += 1;
    switch (event.kind) {
      case Kind.NewCall: {
        const client = clients[Math.floor(random() * clients.length)]!;
        const call: SimCall = {
          client,
          deadlineAt: now + config.callDeadlineMs,
          attempts: 0,
          backoff: undefined,
          ended: false,
        };
        timeline.calls[bucket()]! += 1;
        client.gate?.recordCall?.();
        startAttempt(call);
        events.push(now - meanGapMs * Math.log(1 - random()), { kind: Kind.NewCall });
        break;
      }
      case Kind.StartAttempt:
        startAttempt(event.call!);
        break;
      case Kind.Arrive:
        arrive(event.attempt!);
        break;
      case Kind.ServiceDone: {
        if (event.epoch !== epoch) {
          // The pool went down while this was in service: the attempt fails.
          if (event.attempt) {
            respond(event.attempt, UNAVAILABLE, now + config.networkMs);
          }
          break;
        }
        busy -= 1;
        const attempt = event.attempt;
        if (attempt) {
          if (attempt.abandoned) {
            timeline.wasted[bucket()]! += 1;
          }
          respond(attempt, OK, now + config.networkMs);
        }
        nextJob();
        break;
      }
      case Kind.Response: {
        const attempt = event.attempt!;
        if (attempt.abandoned || attempt.answered) {
          break;
        }
        attempt.answered = true;
        const call = attempt.call;
        const accepted = event.code === OK;
        call.client.adaptive?.recordResponse(now, accepted);
        if (accepted) {
          endCall(call, OK);
        } else {
          afterFailure(call, event.code!);
        }
        break;
      }
      case Kind.Timeout: {
        const attempt = event.attempt!;
        if (attempt.answered || attempt.abandoned) {
          break;
        }
        attempt.abandoned = true;
        const call = attempt.call;
        // A per-attempt timeout counts as not accepted, as the interceptor counts a perAttemptRecvTimeout cancel.
        call.client.adaptive?.recordResponse(now, false);
        if (now >= call.deadlineAt) {
          call.client.gate?.recordFailure();
          endCall(call, DEADLINE_EXCEEDED);
        } else {
          afterFailure(call, DEADLINE_EXCEEDED);
        }
        break;
      }
      case Kind.OutageStart: {
        down = true;
        epoch += 1;
        busy = 0;
        pendingRefusalWork = 0;
        for (let i = queueHead; i < queue.length; i++) {
          respond(queue[i]!, UNAVAILABLE, now + config.networkMs);
        }
        queue = [];
        queueHead = 0;
        break;
      }
      case Kind.OutageEnd:
        down = false;
        break;
      case Kind.Sample:
        timeline.queue[bucket()] = queueLength();
        break;
    }
  }
  return { config, policy, timeline, events: processed };
}
