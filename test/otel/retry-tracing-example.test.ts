import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { main } from '../../examples/otel-tracing.js';

const METHOD = 'grpc_retry_hedging.testing.v1.FlakyTest.Unary';

/** Spans of a trace by name prefix, ordered by attempt number (server spans: by start time). */
function byName(spans: ReadableSpan[], prefix: string): ReadableSpan[] {
  return spans
    .filter((s) => s.name.startsWith(prefix))
    .sort(
      (x, y) =>
        Number(x.attributes['grpc.attempt.number'] ?? 0) - Number(y.attributes['grpc.attempt.number'] ?? 0) ||
        x.startTime[0] - y.startTime[0] ||
        x.startTime[1] - y.startTime[1],
    );
}

function parentOf(span: ReadableSpan | undefined): string | undefined {
  return span?.parentSpanContext?.spanId;
}

function idOf(span: ReadableSpan | undefined): string | undefined {
  return span?.spanContext().spanId;
}

describe('examples/otel-tracing.ts', () => {
  it('prints one tree per call: application span, call span, attempt spans, a server span under each attempt', async () => {
    const lines: string[] = [];
    const { retried, hedged, trees } = await main((line) => lines.push(line));

    // A call that retried twice.
    const [app] = byName(retried, 'app: ');
    const [call] = byName(retried, `Sent.${METHOD}`);
    const attempts = byName(retried, `Attempt.${METHOD}`);
    const servers = byName(retried, `Recv.${METHOD}`);
    expect(retried).toHaveLength(8);
    expect(parentOf(call)).toBe(idOf(app));
    expect(attempts.map((s) => s.attributes['grpc.attempt.kind'])).toEqual(['original', 'retry', 'retry']);
    expect(attempts.map((s) => s.attributes['rpc.grpc.status_code'])).toEqual([14, 14, 0]);
    for (const attempt of attempts) expect(parentOf(attempt)).toBe(idOf(call));
    // Each server span hangs under the attempt that reached the server.
    expect(servers.map(parentOf)).toEqual(attempts.map(idOf));
    expect(call?.events.map((e) => e.name)).toEqual(['Retry scheduled', 'Retry scheduled', 'Committed']);

    // A hedged call: the hedge wins, the original attempt is cancelled.
    const [hedgedCall] = byName(hedged, `Sent.${METHOD}`);
    const [original, hedge] = byName(hedged, `Attempt.${METHOD}`);
    const hedgedServers = byName(hedged, `Recv.${METHOD}`);
    expect(hedged).toHaveLength(6);
    expect(original?.attributes).toMatchObject({
      'grpc.attempt.kind': 'original',
      'grpc.attempt.cancelled_by_other_attempt': true,
      'grpc.attempt.committed': false,
    });
    expect(hedge?.attributes).toMatchObject({ 'grpc.attempt.kind': 'hedge', 'grpc.attempt.committed': true });
    expect(hedgedServers.map(parentOf)).toEqual([idOf(original), idOf(hedge)]);
    expect(hedgedServers[0]?.attributes.cancelled).toBe(true);
    expect(hedgedCall?.attributes['grpc.retry.committed_attempt']).toBe(2);

    // What it prints.
    expect(lines.join('\n')).toContain(trees.retried);
    expect(trees.retried.split('\n')).toHaveLength(1 + 1 + 3 * 2 + 3);
    expect(trees.hedged).toMatch(/#1 original .*CANCELLED {2}\(lost: another attempt won\)/);
    expect(trees.hedged).toMatch(/└─ Recv\..* \(cancelled by the client\)/);
  });
});
