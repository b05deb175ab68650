import { describe, expect, it } from 'vitest';
import { main } from '../../examples/otel-metrics.js';

const UNARY = 'grpc_retry_hedging.testing.v1.FlakyTest/Unary';

describe('examples/otel-metrics.ts', () => {
  it('collects the retry, hedge and retry-delay histograms of its calls', async () => {
    const summary = await main();
    expect(Object.keys(summary).sort()).toEqual([
      'grpc.client.call.hedges',
      'grpc.client.call.retries',
      'grpc.client.call.retry_delay',
    ]);
    const target = summary['grpc.client.call.retry_delay']?.[0]?.attributes['grpc.target'];
    expect(target).toMatch(/^dns:\/\/\/127\.0\.0\.1:\d+$/);
    const attrs = (status: string) => ({
      'grpc.method': UNARY,
      'grpc.status': status,
      'grpc.target': target,
    });

    const retries = summary['grpc.client.call.retries'] ?? [];
    expect(retries).toHaveLength(2);
    expect(retries).toContainEqual({ attributes: attrs('OK'), count: 1, sum: 2 });
    expect(retries).toContainEqual({ attributes: attrs('UNAVAILABLE'), count: 1, sum: 3 });

    expect(summary['grpc.client.call.hedges']).toEqual([{ attributes: attrs('OK'), count: 1, sum: 1 }]);

    const delay = summary['grpc.client.call.retry_delay'] ?? [];
    const ok = delay.find((p) => p.attributes['grpc.status'] === 'OK');
    const unavailable = delay.find((p) => p.attributes['grpc.status'] === 'UNAVAILABLE');
    expect(ok?.count).toBe(3); // fails-twice, fine, slow-first
    expect(ok?.sum).toBeGreaterThan(0);
    expect(unavailable?.count).toBe(1);
    expect(unavailable?.sum).toBeGreaterThan(0);
  });
});
