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
});
