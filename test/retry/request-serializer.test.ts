/**
 * The wrapped request serializer (src/retry/request-serializer.ts): a snapshot stands for grpc-js's serialization of
 * the one message armed, once; everything else goes to the method's own serializer.
 */
import { describe, expect, it, vi } from 'vitest';
import { requestSerializerOf } from '../../src/retry/request-serializer.js';
import { FORWARDS_MESSAGES_TO } from '../../src/shared/message-passthrough.js';

/** grpc-js's bottom call for `definition`, as far as arming looks at it. */
const bottom = (definition: object) => ({ methodDefinition: definition });

type Serialize = (message: unknown) => Uint8Array;

function definition(): { requestSerialize: Serialize; calls: unknown[]; path: string } {
  const def = {
    path: '/pkg.Svc/Method',
    calls: [] as unknown[],
    requestSerialize(this: unknown, message: unknown): Uint8Array {
      def.calls.push(this);
      return Buffer.from(JSON.stringify(message));
    },
  };
  return def;
}

describe('requestSerializerOf', () => {
  it('answers the armed message with the armed bytes once, then serializes it as usual', () => {
    const def = definition();
    const own = def.requestSerialize;
    const serializer = requestSerializerOf(def);
    expect(def.requestSerialize).not.toBe(own);
    const message = { a: 1 };
    const snapshot = Buffer.from('snapshot');
    expect(serializer.arm(bottom(def), message, snapshot)).toBe(true);
    expect(def.requestSerialize({ a: 1 })).toEqual(Buffer.from('{"a":1}')); // an equal object is not the one
    expect(def.requestSerialize(message)).toBe(snapshot);
    expect(def.requestSerialize(message)).toEqual(Buffer.from('{"a":1}')); // once
    // Answered, it is free again before the disarm: a send from inside the one below (a write callback that writes
    // the next message at once) is armed too.
    const next = { b: 2 };
    expect(serializer.arm(bottom(def), next, Buffer.from('next'))).toBe(true);
    expect(def.requestSerialize(next)).toEqual(Buffer.from('next'));
    serializer.disarm();
    expect(def.calls).toHaveLength(2);
  });

  it('armFailure: the armed message throws the error given, once, then serializes as usual', () => {
    const def = definition();
    const serializer = requestSerializerOf(def);
    const message = { a: 1 };
    const failure = new Error('thrown when written');
    expect(serializer.armFailure({ methodDefinition: {} }, message, failure)).toBe(false); // not grpc-js's call
    expect(serializer.armFailure(bottom(def), message, failure)).toBe(true);
    expect(serializer.arm(bottom(def), { b: 2 }, Buffer.from('b'))).toBe(false); // one armed at a time
    expect(def.requestSerialize({ a: 1 })).toEqual(Buffer.from('{"a":1}')); // an equal object is not the one
    expect(() => def.requestSerialize(message)).toThrow(failure);
    expect(def.requestSerialize(message)).toEqual(Buffer.from('{"a":1}')); // once
    // Bytes are armed for failure too: the failure is the run grpc-js would have made, whatever the memory holds.
    expect(serializer.armFailure(bottom(def), Buffer.from('raw'), failure)).toBe(true);
    serializer.disarm();
    expect(def.requestSerialize(message)).toEqual(Buffer.from('{"a":1}'));
    expect(def.calls).toHaveLength(3);
  });

  it('calls the original as the definition method (`this` is the definition), from grpc-js and the engine', () => {
    const def = definition();
    const serializer = requestSerializerOf(def);
    def.requestSerialize({});
    expect(serializer.serialize({ e: 1 })).toEqual(Buffer.from('{"e":1}'));
    expect(def.calls).toEqual([def, def]);
    const again = requestSerializerOf(def); // the wrapper kept: the original still gets the definition
    again.serialize({});
    expect(def.calls).toEqual([def, def, def]);
  });

  it('does not arm a message that is bytes itself (grpc-js reads its memory as it frames it)', () => {
    const def = definition();
    const serializer = requestSerializerOf(def);
    expect(serializer.arm(bottom(def), Buffer.from('raw'), Buffer.from('raw'))).toBe(false);
    expect(serializer.arm(bottom(def), new Uint8Array(3), Buffer.from('raw'))).toBe(false);
  });

  it('disarm ends it, and a send armed inside another is not armed', () => {
    const def = definition();
    const serializer = requestSerializerOf(def);
    const outer = { outer: true };
    const inner = { inner: true };
    expect(serializer.arm(bottom(def), outer, Buffer.from('outer'))).toBe(true);
    expect(serializer.arm(bottom(def), inner, Buffer.from('inner'))).toBe(false);
    expect(def.requestSerialize(inner)).toEqual(Buffer.from('{"inner":true}'));
    serializer.disarm();
    expect(def.requestSerialize(outer)).toEqual(Buffer.from('{"outer":true}'));
    expect(serializer.arm(bottom(def), inner, Buffer.from('inner'))).toBe(true);
    expect(def.requestSerialize(inner)).toEqual(Buffer.from('inner'));
  });

  it('wraps a definition once, and both copies of the package share the wrapper and its state', async () => {
    const def = definition();
    const first = requestSerializerOf(def);
    const wrapper = def.requestSerialize;
    const again = requestSerializerOf(def);
    expect(def.requestSerialize).toBe(wrapper);
    expect(again.serialize({ k: 1 })).toEqual(first.serialize({ k: 1 }));
    vi.resetModules();
    const copy = await import('../../src/retry/request-serializer.js');
    const second = copy.requestSerializerOf(def);
    expect(def.requestSerialize).toBe(wrapper);
    const message = {};
    expect(second.arm(bottom(def), message, Buffer.from('x'))).toBe(true);
    expect(first.arm(bottom(def), {}, Buffer.from('y'))).toBe(false); // one state: the other copy's send is armed
    expect(def.requestSerialize(message)).toEqual(Buffer.from('x'));
    second.disarm();
  });

  it('leaves no enumerable trace on the definition', () => {
    const def = definition();
    const keys = Object.keys(def);
    requestSerializerOf(def);
    expect(Object.keys(def)).toEqual(keys);
    expect(
      Object.getOwnPropertySymbols(def).every((s) => !Object.getOwnPropertyDescriptor(def, s)?.enumerable),
    ).toBe(true);
  });

  it('a serializer replaced after the wrapping is wrapped anew, the new one used', () => {
    const def = definition();
    requestSerializerOf(def);
    const replacement: Serialize = () => Buffer.from('replaced');
    def.requestSerialize = replacement;
    const serializer = requestSerializerOf(def);
    expect(serializer.serialize({})).toEqual(Buffer.from('replaced'));
    expect(def.requestSerialize).not.toBe(replacement);
    expect(def.requestSerialize({})).toEqual(Buffer.from('replaced'));
  });

  it('a frozen definition keeps its serializer, and nothing is armed', () => {
    const def = Object.freeze(definition());
    const own = def.requestSerialize;
    const serializer = requestSerializerOf(def);
    expect(def.requestSerialize).toBe(own);
    expect(serializer.serialize({ q: 1 })).toEqual(Buffer.from('{"q":1}'));
    expect(def.calls.at(-1)).toBe(def);
    expect(serializer.arm(bottom(def), {}, Buffer.from('x'))).toBe(false);
    expect(serializer.armFailure(bottom(def), {}, new Error('x'))).toBe(false);
    expect(def.requestSerialize({ q: 2 })).toEqual(Buffer.from('{"q":2}'));
  });

  it('a serializer behind a getter without a setter is left alone', () => {
    const own: Serialize = () => Buffer.from('own');
    const def = Object.defineProperty({}, 'requestSerialize', { get: () => own, enumerable: true }) as {
      requestSerialize: Serialize;
    };
    const serializer = requestSerializerOf(def);
    expect(def.requestSerialize).toBe(own);
    expect(serializer.arm(bottom(def), {}, Buffer.from('x'))).toBe(false);
    expect(requestSerializerOf(def).arm(bottom(def), {}, Buffer.from('x'))).toBe(false);
  });

  it('a definition without a serializer is left as it is', () => {
    const def = {} as { requestSerialize: Serialize };
    const serializer = requestSerializerOf(def);
    expect(def).toEqual({});
    expect(serializer.arm(bottom(def), {}, Buffer.from('x'))).toBe(false);
  });

  it("arms only for grpc-js's own call with this definition, reached directly or through calls that forward", () => {
    const def = definition();
    const serializer = requestSerializerOf(def);
    const message = {};
    const bytes = Buffer.from('x');
    const other = definition();
    // an interceptor's call between (it could change the message in place), another definition, nothing
    for (const call of [
      { nextCall: () => {} },
      bottom(other),
      undefined,
      null,
      { [FORWARDS_MESSAGES_TO]: undefined },
      { [FORWARDS_MESSAGES_TO]: null },
    ]) {
      expect(serializer.arm(call, message, bytes)).toBe(false);
    }
    const throughTwo = { [FORWARDS_MESSAGES_TO]: { [FORWARDS_MESSAGES_TO]: bottom(def) } };
    expect(serializer.arm(throughTwo, message, bytes)).toBe(true);
    serializer.disarm();
    let loop: object = {};
    loop = {
      [FORWARDS_MESSAGES_TO]: {
        get [FORWARDS_MESSAGES_TO]() {
          return loop;
        },
      },
    };
    expect(serializer.arm(loop, message, bytes)).toBe(false);
  });
});
