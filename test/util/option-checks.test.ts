import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/testing/fake-clock.js';
import {
  checkBoolean,
  checkClock,
  checkFunction,
  checkFunctionArgument,
  checkNowSource,
  checkNumber,
  checkOptions,
  describeNumberRule,
  describeValue,
  instanceClassName,
  isThenable,
} from '../../src/util/option-checks.js';

const AT = 'here: options';

describe('checkOptions', () => {
  it('takes a left-out options object as {}, and rejects anything but a plain object, naming the path', () => {
    expect(checkOptions(AT, undefined, ['a'])).toEqual({});
    for (const bad of [null, 3, 'x', [], true]) {
      expect(() => checkOptions(AT, bad, ['a'])).toThrow(new RegExp(`^${AT} must be an object, got `));
    }
  });
  it('names an unknown key, the closest known one, and every known one', () => {
    expect(() => checkOptions(AT, { maxAttempt: 3 }, ['maxAttemptsLimit', 'jitter'])).toThrow(
      'here: options.maxAttempt is not an option; did you mean "maxAttemptsLimit"? (known: maxAttemptsLimit, jitter)',
    );
    expect(() => checkOptions(AT, { zzz: 1 }, ['jitter'])).toThrow(
      'options.zzz is not an option (known: jitter)',
    );
    expect(checkOptions(AT, { jitter: 'a6' }, ['jitter'])).toEqual({ jitter: 'a6' });
  });
  it('names the new name of a renamed key, with its hint', () => {
    const renames = { throttle: { now: 'gate', hint: 'it takes any RetryGate' }, old: { now: 'new' } };
    expect(() => checkOptions(AT, { throttle: 1 }, ['gate'], renames)).toThrow(
      'here: options.throttle was renamed to "gate" (it takes any RetryGate)',
    );
    expect(() => checkOptions(AT, { old: 1 }, ['new'], renames)).toThrow(/renamed to "new"$/);
  });
});

describe('checkNumber', () => {
  it('returns the fallback when left out, the value when it fits', () => {
    expect(checkNumber(AT, 'n', undefined, 7, { min: 0 })).toBe(7);
    expect(checkNumber(AT, 'n', undefined, undefined, { min: 0 })).toBeUndefined();
    expect(checkNumber(AT, 'n', 0, 7, { min: 0 })).toBe(0);
    expect(checkNumber(AT, 'n', 1, 7, { min: 0, max: 1 })).toBe(1);
  });
  it('a non-number is a TypeError, a number out of the rule a RangeError; both name path, rule and value', () => {
    expect(() => checkNumber(AT, 'n', '3', 7, { min: 1, integer: true })).toThrow(
      new TypeError(
        'here: options.n must be an integer >= 1, got "3"; did you mean 3 (a number, not a string)?',
      ),
    );
    expect(() => checkNumber(AT, 'n', 0, 7, { min: 1, integer: true })).toThrow(
      new RangeError('here: options.n must be an integer >= 1, got 0'),
    );
    expect(() => checkNumber(AT, 'n', 1.5, 7, { min: 1, integer: true })).toThrow(RangeError);
    expect(() => checkNumber(AT, 'n', Number.NaN, 7, {})).toThrow(
      new TypeError('here: options.n must be a finite number, got NaN'),
    );
    expect(() => checkNumber(AT, 'n', Number.POSITIVE_INFINITY, 7, { min: 0 })).toThrow(RangeError);
  });
  it('honours exclusive ends', () => {
    const rule = { min: 0, max: 1, minExclusive: true, maxExclusive: true };
    expect(() => checkNumber(AT, 'r', 0, 0.5, rule)).toThrow('must be a number in (0, 1), got 0');
    expect(() => checkNumber(AT, 'r', 1, 0.5, rule)).toThrow(RangeError);
    expect(checkNumber(AT, 'r', 0.999, 0.5, rule)).toBe(0.999);
  });
  it('describes each kind of rule', () => {
    expect(describeNumberRule({ min: 0, max: 1, maxExclusive: true })).toBe('a number in [0, 1)');
    expect(describeNumberRule({ min: 0, minExclusive: true, unit: 'ms' })).toBe('a number > 0 (ms)');
    expect(describeNumberRule({ max: 5, integer: true })).toBe('an integer <= 5');
    expect(describeNumberRule({ max: 5, maxExclusive: true })).toBe('a number < 5');
  });
});

