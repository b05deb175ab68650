/**
 * Wakes whoever waits for a condition over state that event handlers change: every change calls `notify()`,
 * which re-checks the waiting conditions. One per run, shared by the client and the server side.
 */
export class Signal {
  private readonly waiters = new Set<{ ready: () => boolean; resolve: () => void }>();

  /** Resolves once `ready()` holds (checked now and at every notify). */
  until(ready: () => boolean): Promise<void> {
    if (ready()) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.waiters.add({ ready, resolve });
    });
  }

  notify(): void {
    for (const waiter of this.waiters) {
      if (waiter.ready()) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves when `promise` does, or after `ms` with `undefined`. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Collects the exceptions that reach the process while `run` runs (an exception thrown out of a grpc-js callback
 * does). Vitest reports them too; collecting them lets a property fail on them, and shrink the script.
 */
export async function collectUncaught<T>(run: () => Promise<T>): Promise<{ result: T; uncaught: string[] }> {
  const uncaught: string[] = [];
  const listener = (error: unknown): void => {
    uncaught.push(error instanceof Error ? error.message : String(error));
  };
  process.on('uncaughtException', listener);
  try {
    const result = await run();
    return { result, uncaught };
  } finally {
    process.off('uncaughtException', listener);
  }
}
