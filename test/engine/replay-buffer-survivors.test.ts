/**
 * The replay buffer's promises that the other suites leave unchecked: when a writer is called back while several
 * attempts hold its message, which resends are read again (and what that costs), how a message that stops
 * serializing is judged, and the write flags of the very first message.
 */
import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../src/retry/buffer-pool.js';
import { ReplayBuffer } from '../../src/retry/replay-buffer.js';
import { engineCall, hedgingPolicy, Status } from '../helpers/engine.js';

const roomy = () => new BufferPool(100_000, 100_000, true);
const size = (m: unknown) => Buffer.from(String(m));

/** A serializer that counts its calls, and throws for a message whose `broken` is set. */
function countingSerializer() {
  const counter = {
    calls: 0,
    serialize: (m: unknown): Uint8Array => {
      counter.calls += 1;
      if ((m as { broken?: boolean }).broken) {
        throw new Error('cannot serialize');
      }
      return size(m);
    },
  };
  return counter;
}

/** A message object the application may change (or break) after writing it. */
function mutable(text: string) {
  const message = { text, broken: false, toString: () => message.text };
  return message;
}

function write(call: { sendMessageWithContext: (c: object, m: unknown) => void }, message: unknown) {
  const done = { called: 0 };
  call.sendMessageWithContext({ callback: () => (done.called += 1) }, message);
  return done;
}

describe('engine: a writer whose message two hedges are writing at once', () => {
  function twoHedgesWithWritesPending() {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 }), { type: 'client-stream' });
    const [leader, hedge] = [h.attempt(0), h.attempt(1)];
    leader.autoCompleteWrites = false;
    hedge.autoCompleteWrites = false;
    const done = write(h.call, Buffer.from('0'));
    expect([leader.messages, hedge.messages]).toEqual([[Buffer.from('0')], [Buffer.from('0')]]);
    return { h, leader, hedge, done };
  }

  it('is not called back when the first of them completes its write, only when the second does', async () => {
    const { h, leader, hedge, done } = twoHedgesWithWritesPending();
    leader.pendingWrites.shift()?.();
    await h.settle();
    expect(done.called).toBe(0); // the hedge may still read the object: the writer must not reuse it yet
    hedge.pendingWrites.shift()?.();
    expect(done.called).toBe(1);
  });

  it('waits for the leader too when the hedge completes first, and is called back once', async () => {
    const { h, leader, hedge, done } = twoHedgesWithWritesPending();
    hedge.pendingWrites.shift()?.();
    await h.settle();
    expect(done.called).toBe(0);
    leader.pendingWrites.shift()?.();
    await h.settle();
    expect(done.called).toBe(1);
    h.call.halfClose();
    leader.succeed();
    await h.settle();
    expect(h.status.code).toBe(Status.OK);
    expect(done.called).toBe(1);
  });
});

describe('ReplayBuffer: resends read a message again only when they must', () => {
  it('the first attempt handed a message sends it without serializing it again (a call never resent pays once)', () => {
    const s = countingSerializer();
    const buffer = new ReplayBuffer(roomy(), s.serialize);
    buffer.append(mutable('a'), undefined, undefined);
    buffer.append(mutable('b'), undefined, undefined);
    expect(s.calls).toBe(2); // the snapshots, on the way in
    expect([buffer.handOver(0), buffer.handOver(1)]).toEqual([true, true]);
    expect(s.calls).toBe(2);
  });

  it('the first attempt handed a message sends it as it is: only a resend is checked against what was written', () => {
    const buffer = new ReplayBuffer(roomy(), size);
    const message = mutable('a');
    buffer.append(message, undefined, undefined);
    message.text = 'b';
    expect(buffer.handOver(0)).toBe(true);
    // A second attempt would carry other bytes than the first: refused.
    expect(buffer.handOver(0)).toBe(false);
  });

  it('a message handed out and changed afterwards is refused to the next attempt, unchanged ones still go', () => {
    const buffer = new ReplayBuffer(roomy(), size);
    const changed = mutable('a');
    buffer.append(changed, undefined, undefined);
    buffer.append(mutable('b'), undefined, undefined);
    expect([buffer.handOver(0), buffer.handOver(1)]).toEqual([true, true]);
    changed.text = 'x';
    expect(buffer.handOver(1)).toBe(true);
    expect(buffer.handOver(0)).toBe(false);
  });

  it('a hedge handed a message whose writer still waits takes it as is, without serializing it again', () => {
    const s = countingSerializer();
    const buffer = new ReplayBuffer(roomy(), s.serialize);
    const message = mutable('a');
    let called = 0;
    buffer.append(message, undefined, () => called++);
    expect(buffer.handOver(0)).toBe(true); // the leader
    // The writer has not been told it may reuse the object: what it holds is what it wrote.
    message.text = 'b';
    expect(buffer.handOver(0)).toBe(true); // the hedge
    expect(s.calls).toBe(1);
    expect(buffer.writeDone(0)).toBeUndefined();
    buffer.writeDone(0)?.();
    expect(called).toBe(1);
  });

  it('once its writer was called back, a message is read again before a resend, and refused if it changed', () => {
    const buffer = new ReplayBuffer(roomy(), size);
    const message = mutable('a');
    let called = 0;
    buffer.append(message, undefined, () => called++);
    expect(buffer.handOver(0)).toBe(true);
    buffer.writeDone(0)?.();
    expect(called).toBe(1);
    message.text = 'reused';
    expect(buffer.handOver(0)).toBe(false);
  });

  it('a message that did not serialize is handed to every attempt as is: each fails with the serializer error', () => {
    const s = countingSerializer();
    const buffer = new ReplayBuffer(roomy(), s.serialize);
    const bad = mutable('a');
    bad.broken = true;
    buffer.append(bad, undefined, undefined);
    expect(buffer.handOver(0)).toBe(true);
    // Not taken for a changed message (which would end the attempt with another error than its own).
    expect(buffer.handOver(0)).toBe(true);
  });

  it('a message written after the commit goes as it is, however often it is handed out (nothing to check it against)', () => {
    const buffer = new ReplayBuffer(roomy(), size);
    buffer.append('a', undefined, undefined);
    buffer.release();
    const late = mutable('late');
    buffer.append(late, undefined, undefined);
    expect(buffer.handOver(1)).toBe(true);
    late.text = 'changed';
    expect(buffer.handOver(1)).toBe(true);
  });
});

