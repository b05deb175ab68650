/**
 * The marks the package's interceptors leave for each other on what grpc-js hands from one interceptor to the next:
 * the adaptive throttle on the call options (so that a retry interceptor below can say the order is wrong), and
 * `interceptChannel` on a call's method definition (so that an interceptor that reads request fields can say the
 * messages are already serialized). Both are registered symbols, so the package's ESM and CJS copies agree.
 */
import type { InterceptorOptions } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { isChannelLevel, markChannelLevel } from '../../src/shared/channel-level.js';
import { hasThrottleAbove, markThrottleAbove } from '../../src/shared/throttle-order.js';

type MethodDefinition = InterceptorOptions['method_definition'];

function callOptions(): InterceptorOptions {
  return { method_definition: { path: '/pkg.S/M' }, deadline: 5 } as unknown as InterceptorOptions;
}

describe('the throttle-above mark on call options', () => {
  it('is on a copy: the options handed in stay unmarked, and the copy keeps their fields', () => {
    const options = callOptions();
    const marked = markThrottleAbove(options);
    expect(marked).not.toBe(options);
    expect(hasThrottleAbove(marked)).toBe(true);
    expect(hasThrottleAbove(options)).toBe(false);
    expect(marked.method_definition).toBe(options.method_definition);
    expect(marked.deadline).toBe(5);
  });

  it('survives the copies grpc-js and other interceptors make with a spread', () => {
    expect(hasThrottleAbove({ ...markThrottleAbove(callOptions()) })).toBe(true);
  });

  it('is read only as itself: other own symbols and string keys do not count', () => {
    const options = callOptions() as InterceptorOptions & Record<string | symbol, unknown>;
    options[Symbol('grpc-retry-hedging.adaptive-throttle-above')] = true;
    options['grpc-retry-hedging.adaptive-throttle-above'] = true;
    expect(hasThrottleAbove(options)).toBe(false);
  });

  it('is the registered symbol another copy of the package would use', () => {
    const options = callOptions() as InterceptorOptions & Record<symbol, unknown>;
    options[Symbol.for('grpc-retry-hedging.adaptive-throttle-above')] = true;
    expect(hasThrottleAbove(options)).toBe(true);
    expect(Object.getOwnPropertySymbols(markThrottleAbove(callOptions()))).toEqual([
      Symbol.for('grpc-retry-hedging.adaptive-throttle-above'),
    ]);
  });
});

describe('the channel-level mark on method definitions', () => {
  it('marks the definition in place, out of sight of enumeration and JSON', () => {
    const definition = { path: '/pkg.S/M', requestStream: true } as unknown as MethodDefinition;
    expect(isChannelLevel(definition)).toBe(false);
    expect(markChannelLevel(definition)).toBe(definition);
    expect(isChannelLevel(definition)).toBe(true);
    expect(Object.keys(definition)).toEqual(['path', 'requestStream']);
    expect(JSON.stringify(definition)).toBe('{"path":"/pkg.S/M","requestStream":true}');
  });

  it('is the registered symbol another copy of the package would use, and only a true value counts', () => {
    const key = Symbol.for('grpc-retry-hedging.channel-level-call');
    const marked = { path: '/a/b', [key]: true } as unknown as MethodDefinition;
    const markedOne = { path: '/a/b', [key]: 1 } as unknown as MethodDefinition;
    expect(isChannelLevel(marked)).toBe(true);
    expect(isChannelLevel(markedOne)).toBe(false);
    expect(Object.getOwnPropertySymbols(markChannelLevel({}))).toEqual([key]);
  });
});
