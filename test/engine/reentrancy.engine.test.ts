/**
 * The application and every event listener may re-enter the call at any moment: cancel, write, half-close or read
 * from inside any event. Nothing may be thrown (a throw here would escape from a grpc-js callback), the call ends
 * exactly once, and no attempt or timer is left behind.
 */
import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { RetryEvent, RetryEventType } from '../../src/retry/events.js';
import {
  type CallType,
  type EngineCall,
  engineCall,
  hedgingPolicy,
  retryPolicy,
  Status,
} from '../helpers/engine.js';

type Action = 'cancel' | 'write' | 'half-close' | 'read';
const ACTIONS: readonly Action[] = ['cancel', 'write', 'half-close', 'read'];

interface Scenario {
  readonly config: object;
  readonly type: CallType;
  /** Drives the call's attempts to an end; each step is guarded, since the call may have ended already. */
  run(call: EngineCall): Promise<void>;
}

/** Answers the attempts of a call whatever the listener did, until the call has its status. */
async function answerUntilEnded(call: EngineCall, answer: (index: number) => void): Promise<void> {
  for (let round = 0; round < 20 && call.received.statuses.length === 0; round++) {
    for (const [index, attempt] of call.attempts.entries()) {
      if (attempt.started && !attempt.ended && !attempt.cancelled) {
        answer(index);
      }
    }
    await call.settle();
    if (call.received.statuses.length === 0) {
      call.clock.advance(call.clock.nextDueInMs() ?? 0);
    }
    await call.settle();
  }
}

const SCENARIOS: Record<string, Scenario> = {
  'unary retry: UNAVAILABLE, then OK': {
    config: retryPolicy({ maxAttempts: 3 }),
    type: 'unary',
    run: (call) =>
      answerUntilEnded(call, (i) => (i === 0 ? call.attempt(i).fail() : call.attempt(i).succeed())),
  },
  'bidi retry: UNAVAILABLE, then headers, echo, OK': {
    config: retryPolicy({ maxAttempts: 3 }),
    type: 'bidi',
    run: (call) =>
      answerUntilEnded(call, (i) => {
        const attempt = call.attempt(i);
        if (i === 0) {
          attempt.fail();
        } else {
          attempt.headers();
          attempt.message('echo');
          attempt.status(Status.OK, 'OK');
        }
      }),
  },
  'unary hedging: the hedge commits, the original is cancelled': {
    config: hedgingPolicy({ maxAttempts: 2, hedgingDelay: '0.1s' }),
    type: 'unary',
    run: async (call) => {
      call.clock.advance(100);
      await call.settle();
      await answerUntilEnded(call, (i) => (i === 0 ? undefined : call.attempt(i).succeed()));
      // The original was cancelled when the hedge committed; its status arrives after the call's.
      for (const attempt of call.attempts) {
        if (!attempt.ended && !attempt.cancelled) attempt.fail();
      }
    },
  },
  'unary hedging: a non-fatal failure sends the next hedge at once': {
    config: hedgingPolicy({ maxAttempts: 3, hedgingDelay: '1s' }),
    type: 'unary',
    run: (call) =>
      answerUntilEnded(call, (i) => (i === 0 ? call.attempt(i).fail() : call.attempt(i).succeed())),
  },
};

/** The event types each scenario emits, found by running it once without a re-entrant listener. */
async function eventTypesOf(scenario: Scenario): Promise<RetryEventType[]> {
  const call = engineCall(scenario.config, { type: scenario.type, deadlineMs: 10_000 });
  if (scenario.type === 'bidi' || scenario.type === 'client-stream') {
    call.call.sendMessageWithContext({}, 'm1');
  }
  await scenario.run(call);
  return [...new Set(call.events.map((e) => e.type))];
}

function act(call: EngineCall, action: Action): void {
  switch (action) {
    case 'cancel':
      call.call.cancelWithStatus(Status.CANCELLED, 'cancelled from a listener');
      return;
    case 'write':
      call.call.sendMessageWithContext({}, 'from-listener');
      return;
    case 'half-close':
      call.call.halfClose();
      return;
    case 'read':
      call.call.startRead();
      return;
  }
}

describe('re-entrant listeners', () => {
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    describe(name, async () => {
      const types = await eventTypesOf(scenario);
      it('emits the events the matrix covers', () => {
        expect(types).toContain('call-start');
        expect(types).toContain('call-end');
        expect(types.length).toBeGreaterThanOrEqual(5);
      });
      for (const type of types) {
        for (const action of ACTIONS) {
          it(`${action} inside ${type}: nothing thrown, one status, nothing left behind`, async () => {
            let harness: EngineCall | undefined;
            let done = false;
            const listener = (event: RetryEvent) => {
              if (event.type === type && !done && harness) {
                done = true;
                act(harness, action);
              }
            };
            harness = engineCall(scenario.config, {
              type: scenario.type,
              deadlineMs: 10_000,
              start: false,
              interceptor: { onEvent: listener },
            });
            const call = harness;
            call.start();
            if (scenario.type === 'bidi' || scenario.type === 'client-stream') {
              call.call.sendMessageWithContext({}, 'm1');
            }
            await expect(scenario.run(call)).resolves.toBeUndefined();
            // A call the scenario could not finish (a half-close it never got, say) ends by cancel.
            if (call.received.statuses.length === 0) {
              call.call.cancelWithStatus(Status.CANCELLED, 'test over');
            }
            await call.settle();
            expect(call.received.statuses).toHaveLength(1);
            if (action === 'cancel' && type !== 'call-end') {
              expect(call.status.code).toBe(Status.CANCELLED);
            } else {
              expect([Status.OK, Status.CANCELLED]).toContain(call.status.code);
              expect(call.status.code).not.toBe(Status.INTERNAL);
            }
            // Every attempt that went out ended or was cancelled; no timer is left.
            for (const attempt of call.attempts) {
              if (attempt.started) {
                expect(attempt.ended || attempt.cancelled !== undefined).toBe(true);
              }
            }
            expect(call.clock.pendingTimers).toBe(0);
          });
        }
      }
    });
  }
});

describe('writes and reads made inside attempt-start reach the attempt only once it has started', () => {
  it('a write and a read from attempt-start go out after start, in order', async () => {
    let harness: EngineCall | undefined;
    let sentBeforeStart: number | undefined;
    let readsBeforeStart: number | undefined;
    harness = engineCall(retryPolicy({ maxAttempts: 3 }), {
      type: 'bidi',
      start: false,
      interceptor: {
        onEvent: (e) => {
          if (e.type === 'attempt-start' && e.attempt === 1 && harness) {
            harness.call.sendMessageWithContext({}, 'early');
            harness.call.startRead();
            sentBeforeStart = harness.attempt(0).messages.length;
            readsBeforeStart = harness.attempt(0).reads;
          }
        },
      },
    });
    const call = harness;
    call.call.start(new Metadata(), {});
    expect(sentBeforeStart).toBe(0);
    expect(readsBeforeStart).toBe(0);
    expect(call.attempt(0).messages).toEqual(['early']);
    expect(call.attempt(0).reads).toBe(1);
  });
});
