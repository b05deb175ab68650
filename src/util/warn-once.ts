/**
 * A process warning given at most once: a misuse the library notices on some call is reported the first time,
 * not on every call that repeats it.
 */

/** Returns a function that emits `message` with `code` through `process.emitWarning` the first time it is called. */
export function warnOnce(message: string, code: string): () => void {
  let warned = false;
  return () => {
    if (!warned) {
      warned = true;
      process.emitWarning(message, { code });
    }
  };
}
