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

/**
 * Returns a function that emits each distinct message with `code` once per process (up to `maxMessages` of them):
 * for a warning about a config, which a process may hand to an interceptor made per client, or per call.
 */
export function warnOncePerMessage(code: string, maxMessages = 100): (message: string) => void {
  const warned = new Set<string>();
  return (message) => {
    if (warned.has(message) || warned.size >= maxMessages) {
      return;
    }
    warned.add(message);
    process.emitWarning(message, { code });
  };
}
