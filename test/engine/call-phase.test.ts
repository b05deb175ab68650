import { describe, expect, it } from 'vitest';
import { type CallPhaseTag, isLegalTransition } from '../../src/retry/call-phase.js';

const PHASES: readonly CallPhaseTag[] = ['not-started', 'in-flight', 'waiting', 'committed', 'ended'];

describe('the call state machine: which phase may follow which', () => {
  // The diagram in ARCHITECTURE.md, as a table: from → the phases it may move to.
  const LEGAL: Record<CallPhaseTag, readonly CallPhaseTag[]> = {
    'not-started': ['in-flight', 'ended'],
    // A retry waits, a hedge or a retry moves on in flight, an attempt commits, a failure or a cancel ends it.
    'in-flight': ['in-flight', 'waiting', 'committed', 'ended'],
    // The timer sends the next attempt; a cancel or the deadline ends the call. Nothing commits while waiting.
    waiting: ['in-flight', 'ended'],
    committed: ['ended'],
    ended: [],
  };

  it.each(PHASES)('from %s', (from) => {
    const allowed = PHASES.filter((to) => isLegalTransition(from, to));
    expect(allowed).toEqual(LEGAL[from]);
  });
});
