import { it } from '@fast-check/vitest';
import { type InterceptorOptions, Metadata, type StatusObject } from '@grpc/grpc-js';
import { afterAll, afterEach, describe, expect, vi } from 'vitest';
import type { InterceptingCallInterface } from '../../src/shared/grpc-types.js';
import { createAdaptiveThrottleInterceptor } from '../../src/throttle/adaptive-throttle.js';
import { FakeAttempt, Status } from '../helpers/engine.js';
import { propertyParams, propertyTimeout } from './fuzz-params.js';
import { coverage, runScenario, scenarioArb, settle, type TScenario, violations } from './throttle-steps.js';

// The adaptive throttle (src/throttle/adaptive-throttle.ts) under random interleavings: alone over a scripted next
// call, and under the retry interceptor (retry and hedging policies), with the application's writes, half-close,
// reads and cancels, the next call's headers, messages and statuses (codes the throttle counts as refusals or not,
// with pushback), time passing, random draws that make it reject, and listeners (the throttle's onEvent, the
// engine's onEvent, the application's) that cancel or throw. See `violations` in ./throttle-steps.ts.

afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(() => {
  if (process.env.THROTTLE_FUZZ_STATS) console.log(coverage);
});

async function holds(s: TScenario): Promise<void> {
  const r = await runScenario(s);
  const broken = violations(r);
  expect(broken, broken.join('\n')).toEqual([]);
}

describe('the adaptive throttle keeps its invariants under random interleavings', () => {
  for (const mode of ['alone', 'retry', 'hedging'] as const) {
    const name = `throttle interleavings (${mode})`;
    it.prop([scenarioArb(mode)], propertyParams<[TScenario]>(name, 1500))(
      name,
      holds,
      propertyTimeout(30_000),
    );
  }
});

describe('counterexamples the property found', () => {
  // Found by the property (alone, onEvent cancelling at the rejection): the listener runs while the call is being
  // decided, and its cancel was lost; the call ended with the local rejection though the application cancelled it.
  it('an onEvent listener that cancels the rejected call: the call ends with the cancel', async () => {
    const clock = { now: () => 0 };
    let call: InterceptingCallInterface | undefined;
    const throttle = createAdaptiveThrottleInterceptor({
      clock,
      random: () => 0,
      onEvent: () => call?.cancelWithStatus(Status.CANCELLED, 'cancelled from onEvent'),
    });
    const options = { method_definition: { path: '/pkg.Svc/Do' } } as unknown as InterceptorOptions;
    const primeNext = new FakeAttempt(0, options);
    (throttle(options, () => primeNext) as unknown as InterceptingCallInterface).start(new Metadata(), {});
    primeNext.fail(Status.UNAVAILABLE); // one refusal: P = 1/9, and the draw 0 rejects
    const made = new FakeAttempt(1, options);
    call = throttle(options, () => made) as unknown as InterceptingCallInterface;
    const statuses: StatusObject[] = [];
    call.start(new Metadata(), { onReceiveStatus: (s) => statuses.push(s) });
    await settle();
    // The next call made with it never went out: cancelled, unstarted.
    expect(made.started).toBe(false);
    expect(made.cancelled).toEqual({
      code: Status.CANCELLED,
      details: 'cancelled from onEvent',
    });
    expect(throttle.counters()).toMatchObject({ calls: 2, rejected: 1 });
    expect(statuses).toHaveLength(1);
    // Observed: 14 (UNAVAILABLE), 'adaptive throttle: rejected locally (...)'.
    expect(statuses[0]?.code).toBe(Status.CANCELLED);
  });
});