describe('ReplayBuffer: a message that stops serializing', () => {
  it('after it was written is unserializable (what is known of it): no further attempt resends it', () => {
    const buffer = new ReplayBuffer(roomy(), countingSerializer().serialize);
    const message = mutable('a');
    buffer.append(message, undefined, undefined);
    message.broken = true;
    expect(buffer.replayable()).toBe('unserializable');
  });

  it('after its writer was called back is refused to the next attempt', () => {
    const buffer = new ReplayBuffer(roomy(), countingSerializer().serialize);
    const message = mutable('a');
    buffer.append(message, undefined, () => {});
    buffer.handOver(0);
    buffer.writeDone(0)?.();
    message.broken = true;
    expect(buffer.handOver(0)).toBe(false);
  });

  it('while it is being checked (it reads differently, then throws) is taken as unserializable, not as a crash', () => {
    let calls = 0;
    const buffer = new ReplayBuffer(roomy(), (m) => {
      calls += 1;
      if (calls === 3) throw new Error('cannot serialize');
      return size(calls === 1 ? m : `${String(m)}, then other bytes`);
    });
    buffer.append('a', undefined, undefined);
    expect(buffer.replayable()).toBe('unserializable');
  });

  it('whose serializer throws at the check before a retry is unserializable, not changed: the object may be as it was', () => {
    let calls = 0;
    const buffer = new ReplayBuffer(roomy(), (m) => {
      calls += 1;
      if (calls === 2) throw new Error('cannot serialize now');
      return size(m);
    });
    buffer.append('a', undefined, undefined);
    expect(buffer.replayable()).toBe('unserializable');
  });

  it('from the start is reported unserializable (not changed), whether resends are checked or not', () => {
    const broken = () => {
      const message = mutable('a');
      message.broken = true;
      return message;
    };
    for (const checkResends of [true, false]) {
      const buffer = new ReplayBuffer(roomy(), countingSerializer().serialize, checkResends);
      buffer.append('fine', undefined, undefined);
      buffer.append(broken(), undefined, undefined);
      expect({ checkResends, verdict: buffer.replayable() }).toEqual({
        checkResends,
        verdict: 'unserializable',
      });
    }
  });
});

describe('ReplayBuffer: writers', () => {
  it('a buffer no writer waits on hands out no callback, and a completed write releases nothing', () => {
    const buffer = new ReplayBuffer(roomy(), size);
    buffer.append('a', undefined, undefined);
    expect(buffer.handOver(0)).toBe(true);
    expect(buffer.writeDone(0)).toBeUndefined();
    expect(buffer.takeCallback(0)).toBeUndefined();
    expect(buffer.releaseHeld()).toEqual([]);
  });

  it('a callback held while attempts are handed a message is released once, after the last holder is done', () => {
    const buffer = new ReplayBuffer(roomy(), size);
    let called = 0;
    buffer.append('a', undefined, () => called++);
    buffer.holdReleases();
    buffer.handOver(0);
    expect(buffer.writeDone(0)).toBeUndefined(); // held: another attempt is about to be handed it
    buffer.handOver(0);
    expect(buffer.releaseHeld()).toEqual([]);
    const callback = buffer.writeDone(0);
    callback?.();
    expect(called).toBe(1);
    expect(buffer.takeCallback(0)).toBeUndefined();
  });
});

describe('ReplayBuffer: write flags', () => {
  it('of the first message are kept, when it is the only one to have any', () => {
    const buffer = new ReplayBuffer(roomy(), size);
    buffer.append('a', 2, undefined);
    buffer.append('b', undefined, undefined);
    expect([buffer.flagsAt(0), buffer.flagsAt(1)]).toEqual([2, undefined]);
  });
});
