/**
 * describeValue, as every option error shows what it got: what JSON would drop or mangle is named, at any depth
 * (`onEvent: [fn, null]` read "got [null,null]", `methods: /a/` read "got {}"); and checkOptions on a Promise (a
 * forgotten `await`) or on an instance of a class where its options go.
 */
import { describe, expect, it } from 'vitest';
import { HedgeBudget } from '../../src/hedging/hedge-budget.js';
import { createRequestIdInterceptor } from '../../src/request-id/request-id-interceptor.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { checkOptions, describeValue } from '../../src/util/option-checks.js';

describe('describeValue', () => {
  it.each([
    ['a RegExp, as its source', /a"b+/g, '/a"b+/g'],
    ['a Promise', Promise.resolve(1), 'a Promise'],
    // biome-ignore lint/suspicious/noThenProperty: a thenable is what is being described
    ['a thenable', { then: () => {} }, 'a Promise'],
    ['functions in an array', [() => 1, null], '[a function,null]'],
    ['a RegExp and a method in an object', { methods: /a/, now() {} }, '{"methods":/a/,"now":a function}'],
    ['a bigint and a symbol inside', [1n, Symbol('s')], '[1n,a symbol]'],
  ])('shows %s', (_what, value, shown) => {
    expect(describeValue(value)).toBe(shown);
  });

  it('still shows plain data as JSON, shortened, with what JSON drops named', () => {
    expect(describeValue({ a: [1, 'x', null], f: () => 1 })).toBe('{"a":[1,"x",null],"f":a function}');
    expect(describeValue(() => 1)).toBe('a function');
    expect(describeValue(undefined)).toBe('nothing');
    expect(describeValue('x'.repeat(100))).toBe(`"${'x'.repeat(56)}...`);
  });

  it('in the option errors the audit found', () => {
    expect(() => createRetryInterceptor({}, { onEvent: [() => {}, null] as never })).toThrow(
      'createRetryInterceptor: options.onEvent must be a function or an array of functions, got [a function,null]',
    );
    expect(() => createRequestIdInterceptor({ methods: /a/ as never })).toThrow(
      'createRequestIdInterceptor: options.methods must be a function, got /a/',
    );
  });
});

describe('checkOptions', () => {
  it('refuses a Promise: await it', () => {
    expect(() => checkOptions('here: options', Promise.resolve({}), ['a'])).toThrow(
      new TypeError('here: options must be an object, got a Promise; await it and pass what it resolves to'),
    );
  });

  it('names the class of an instance with fields that are not options, with a hint when given', () => {
    expect(() => checkOptions('here: options', new HedgeBudget(), ['a', 'b'])).toThrow(
      new TypeError(
        'here: options: got an instance of HedgeBudget where an options object is expected (known options: a, b)',
      ),
    );
    expect(() =>
      checkOptions('here: options', new HedgeBudget(), ['a'], undefined, 'pass its options'),
    ).toThrow(
      new TypeError(
        'here: options: got an instance of HedgeBudget where an options object is expected; pass its options',
      ),
    );
    expect(() => checkOptions('here: options', Object.create(null), ['a'])).not.toThrow();
  });
});
