/**
 * withRetryOptions from plain JS: a Promise where either argument goes (a forgotten `await`), the call's Metadata
 * passed as its call options, and a deadline grpc-js cannot read are refused at the call, naming the argument,
 * rather than giving call options that silently do nothing (or fail the call later).
 */
import { type CallOptions, Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { readCallRetryOptions, withRetryOptions } from '../../src/retry/call-options.js';

const CALL_OPTIONS =
  'withRetryOptions: callOptions must be grpc-js call options (an object such as { deadline })';
const DEADLINE =
  'withRetryOptions: callOptions.deadline must be a Date or a number (ms since the epoch, such as Date.now() + 1000; Infinity for none)';

describe('withRetryOptions(retry, callOptions)', () => {
  it('refuses a Promise as the retry options', () => {
    expect(() => withRetryOptions(Promise.resolve({ enabled: false }) as never)).toThrow(
      new TypeError(
        'withRetryOptions: options must be an object, got a Promise; await it and pass what it resolves to',
      ),
    );
  });

  it('refuses a Promise as the call options', () => {
    expect(() => withRetryOptions({}, Promise.resolve({ deadline: 1 }) as never)).toThrow(
      new TypeError(`${CALL_OPTIONS}, got a Promise; await it and pass what it resolves to`),
    );
  });

  it('refuses the Metadata as the call options, saying where it goes', () => {
    expect(() => withRetryOptions({ enabled: false }, new Metadata() as never)).toThrow(
      new TypeError(
        `${CALL_OPTIONS}, got a grpc.Metadata; the metadata is an argument of its own, before the call options: client.method(request, metadata, withRetryOptions(...), callback)`,
      ),
    );
  });

  it('refuses waitForReady among the call options, which grpc-js ignores there, saying where it goes', () => {
    expect(() => withRetryOptions({ enabled: false }, { waitForReady: true } as never)).toThrow(
      new TypeError(
        "withRetryOptions: callOptions.waitForReady is not a grpc-js call option (grpc-js ignores it there, and the call would not wait); set it on the call's metadata: metadata.setOptions({ waitForReady: true })",
      ),
    );
    // Other keys grpc-js does not know are left to it, as before.
    expect(withRetryOptions({}, { deadline: 5, custom: 1 } as never)).toMatchObject({
      deadline: 5,
      custom: 1,
    });
  });

  it.each([
    ['soon', '"soon"'],
    ['1000', '"1000"; did you mean 1000 (a number, not a string)?'],
    [Number.NaN, 'NaN'],
    [new Date(Number.NaN), 'an invalid Date'],
    [{ seconds: 1 }, '{"seconds":1}'],
  ])('refuses the deadline %j', (deadline, shown) => {
    expect(() => withRetryOptions({}, { deadline } as never)).toThrow(
      new TypeError(`${DEADLINE}, got ${shown}`),
    );
    // What grpc-js reads is kept: a number, Infinity, a Date, or none.
    for (const valid of [1_700_000_000_000, Number.POSITIVE_INFINITY, new Date(0), undefined, null]) {
      const options = withRetryOptions({ enabled: false }, { deadline: valid } as CallOptions);
      expect(options.deadline).toBe(valid);
      expect(readCallRetryOptions(options)?.enabled).toBe(false);
    }
  });
});
