/**
 * Behaviour of the channel-option rules (message size limits, loadBalancingConfig) that mutation testing
 * (stryker, src/config/channel-rules.ts) found no test pinned down: which strings count as a decimal limit, when a
 * bad limit is said to be too large, and when a loadBalancingConfig that is not an array gets a hint.
 */

import { describe, expect, it } from 'vitest';
import { createChannelOptions } from '../../src/config/channel-options.js';
import {
  findLoadBalancingConfigProblems,
  findMessageLimitProblems,
  messageLimit,
} from '../../src/config/channel-rules.js';
import { validateServiceConfig } from '../../src/config/validate-service-config.js';

const NOT_A_LIMIT = 'must be a non-negative integer (a number or a decimal string), got';
const TOO_LARGE = ` (larger than ${Number.MAX_SAFE_INTEGER}, which no message is)`;

/** The validator's errors for one entry with `maxRequestMessageBytes: value`. */
function requestLimitErrors(value: unknown): { path: string; message: string }[] {
  return validateServiceConfig({
    methodConfig: [{ name: [{ service: 'a.S' }], maxRequestMessageBytes: value }],
  }).errors.map(({ path, message }) => ({ path, message }));
}

describe('messageLimit: what counts as a limit', () => {
  it('only a string of decimal digits, not other strings Number() reads', () => {
    expect(messageLimit('1024')).toBe(1024);
    for (const text of ['0x10', '1e3', '5.0', '5 ', ' 5', '+5']) {
      expect(messageLimit(text)).toBeNaN();
    }
  });

  it('a value that is neither a number nor a string is not a limit, even one that prints as digits', () => {
    expect(messageLimit([5])).toBeNaN();
    expect(messageLimit({ toString: () => '5' })).toBeNaN();
    expect(messageLimit(true)).toBeNaN();
  });

  it('the validator reports such values', () => {
    expect(requestLimitErrors('0x10')).toEqual([
      { path: 'methodConfig[0].maxRequestMessageBytes', message: `${NOT_A_LIMIT} "0x10"` },
    ]);
    expect(requestLimitErrors([5])).toEqual([
      { path: 'methodConfig[0].maxRequestMessageBytes', message: `${NOT_A_LIMIT} [5]` },
    ]);
  });
});

describe('a bad limit is called too large only when it is a whole number or digits beyond the safe range', () => {
  it.each([
    [2 ** 53, `${NOT_A_LIMIT} 9007199254740992${TOO_LARGE}`],
    ['99999999999999999999', `${NOT_A_LIMIT} "99999999999999999999"${TOO_LARGE}`],
    [2.5, `${NOT_A_LIMIT} 2.5`],
    [-5, `${NOT_A_LIMIT} -5`],
    ['abc', `${NOT_A_LIMIT} "abc"`],
    ['-5', `${NOT_A_LIMIT} "-5"`],
    ['abc5', `${NOT_A_LIMIT} "abc5"`],
    ['5abc', `${NOT_A_LIMIT} "5abc"`],
    [[5], `${NOT_A_LIMIT} [5]`],
    [true, `${NOT_A_LIMIT} true`],
  ])('%j', (value, message) => {
    expect(findMessageLimitProblems({ maxResponseMessageBytes: value }, ['methodConfig', 0])).toEqual([
      { path: ['methodConfig', 0, 'maxResponseMessageBytes'], message },
    ]);
  });

  it('createChannelOptions throws the same message', () => {
    expect(() =>
      createChannelOptions(
        { methodConfig: [{ name: [{ service: 'a.S' }], maxRequestBytes: 2 ** 53 }] },
        { onWarning: () => {} },
      ),
    ).toThrow(`${NOT_A_LIMIT} 9007199254740992${TOO_LARGE}`);
    expect(() =>
      createChannelOptions(
        { methodConfig: [{ name: [{ service: 'a.S' }], maxRequestBytes: 2.5 }] },
        { onWarning: () => {} },
      ),
    ).toThrow(new RegExp(`${NOT_A_LIMIT.replace(/[()]/g, '\\$&')} 2\\.5$`));
  });
});

describe('loadBalancingConfig that is not an array', () => {
  const MUST = 'must be an array of {"policy_name": {...}} objects, got';

  it('a non-empty string gets a hint how to write it', () => {
    expect(findLoadBalancingConfigProblems('round_robin')).toEqual([
      { path: ['loadBalancingConfig'], message: `${MUST} "round_robin"; write [{"round_robin": {}}]` },
    ]);
  });

  it('an empty string, a number or an object gets no hint', () => {
    expect(findLoadBalancingConfigProblems('')).toEqual([
      { path: ['loadBalancingConfig'], message: `${MUST} ""` },
    ]);
    expect(findLoadBalancingConfigProblems(5)).toEqual([
      { path: ['loadBalancingConfig'], message: `${MUST} 5` },
    ]);
    expect(findLoadBalancingConfigProblems({ round_robin: {} })).toEqual([
      { path: ['loadBalancingConfig'], message: `${MUST} {"round_robin":{}}` },
    ]);
  });

  it('the validator reports the same', () => {
    expect(validateServiceConfig({ loadBalancingConfig: 5 }).errors).toEqual([
      expect.objectContaining({ path: 'loadBalancingConfig', message: `${MUST} 5` }),
    ]);
    expect(validateServiceConfig({ loadBalancingConfig: '' }).errors).toEqual([
      expect.objectContaining({ path: 'loadBalancingConfig', message: `${MUST} ""` }),
    ]);
  });
});
