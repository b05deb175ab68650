import { errorMessage } from './error-message.js';

/**
 * A listener that never throws into the code that calls it: an error is reported once as a process warning
 * (`GRPC_RETRY_HEDGING_LISTENER_ERROR`) and the call goes on. `whose` names the listener in the warning, e.g.
 * `"the onEvent listener"`. @internal
 */
export function safeListener<E>(listener: (event: E) => void, whose: string): (event: E) => void {
  let warned = false;
  return (event) => {
    try {
      listener(event);
    } catch (error) {
      if (warned) {
        return;
      }
      warned = true;
      process.emitWarning(
        `grpc-retry-hedging: ${whose} threw (${errorMessage(error)}); ` +
          'the call goes on, and further errors from this listener are not reported',
        { code: 'GRPC_RETRY_HEDGING_LISTENER_ERROR' },
      );
    }
  };
}
