import type { RetryEventListener } from '../retry/events.js';

/**
 * `listener`, then `other` (even when the first throws): what the adapters' `combine` returns. Passing an array
 * as the interceptor's `onEvent` does the same. @internal
 */
export function combineListeners(
  listener: RetryEventListener,
  other: RetryEventListener | undefined,
  owner: string,
): RetryEventListener {
  if (other === undefined) {
    return listener;
  }
  if (typeof other !== 'function') {
    throw new TypeError(`${owner}.combine: the listener must be a function`);
  }
  // What `other` returns is handed on, so that the interceptor sees an async listener's promise and reports its
  // rejection as it reports a throw (dropped here, it was an unhandled rejection).
  return (event) => {
    try {
      listener(event);
    } catch (error) {
      other(event);
      throw error;
    }
    return other(event);
  };
}