describe('checkBoolean, checkFunction, checkClock', () => {
  it('booleans', () => {
    expect(checkBoolean(AT, 'b', undefined, true)).toBe(true);
    expect(checkBoolean(AT, 'b', false, true)).toBe(false);
    expect(() => checkBoolean(AT, 'b', 'yes', true)).toThrow(
      new TypeError('here: options.b must be true or false, got "yes"'),
    );
    // as a string from an environment variable or hand-written JSON gives it: the hint the arguments' checks give
    expect(() => checkBoolean(AT, 'b', 'true', false)).toThrow(
      new TypeError(
        'here: options.b must be true or false, got "true"; did you mean true (a boolean, not a string)?',
      ),
    );
  });
  it('functions', () => {
    const f = () => 1;
    expect(checkFunction(AT, 'f', f)).toBe(f);
    expect(checkFunction(AT, 'f', undefined)).toBeUndefined();
    expect(() => checkFunction(AT, 'f', 3, 'a function returning a number')).toThrow(
      'here: options.f must be a function returning a number, got 3',
    );
  });
  it('clocks', () => {
    const clock = new FakeClock(0);
    expect(checkClock(AT, 'clock', clock)).toBe(clock);
    expect(checkClock(AT, 'clock', undefined)).toBeUndefined();
    expect(() => checkClock(AT, 'clock', { now: () => 1 })).toThrow(/^here: options.clock must be a Clock/);
    expect(checkClock(AT, 'clock', new FakeClock(0, 1))?.resolutionMs).toBe(1);
    expect(checkClock(AT, 'clock', new FakeClock(0, 0))?.resolutionMs).toBe(0);
    // A clock of the application's own (FakeClock refuses such a resolution itself).
    const own = (resolutionMs: number) => ({
      now: () => 0,
      setTimer: () => 0,
      clearTimer: () => {},
      resolutionMs,
    });
    expect(() => checkClock(AT, 'clock', own(-1))).toThrow(
      'here: options.clock.resolutionMs must be a finite number of ms, 0 or more, got -1',
    );
    expect(() => checkClock(AT, 'clock', own(Number.POSITIVE_INFINITY))).toThrow(/resolutionMs/);
    expect(() => new FakeClock(0, -1)).toThrow(
      'FakeClock: resolutionMs must be a finite number of ms, 0 or more (or left out for an exact clock), got -1',
    );
    expect(() => new FakeClock(0, Number.NaN)).toThrow(TypeError);
  });
});

describe('describeValue', () => {
  it('renders data as JSON and everything else by its kind, shortened', () => {
    expect(describeValue(undefined)).toBe('nothing');
    expect(describeValue(null)).toBe('null');
    expect(describeValue('x')).toBe('"x"');
    expect(describeValue([1])).toBe('[1]');
    expect(describeValue(() => 1)).toBe('a function');
    expect(describeValue(Number.NaN)).toBe('NaN');
    expect(describeValue(10n)).toBe('10n');
    expect(describeValue('x'.repeat(100))).toHaveLength(60);
  });
});

describe('describeValue: edges', () => {
  it('keeps a rendering of exactly 60 characters and shortens one of 61 to 57 and an ellipsis', () => {
    const sixty = 'x'.repeat(58); // quoted: 60 characters
    expect(describeValue(sixty)).toBe(`"${sixty}"`);
    expect(describeValue(`${sixty}y`)).toBe(`"${sixty.slice(0, 56)}...`);
  });

  it('names a function under the empty key as under any other', () => {
    expect(describeValue({ '': () => 1, a: () => 2 })).toBe('{"":a function,"a":a function}');
  });

  it('names what a toJSON method returns when JSON cannot show it', () => {
    expect(describeValue({ toJSON: () => () => 1 })).toBe('a function');
  });
});

/** `target` with a `then` property (the thenables these checks are about), set without a `then:` literal. */
function withThen<T extends object>(target: T, then: unknown): T {
  return Object.defineProperty(target, 'then', { value: then, enumerable: true });
}

describe('isThenable', () => {
  it('takes an object or a function with a then method, and nothing else', () => {
    expect(isThenable(Promise.resolve())).toBe(true);
    expect(isThenable(withThen({}, () => {}))).toBe(true);
    expect(
      isThenable(
        withThen(
          () => {},
          () => {},
        ),
      ),
    ).toBe(true);
    for (const other of [null, undefined, 3, 'then', withThen({}, 1), () => {}]) {
      expect(isThenable(other)).toBe(false);
    }
  });

  it('lets checkOptions call a thenable function a forgotten await', () => {
    const lazy = withThen(
      () => ({}),
      () => {},
    );
    expect(() => checkOptions(AT, lazy, ['a'])).toThrow(
      `${AT} must be an object, got a Promise; await it and pass what it resolves to`,
    );
  });
});

