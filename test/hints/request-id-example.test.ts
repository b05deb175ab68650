import { describe, expect, it } from 'vitest';
import { main } from '../../examples/request-id-dedupe.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('examples/request-id-dedupe', () => {
  it('with request ids the retried write is applied once; without, twice', async () => {
    const lines: string[] = [];
    const { withIds, withoutIds } = await main((line) => lines.push(line));

    expect(withIds.attempts.map((a) => a.outcome)).toEqual(['reply-lost', 'duplicate']);
    expect(withIds.attempts[0]!.requestId).toMatch(UUID_V4);
    expect(withIds.attempts[1]!.requestId).toBe(withIds.attempts[0]!.requestId);
    expect(withIds.stock).toBe(5);

    expect(withoutIds.attempts.map((a) => a.outcome)).toEqual(['reply-lost', 'applied']);
    expect(withoutIds.attempts.every((a) => a.requestId === '')).toBe(true);
    expect(withoutIds.stock).toBe(10);

    expect(lines[0]).toBe('with request ids: AddStock(5) answered stock=5; the server holds 5');
  });
});
