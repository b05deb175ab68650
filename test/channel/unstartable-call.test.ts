/** A call whose chain could not be made (src/channel/unstartable-call.ts): one status, on the next tick. */
import { Metadata, type StatusObject, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { UnstartableCall } from '../../src/channel/unstartable-call.js';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('UnstartableCall', () => {
  it("ends once with UNAVAILABLE and the error's message, after start returns; writes are called back after it", async () => {
    const call = new UnstartableCall(new Error('Channel has been shut down'));
    const seen: string[] = [];
    call.start(new Metadata(), {
      onReceiveStatus: (s: StatusObject) => seen.push(`status ${s.code} ${s.details}`),
      onReceiveMetadata: () => seen.push('metadata'),
    });
    call.sendMessageWithContext({ callback: () => seen.push('write') }, Buffer.from('x'));
    call.start(new Metadata(), { onReceiveStatus: () => seen.push('second start') });
    call.cancelWithStatus(status.CANCELLED, 'too late');
    expect(seen).toEqual([]);
    await tick();
    expect(seen).toEqual([`status ${status.UNAVAILABLE} Channel has been shut down`, 'write']);
    expect(call.getPeer()).toBe('');
    expect(call.getAuthContext()).toBeNull();
  });

  it("cancelled before its start: the status is the caller's", async () => {
    const call = new UnstartableCall('not an Error');
    const statuses: StatusObject[] = [];
    call.cancelWithStatus(status.CANCELLED, 'Cancelled on client');
    call.start(new Metadata(), { onReceiveStatus: (s) => statuses.push(s) });
    await tick();
    expect(statuses).toEqual([
      { code: status.CANCELLED, details: 'Cancelled on client', metadata: expect.any(Metadata) },
    ]);
  });

  it("its status's trailers are of the caller's Metadata class (nice-grpc's own copy of grpc-js), cancelled or not", async () => {
    /** Stands for another copy of grpc-js's Metadata, as nice-grpc's `ClientError` checks with `instanceof`. */
    class ForeignMetadata extends Metadata {}
    const statuses: StatusObject[] = [];
    new UnstartableCall(new Error('Channel has been shut down')).start(new ForeignMetadata(), {
      onReceiveStatus: (s) => statuses.push(s),
    });
    const cancelled = new UnstartableCall(new Error('gone'));
    cancelled.cancelWithStatus(status.CANCELLED, 'Cancelled on client');
    cancelled.start(new ForeignMetadata(), { onReceiveStatus: (s) => statuses.push(s) });
    await tick();
    expect(statuses.map((s) => [s.code, s.metadata instanceof ForeignMetadata])).toEqual([
      [status.UNAVAILABLE, true],
      [status.CANCELLED, true],
    ]);
  });

  it('no listener, or one without onReceiveStatus: nothing is called, and nothing is thrown on the next tick', async () => {
    const call = new UnstartableCall(new Error('gone'));
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', record);
    try {
      call.start(new Metadata(), {});
      new UnstartableCall(new Error('gone too')).start(new Metadata());
      await tick();
    } finally {
      process.off('uncaughtException', record);
    }
    expect(uncaught).toEqual([]);
  });
});
