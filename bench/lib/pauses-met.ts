/**
 * Which calls a pause overlapped: for bench:adaptive's report of the calls that went over a limit, how many of them
 * were in flight while one process or the other stood still for garbage collection.
 */

/** A stretch of time, ms since the epoch: a call from its start to its answer, or a pause. */
export interface Span {
  startMs: number;
  durationMs: number;
}

/** How many of the calls overlapped at least one pause, and the longest pause any of them met (ms; 0 for none). */
export interface PausesMet {
  calls: number;
  longestMs: number;
}

/** The calls of `calls` that were in flight during some pause of `pauses` (in any order), and the longest such pause. */
export function pausesMet(calls: readonly Span[], pauses: readonly Span[]): PausesMet {
  let met = 0;
  let longestMs = 0;
  for (const call of calls) {
    const callEnd = call.startMs + call.durationMs;
    let overlapped = false;
    for (const pause of pauses) {
      if (pause.startMs < callEnd && pause.startMs + pause.durationMs > call.startMs) {
        overlapped = true;
        longestMs = Math.max(longestMs, pause.durationMs);
      }
    }
    if (overlapped) met += 1;
  }
  return { calls: met, longestMs };
}
