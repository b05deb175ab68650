import type { InterceptorOptions } from '@grpc/grpc-js';

/**
 * The mark the adaptive throttle puts on the call options it hands the next interceptor, so that a retry
 * interceptor below it can tell it was put in the wrong order (the throttle belongs below the retry engine, where it
 * sees every attempt). A registered symbol, so that two copies of the package (ESM and CJS) agree on it; it is an
 * own property of the options object, which grpc-js copies from one interceptor to the next and never sends.
 * @internal
 */
const THROTTLE_ABOVE = Symbol.for('grpc-retry-hedging.adaptive-throttle-above');

/** The options with the mark added (a copy: the caller's object is left as it was). @internal */
export function markThrottleAbove(options: InterceptorOptions): InterceptorOptions {
  return { ...options, [THROTTLE_ABOVE]: true } as InterceptorOptions;
}

/** Whether an adaptive throttle runs above the interceptor that was handed `options`. @internal */
export function hasThrottleAbove(options: InterceptorOptions): boolean {
  return (options as InterceptorOptions & { [THROTTLE_ABOVE]?: true })[THROTTLE_ABOVE] === true;
}
