/**
 * Process warnings given once: a misuse the library notices on some call is reported the first time, not on every
 * call that repeats it, and not again by every interceptor, client or listener that meets it (an application that
 * makes an interceptor per request would otherwise log the same warning per request).
 */

/** The most distinct warnings remembered; past it, new ones are still given, without being remembered. */
const MAX_REMEMBERED = 1_000;

/**
 * What has been said in this process: the code, then the message. Kept on `globalThis`, so that the ESM and the
 * CJS build loaded in one process (an ESM application with a CommonJS library) share it, as they share call ids.
 */
const GIVEN: unique symbol = Symbol.for('grpc-retry-hedging.warnings-given');
const processWide = globalThis as { [GIVEN]?: Set<string> };
processWide[GIVEN] ??= new Set<string>();
const given = processWide[GIVEN];

/**
 * Emits `message` with `code` through `process.emitWarning` unless this process has already given the same
 * message with the same code, and says whether it did. @internal
 */
export function warnOncePerProcess(message: string, code: string): boolean {
  const key = `${code}\n${message}`;
  if (given.has(key)) {
    return false;
  }
  if (given.size < MAX_REMEMBERED) {
    given.add(key);
  }
  process.emitWarning(message, { code });
  return true;
}

/**
 * Returns a function that emits `message` with `code` the first time it is called, unless the process has given the
 * same warning already (see {@link warnOncePerProcess}).
 */
export function warnOnce(message: string, code: string): () => void {
  let warned = false;
  return () => {
    if (!warned) {
      warned = true;
      warnOncePerProcess(message, code);
    }
  };
}

/**
 * Returns a function that emits each distinct message with `code` once per process (up to `maxMessages` of them):
 * for a warning about a config, which a process may hand to an interceptor made per client, or per call.
 */
export function warnOncePerMessage(code: string, maxMessages = 100): (message: string) => void {
  let emitted = 0;
  return (message) => {
    if (emitted < maxMessages && warnOncePerProcess(message, code)) {
      emitted++;
    }
  };
}

/** Forgets what has been said, so that the next warning of each kind is given again (tests, between cases). @internal */
export function forgetGivenWarnings(): void {
  given.clear();
}
