/**
 * `ReplayBuffer.send`: a message written before the commit goes to grpc-js's own call with its snapshot armed for
 * that one send, and disarmed after it whatever happened (a call that did not serialize it, a call that threw).
 */
import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../src/retry/buffer-pool.js';
import { ReplayBuffer } from '../../src/retry/replay-buffer.js';
import { requestSerializerOf } from '../../src/retry/request-serializer.js';

const roomy = () => new BufferPool(100_000, 100_000, true);

/** A method definition whose serializer stamps each run with its count. */
function stampingDefinition() {
  let runs = 0;
  return {
    requestSerialize: (message: unknown): Uint8Array => Buffer.from(`${JSON.stringify(message)}#${++runs}`),
  };
}

/** grpc-js's bottom call as far as the engine looks at it: it serializes with its definition, or not at all. */
function bottomCall(definition: { requestSerialize: (m: unknown) => Uint8Array }, serializes = true) {
  const sent: string[] = [];
  return {
    sent,
    methodDefinition: definition,
    sendMessageWithContext(_context: object, message: unknown): void {
      if (serializes) sent.push(Buffer.from(definition.requestSerialize(message)).toString());
    },
  };
}

describe('ReplayBuffer.send', () => {
  it("sends the snapshot taken when the message was written, in place of grpc-js's serialization", () => {
    const definition = stampingDefinition();
    const buffer = new ReplayBuffer(roomy(), requestSerializerOf(definition));
    const message = { a: 1 };
    buffer.append(message, undefined, undefined);
    const call = bottomCall(definition);
    buffer.send(call as never, {}, 0);
    buffer.send(call as never, {}, 0); // a second attempt: the same bytes
    expect(call.sent).toEqual(['{"a":1}#1', '{"a":1}#1']);
  });

  it('disarms after a send that did not serialize, so a later serialization of the object is its own', () => {
    const definition = stampingDefinition();
    const buffer = new ReplayBuffer(roomy(), requestSerializerOf(definition));
    const message = { a: 1 };
    buffer.append(message, undefined, undefined);
    buffer.send(bottomCall(definition, false) as never, {}, 0);
    expect(Buffer.from(definition.requestSerialize(message)).toString()).toBe('{"a":1}#2');
  });

  it('disarms after a send that threw', () => {
    const definition = stampingDefinition();
    const buffer = new ReplayBuffer(roomy(), requestSerializerOf(definition));
    const message = { a: 1 };
    buffer.append(message, undefined, undefined);
    const throwing = {
      methodDefinition: definition,
      sendMessageWithContext: () => {
        throw new Error('below');
      },
    };
    expect(() => buffer.send(throwing as never, {}, 0)).toThrow('below');
    expect(Buffer.from(definition.requestSerialize(message)).toString()).toBe('{"a":1}#2');
  });

  it('a message written after the commit has no snapshot: grpc-js serializes it', () => {
    const definition = stampingDefinition();
    const buffer = new ReplayBuffer(roomy(), requestSerializerOf(definition));
    buffer.release(); // committed: accounting stops
    buffer.append({ b: 2 }, undefined, undefined);
    const call = bottomCall(definition);
    buffer.send(call as never, {}, 0);
    expect(call.sent).toEqual(['{"b":2}#1']);
  });

  it('a message whose serialization threw when written throws the same error at each send, not a second run', () => {
    let runs = 0;
    const failure = new Error('first run only');
    const definition = {
      requestSerialize: (message: unknown): Uint8Array => {
        runs++;
        if (runs === 1) throw failure;
        return Buffer.from(JSON.stringify(message));
      },
    };
    const buffer = new ReplayBuffer(roomy(), requestSerializerOf(definition));
    const message = { a: 1 };
    buffer.append(message, undefined, undefined);
    expect(buffer.replayable()).toBe('unserializable');
    const call = catchingCall(definition);
    buffer.send(call as never, {}, 0);
    buffer.send(call as never, {}, 0); // another live attempt (a hedge) handed it: the same
    expect(call.seen).toEqual([failure, failure]);
    expect(runs).toBe(1);
    // Disarmed after each send: the object serialized by anyone else runs the serializer.
    expect(Buffer.from(definition.requestSerialize(message)).toString()).toBe('{"a":1}');
  });

  it('keeps what a message threw while it is held, past the drop of those before it', () => {
    let fail = true;
    const definition = {
      requestSerialize: (message: unknown): Uint8Array => {
        if (fail) throw new Error(`no ${JSON.stringify(message)}`);
        return Buffer.from(JSON.stringify(message));
      },
    };
    const buffer = new ReplayBuffer(roomy(), requestSerializerOf(definition));
    buffer.append({ a: 1 }, undefined, undefined);
    buffer.append({ b: 2 }, undefined, undefined);
    fail = false;
    buffer.dropBefore(1); // the committed attempt has written the first
    const call = catchingCall(definition);
    buffer.send(call as never, {}, 1); // the second's error is kept
    buffer.clear(); // the call ended: nothing is kept
    buffer.append({ c: 3 }, undefined, undefined); // index 2, serialized fine
    buffer.send(call as never, {}, 2);
    expect(call.seen.map(String)).toEqual(['Error: no {"b":2}', '{"c":3}']);
  });
});

describe('ReplayBuffer.send, a message that did not serialize', () => {
  it('is disarmed after a send that did not serialize it: a later run of the serializer is its own', () => {
    let runs = 0;
    const definition = {
      requestSerialize: (message: unknown): Uint8Array => {
        if (++runs === 1) throw new Error('first run only');
        return Buffer.from(JSON.stringify(message));
      },
    };
    const buffer = new ReplayBuffer(roomy(), requestSerializerOf(definition));
    const message = { a: 1 };
    buffer.append(message, undefined, undefined);
    buffer.send(bottomCall(definition, false) as never, {}, 0);
    expect(Buffer.from(definition.requestSerialize(message)).toString()).toBe('{"a":1}');
  });

  it('with a plain serializer function (no wrapper), goes to the call to serialize', () => {
    let fail = true;
    const serialize = (message: unknown): Uint8Array => {
      if (fail) throw new Error('no');
      return Buffer.from(JSON.stringify(message));
    };
    const buffer = new ReplayBuffer(roomy(), serialize);
    buffer.append({ a: 1 }, undefined, undefined); // throws: kept as not serialized
    buffer.append({ b: 2 }, undefined, undefined);
    fail = false;
    buffer.append({ c: 3 }, undefined, undefined);
    const call = catchingCall({ requestSerialize: serialize });
    for (const index of [0, 1, 2]) buffer.send(call as never, {}, index);
    expect(call.seen).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });
});

/** grpc-js's bottom call, which catches what its serializer throws (it ends the attempt with INTERNAL). */
function catchingCall(definition: { requestSerialize: (m: unknown) => Uint8Array }) {
  const seen: unknown[] = [];
  return {
    seen,
    methodDefinition: definition,
    sendMessageWithContext(_context: object, message: unknown): void {
      try {
        seen.push(Buffer.from(definition.requestSerialize(message)).toString());
      } catch (error) {
        seen.push(error);
      }
    },
  };
}
