import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { parsePushback, parsePushbackValues } from '../../src/retry/pushback.js';

describe('parsePushbackValues', () => {
  it.each([
    ['0', 0],
    ['300', 300],
    ['2147483647', 2147483647],
  ])('"%s" means retry after %i ms', (raw, ms) => {
    expect(parsePushbackValues([raw])).toEqual({ kind: 'retry-after', delayMs: ms });
  });

  it.each([
    '-1',
    '-300',
    '-2147483648',
    'abc',
    '10abc',
    'abc10',
    '',
    ' 10',
    '10 ',
    '1.5',
    '1e3',
    '007',
    '+5',
    '-0',
    '2147483648',
    '0x10',
    '١٠',
  ])('"%s" means do not retry', (raw) => {
    expect(parsePushbackValues([raw]).kind).toBe('do-not-retry');
  });

  it('no value means no pushback', () => {
    expect(parsePushbackValues([])).toEqual({ kind: 'absent' });
  });

  it('repeated values mean do not retry, even when each alone is valid', () => {
    const result = parsePushbackValues(['100', '100']);
    expect(result.kind).toBe('do-not-retry');
  });

  it('a binary value means do not retry', () => {
    expect(parsePushbackValues([Buffer.from('10')]).kind).toBe('do-not-retry');
  });
});

describe('parsePushback', () => {
  it('reads the grpc-retry-pushback-ms trailer', () => {
    const md = new Metadata();
    md.set('grpc-retry-pushback-ms', '250');
    expect(parsePushback(md)).toEqual({ kind: 'retry-after', delayMs: 250 });
    expect(parsePushback(new Metadata())).toEqual({ kind: 'absent' });
    expect(parsePushback(undefined)).toEqual({ kind: 'absent' });
  });
});
