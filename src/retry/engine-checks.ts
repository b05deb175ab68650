/**
 * How the engine treats a broken invariant of its own (an illegal phase change, a buffer released twice).
 *
 * Under vitest (where `VITEST` is set) a broken invariant throws, so that a bug fails the tests where it happens.
 * In production it never throws: an exception raised inside a grpc-js callback would escape as an uncaught
 * exception and could end the process. There the call ends with INTERNAL instead, and an `internal-error` event
 * reports what went wrong.
 * @internal
 */
export const engineChecks = {
  strict: process.env.VITEST !== undefined,
  /** A broken invariant: throws `message` under strict checks; otherwise returns, and the caller recovers. */
  broken(message: string): void {
    if (engineChecks.strict) {
      throw new Error(message);
    }
  },
};
