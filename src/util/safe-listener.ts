import { errorMessage } from './error-message.js';
import { isThenable } from './option-checks.js';
import { warnOncePerProcess } from './warn-once.js';

/**
 * A listener that never throws into the code that calls it: an error is reported once as a process warning
 * (`GRPC_RETRY_HEDGING_LISTENER_ERROR`) and the call goes on. `whose` names the listener in the warning, e.g.
 * `"the onEvent listener"`. @internal
 */
export function safeListener<E>(listener: (event: E) => void, whose: string): (event: E) => void {
  let warned = false;
  const report = (error: unknown, how: string): void => {
    if (warned) {
      return;
    }
    warned = true;
    // Once per process for the same text: an inline listener, new on every call, that throws the same error.
    warnOncePerProcess(
      `grpc-retry-hedging: ${whose} ${how} (${errorMessage(error)}); ` +
        'the call goes on, and further errors from this listener are not reported',
      'GRPC_RETRY_HEDGING_LISTENER_ERROR',
    );
  };
  const rejected = (error: unknown): void => report(error, 'returned a promise that rejected');
  return (event) => {
    let result: unknown;
    try {
      result = listener(event);
    } catch (error) {
      report(error, 'threw');
      return;
    }
    // An async listener (its type, `=> void`, admits one) throws by rejecting: unhandled, that rejection ended the
    // process (Node's default), where a listener that throws gets a warning.
    if (isThenable(result)) {
      result.then(undefined, rejected);
    }
  };
}

// biome-ignore lint/suspicious/noExplicitAny: a cache of listeners of any event type
type AnyListener = (event: any) => void;

/** The wrapper made for each listener function and `whose`; weak, so it goes when the application drops the listener. */
const sharedWrappers = new WeakMap<AnyListener, Map<string, AnyListener>>();

/**
 * {@link safeListener}, made once per listener function (and `whose`): a listener passed again, such as a per-call
 * listener given to every call with `withRetryOptions`, gets the same wrapper back, so it warns once in all, not once
 * per call. @internal
 */
export function sharedSafeListener<E>(listener: (event: E) => void, whose: string): (event: E) => void {
  let byWhose = sharedWrappers.get(listener);
  if (byWhose === undefined) {
    byWhose = new Map();
    sharedWrappers.set(listener, byWhose);
  }
  let wrapper = byWhose.get(whose);
  if (wrapper === undefined) {
    wrapper = safeListener(listener, whose);
    byWhose.set(whose, wrapper);
  }
  return wrapper;
}
