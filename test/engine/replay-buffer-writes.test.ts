/**
 * What the replay buffer keeps for each write beyond its bytes: the write flags that go with the message, the
 * application's write callback, and the accounting of messages that are measured once.
 */
import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../src/retry/buffer-pool.js';
import { ENTRY_OVERHEAD_BYTES, FRAME_HEADER_BYTES, ReplayBuffer } from '../../src/retry/replay-buffer.js';
import { engineCall, retryPolicy, Status } from '../helpers/engine.js';

const PER_MESSAGE = FRAME_HEADER_BYTES + ENTRY_OVERHEAD_BYTES;
const size = (m: unknown) => Buffer.from(String(m));
const roomy = () => new BufferPool(100_000, 100_000, true);

describe('write flags', () => {
  it('stay with their message when only some messages have them', () => {
    const buffer = new ReplayBuffer(roomy(), size);
    buffer.append('a', undefined, undefined);
    buffer.append('b', 2, undefined);
    buffer.append('c', undefined, undefined);
    buffer.append('d', 4, undefined);
    expect([0, 1, 2, 3].map((i) => buffer.flagsAt(i))).toEqual([undefined, 2, undefined, 4]);
  });

  it('stay with their message after the written ones are dropped', () => {
    const buffer = new ReplayBuffer(roomy(), size);
    for (const [message, flags] of [
      ['a', 1],
      ['b', undefined],
      ['c', 2],
      ['d', 3],
    ] as const) {
      buffer.append(message, flags, undefined);
    }
    buffer.release(); // committed: the committed attempt writes them in turn
    buffer.dropBefore(2);
    expect([buffer.messageAt(2), buffer.flagsAt(2), buffer.messageAt(3), buffer.flagsAt(3)]).toEqual([
      'c',
      2,
      'd',
      3,
    ]);
  });

  it('of dropped messages are not given to the messages written after them', () => {
    const buffer = new ReplayBuffer(roomy(), size);
    buffer.append('a', 1, undefined);
    buffer.append('b', 2, undefined);
    buffer.release();
    buffer.dropBefore(2);
    buffer.append('c', undefined, undefined);
    buffer.append('d', 8, undefined);
    expect([buffer.messageAt(2), buffer.flagsAt(2), buffer.messageAt(3), buffer.flagsAt(3)]).toEqual([
      'c',
      undefined,
      'd',
      8,
    ]);
  });
});

describe('dropping written messages', () => {
  it('is idempotent: dropping before an index already dropped changes nothing', () => {
    const buffer = new ReplayBuffer(roomy(), size);
    for (const m of ['a', 'b', 'c']) buffer.append(m, undefined, undefined);
    buffer.release();
    buffer.dropBefore(2);
    buffer.dropBefore(1);
    buffer.dropBefore(2);
    expect([buffer.start, buffer.end, buffer.messageAt(2)]).toEqual([2, 3, 'c']);
  });
});

describe('write callbacks', () => {
  it('are held after the commit until the committed attempt has written the message, each handed out once', () => {
    const buffer = new ReplayBuffer(roomy(), size);
    const done: string[] = [];
    buffer.append('before', undefined, () => done.push('before'));
    buffer.release();
    buffer.append('x', undefined, () => done.push('x'));
    buffer.append('y', undefined, () => done.push('y'));
    buffer.takeCallback(2)?.();
    buffer.takeCallback(0)?.();
    buffer.takeCallback(1)?.();
    expect(done).toEqual(['y', 'before', 'x']);
    expect([0, 1, 2].map((i) => buffer.takeCallback(i))).toEqual([undefined, undefined, undefined]);
  });

  it('of messages that fit wait too, until an attempt has written them, as without the interceptor', () => {
    const buffer = new ReplayBuffer(roomy(), size);
    const callback = () => {};
    expect(buffer.append('a', undefined, callback)).toBe('kept');
    expect(buffer.takeCallback(0)).toBe(callback);
    buffer.append('b', undefined, undefined);
    expect(buffer.clear()).toBeUndefined();
  });

  it('still waiting when the call ends are all handed back, in order', () => {
    const buffer = new ReplayBuffer(new BufferPool(PER_MESSAGE, 100_000, true), size);
    buffer.append('', undefined, undefined);
    const first = () => {};
    const second = () => {};
    expect(buffer.append('big', undefined, first)).toBe('overflow');
    buffer.release();
    buffer.append('more', undefined, second);
    expect(buffer.clear()).toEqual([first, second]);
  });
});

