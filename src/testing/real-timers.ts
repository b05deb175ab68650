/**
 * Node's own timers, taken from `node:timers` when the testing entry point loads. The flaky server and cluster run
 * in real time (a scripted `delayMs` is real, `waitFor` gives up after real milliseconds) even in a test that
 * fakes the global timers (`vi.useFakeTimers()`, `jest.useFakeTimers()`, `@sinonjs/fake-timers`): those replace
 * `globalThis.setTimeout`, which would leave every scripted delay, wait and `stop()` grace waiting for the test
 * to advance fake time. (`node:test`'s `mock.timers` replaces `node:timers` too; enabled after this module loads,
 * it does not reach these.)
 * @internal
 */
import { performance } from 'node:perf_hooks';
import * as nodeTimers from 'node:timers';

export const realSetTimeout: typeof setTimeout = nodeTimers.setTimeout;
export const realClearTimeout: typeof clearTimeout = nodeTimers.clearTimeout;

/**
 * Real milliseconds from an arbitrary origin (`performance.now()` as it was when this module loaded), for spans of
 * time the cluster measures itself (a replica's slow period), which a frozen `Date` would stretch without end.
 * @internal
 */
export const realNowMs: () => number = performance.now.bind(performance);