describe('instanceClassName', () => {
  it("names a class's instance, and nothing for a plain object of any realm, null or a primitive", () => {
    class HedgeBudgetLike {}
    expect(instanceClassName(new HedgeBudgetLike())).toBe('HedgeBudgetLike');
    expect(instanceClassName(new Map())).toBe('Map');
    for (const plain of [{}, Object.create(null), runInNewContext('({ a: 1 })'), null, undefined, 3, 'x']) {
      expect(instanceClassName(plain)).toBeUndefined();
    }
  });

  it('names nothing for an anonymous class, or a prototype whose constructor is not a function', () => {
    const Anonymous = (() => class {})();
    expect(Anonymous.name).toBe('');
    expect(instanceClassName(new Anonymous())).toBeUndefined();
    expect(instanceClassName(Object.create({ constructor: 'HedgeBudget' }))).toBeUndefined();
    // A function is not an instance.
    expect(instanceClassName(() => 1)).toBeUndefined();
  });

  it('lets checkOptions tell an instance where its options go from a misspelled key', () => {
    class Budget {
      ratio = 0.1;
    }
    expect(() => checkOptions(AT, new Budget(), ['maxExtraLoad'])).toThrow(
      `${AT}: got an instance of Budget where an options object is expected (known options: maxExtraLoad)`,
    );
    expect(() => checkOptions(AT, new Budget(), ['maxExtraLoad'], undefined, 'pass it as budget')).toThrow(
      `${AT}: got an instance of Budget where an options object is expected; pass it as budget`,
    );
    expect(() => checkOptions(AT, runInNewContext('({ ratio: 1 })'), ['maxExtraLoad'])).toThrow(
      `${AT}.ratio is not an option (known: maxExtraLoad)`,
    );
  });
});

describe('checkFunctionArgument and checkNowSource', () => {
  it('a required function argument: the function, or a TypeError naming the function, the argument and the value', () => {
    const fn = () => 1;
    expect(checkFunctionArgument('Limiter.whenAllowed', 'cancel', fn)).toBe(fn);
    expect(() => checkFunctionArgument('Limiter.whenAllowed', 'cancel', 3)).toThrow(
      new TypeError('Limiter.whenAllowed: cancel must be a function, got 3'),
    );
    expect(() =>
      checkFunctionArgument('Limiter.whenAllowed', 'cancel', undefined, 'a function to call'),
    ).toThrow('Limiter.whenAllowed: cancel must be a function to call, got nothing');
  });

  it('a time source: anything with a now() method, undefined when left out, else a TypeError', () => {
    const source = { now: () => 5 };
    expect(checkNowSource(AT, 'clock', source)).toBe(source);
    expect(checkNowSource(AT, 'clock', undefined)).toBeUndefined();
    for (const [bad, shown] of [
      [null, 'null'],
      [3, '3'],
      [{ now: 1 }, '{"now":1}'],
      [() => 1, 'a function'],
    ] as const) {
      expect(() => checkNowSource(AT, 'clock', bad)).toThrow(
        new TypeError(`${AT}.clock must be an object with a now() method (a Clock), got ${shown}`),
      );
    }
  });
});

describe("checkClock: a clock of the application's own", () => {
  const own = (now: () => unknown, resolutionMs?: unknown) => ({
    now,
    setTimer: () => 0,
    clearTimer: () => {},
    ...(resolutionMs === undefined ? {} : { resolutionMs }),
  });

  it('reads now() once, and says so when it throws', () => {
    expect(() =>
      checkClock(
        AT,
        'clock',
        own(() => {
          throw new Error('not started');
        }),
      ),
    ).toThrow(new TypeError(`${AT}.clock.now() threw when read: not started`));
    expect(() =>
      checkClock(
        AT,
        'clock',
        own(() => {
          throw 'a string';
        }),
      ),
    ).toThrow(`${AT}.clock.now() threw when read: a string`);
  });

  it('refuses a now() that is not a finite number', () => {
    for (const [reading, shown] of [
      ['5', '"5"'],
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      [undefined, 'nothing'],
    ] as const) {
      expect(() =>
        checkClock(
          AT,
          'clock',
          own(() => reading),
        ),
      ).toThrow(
        `${AT}.clock.now() must return a finite number of ms (since the epoch, as Date.now() does; a FakeClock's own time under test), got ${shown}`,
      );
    }
  });

  it('takes a resolution of 0 or more, and refuses one that is not a number', () => {
    expect(
      checkClock(
        AT,
        'clock',
        own(() => 0, 2.5),
      )?.resolutionMs,
    ).toBe(2.5);
    expect(() =>
      checkClock(
        AT,
        'clock',
        own(() => 0, '1'),
      ),
    ).toThrow(new RangeError(`${AT}.clock.resolutionMs must be a finite number of ms, 0 or more, got "1"`));
  });
});