describe('accounting', () => {
  it('charges each message once: asking for room to resend what was measured on the way in costs nothing', () => {
    const pool = new BufferPool(3 * PER_MESSAGE + 6, 100_000, true);
    const buffer = new ReplayBuffer(pool, size);
    buffer.append('abc', undefined, undefined);
    buffer.append('def', undefined, undefined);
    expect(buffer.replayable()).toBe('fits');
    expect(buffer.reservedBytes).toBe(6 + 2 * PER_MESSAGE);
    expect(pool.usedBytes).toBe(6 + 2 * PER_MESSAGE);
  });

  it('charges each message as it is written, and a check charges nothing more', () => {
    const pool = new BufferPool(100_000, 100_000, true);
    const buffer = new ReplayBuffer(pool, size);
    buffer.append('abc', undefined, undefined);
    expect(buffer.reservedBytes).toBe(3 + PER_MESSAGE);
    expect(buffer.replayable()).toBe('fits');
    buffer.append('de', undefined, undefined);
    expect(buffer.replayable()).toBe('fits');
    expect(buffer.reservedBytes).toBe(5 + 2 * PER_MESSAGE);
    expect(pool.usedBytes).toBe(5 + 2 * PER_MESSAGE);
  });

  it('charges a message that cannot be serialized its frame and overhead only (its attempt fails anyway)', () => {
    const pool = new BufferPool(100_000, 100_000, true);
    const buffer = new ReplayBuffer(pool, (m) => {
      if (m === 'bad') throw new Error('cannot serialize');
      return size(m);
    });
    expect(buffer.append('bad', undefined, undefined)).toBe('kept');
    expect(buffer.reservedBytes).toBe(PER_MESSAGE);
    buffer.append('ok', undefined, undefined);
    expect(buffer.reservedBytes).toBe(2 + 2 * PER_MESSAGE);
  });

  it('gives the bytes back to the pool once, on release or on clear', () => {
    const pool = new BufferPool(100_000, 100_000, true);
    const buffer = new ReplayBuffer(pool, size);
    buffer.append('abc', undefined, undefined);
    buffer.release();
    buffer.clear();
    expect([pool.usedBytes, buffer.reservedBytes]).toEqual([0, 0]);
  });
});

describe('a layer below that completes writes synchronously', () => {
  it('has a replay of 20,000 messages handed over in a loop, not by recursion (no stack overflow)', () => {
    const h = engineCall(retryPolicy(), {
      type: 'client-stream',
      interceptor: { perRpcBufferBytes: 16 << 20, totalBufferBytes: 16 << 20 },
    });
    for (let i = 0; i < 20_000; i++) h.call.sendMessageWithContext({ callback: () => {} }, `m${i}`);
    h.call.halfClose();
    h.attempt(0).fail();
    h.clock.runNext();
    const retry = h.attempt(1);
    expect(retry.messages).toHaveLength(20_000);
    expect(retry.messages[19_999]).toBe('m19999');
    expect(retry.halfClosed).toBe(true);
    retry.succeed();
    expect(h.status.code).toBe(Status.OK);
  });

  it('sends the half-close that a write callback makes while the loop hands over messages', () => {
    const h = engineCall(retryPolicy(), { type: 'client-stream' });
    h.call.sendMessageWithContext({ callback: () => h.call.halfClose() }, 'last');
    expect(h.attempt(0).messages).toEqual(['last']);
    expect(h.attempt(0).halfClosed).toBe(true);
  });
});

describe('resends checked against what was written', () => {
  const pool = () => new BufferPool(100_000, 100_000, true);

  it('take a serializer that gives other bytes each time (a random IV) as unable to show a change', () => {
    let nonce = 0;
    const buffer = new ReplayBuffer(pool(), (m) => Buffer.from(`${String(m)}#${nonce++}`));
    buffer.append('a', undefined, undefined);
    expect(buffer.replayable()).toBe('fits');
  });

  it('see a change through a deterministic serializer, and not when told not to check', () => {
    const message = { text: 'a', toString: () => message.text };
    const checked = new ReplayBuffer(pool(), size);
    checked.append(message, undefined, undefined);
    message.text = 'b';
    expect(checked.replayable()).toBe('changed');
    const unchecked = new ReplayBuffer(pool(), size, false);
    unchecked.append(message, undefined, undefined);
    message.text = 'c';
    expect(unchecked.replayable()).toBe('fits');
  });
});
