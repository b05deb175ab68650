/** grpc-js's deadline diagnostic of a later attempt, relabelled as that attempt's (src/retry/attempt-deadline-details.ts). */
import { Metadata, status as Status, type StatusObject } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { withAttemptDeadline } from '../../src/retry/attempt-deadline-details.js';
import { engineCall, hedgingPolicy } from '../helpers/engine.js';

const status = (code: Status, details: string) => ({ code, details, metadata: new Metadata() });

describe('withAttemptDeadline', () => {
  it("relabels grpc-js's time as the current attempt's, counts the attempts before it, and keeps the rest", () => {
    const given = status(
      Status.DEADLINE_EXCEEDED,
      'Deadline exceeded after 0.645s,LB pick: 0.001s,remote_addr=a',
    );
    const shown = withAttemptDeadline(given, 3);
    expect(shown).toEqual({
      code: Status.DEADLINE_EXCEEDED,
      details: 'Deadline exceeded,previous attempts: 2,current attempt: 0.645s,LB pick: 0.001s,remote_addr=a',
      metadata: given.metadata,
    });
    expect(given.details).toBe('Deadline exceeded after 0.645s,LB pick: 0.001s,remote_addr=a');
  });

  it('returns any other status as it is', () => {
    const cases: [Status, string, number][] = [
      [Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.100s', 1], // the first attempt: the call's own time
      [Status.DEADLINE_EXCEEDED, 'Deadline exceeded', 2], // grpc-js with no start time, or the engine's own
      [Status.DEADLINE_EXCEEDED, 'backend took too long', 2], // a server's
      [Status.UNAVAILABLE, 'Deadline exceeded after 0.100s', 2],
    ];
    for (const [code, details, attempt] of cases) {
      const given = status(code, details);
      expect(withAttemptDeadline(given, attempt)).toBe(given);
    }
  });
});

describe('a DEADLINE_EXCEEDED with no details (an interceptor below, in plain JavaScript), after two attempts', () => {
  // Found by differential testing against a bare grpc-js client, which hands such a status on as it is: the
  // relabelling read `details.startsWith`, and threw out of grpc-js's status callback.
  const noDetails = { code: Status.DEADLINE_EXCEEDED, metadata: new Metadata() } as unknown as StatusObject;

  it('is returned as it is', () => {
    expect(withAttemptDeadline(noDetails, 2)).toBe(noDetails);
  });

  it('ends a hedged call with that status, once', async () => {
    const policy = hedgingPolicy({
      maxAttempts: 2,
      hedgingDelay: '0.01s',
      nonFatalStatusCodes: ['UNAVAILABLE'],
    });
    const h = engineCall(policy, { deadlineMs: 1000 });
    h.clock.advance(20);
    expect(h.attempts).toHaveLength(2);
    h.attempt(0).listener?.onReceiveStatus?.(noDetails);
    h.attempt(1).listener?.onReceiveStatus?.(noDetails);
    await h.settle();
    expect(h.received.statuses).toHaveLength(1);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toBeUndefined();
  });
});
