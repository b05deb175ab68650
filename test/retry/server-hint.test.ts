import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { readServerHint } from '../../src/retry/server-hint.js';
import { PUSHBACK_METADATA_KEY } from '../../src/shared/headers.js';

describe('readServerHint', () => {
  const retryInfo = { read: () => 100, maxDelayMs: 1000 };

  it('is no hint when the attempt brought no trailers, even with RetryInfo honoured', () => {
    expect(readServerHint(undefined, retryInfo)).toEqual({ kind: 'none' });
  });

  it('reads RetryInfo only when no pushback trailer is there', () => {
    expect(readServerHint(new Metadata(), retryInfo)).toEqual({
      kind: 'retry-after',
      delayMs: 100,
      source: 'retry-info',
    });
    const md = new Metadata();
    md.set(PUSHBACK_METADATA_KEY, '7');
    expect(readServerHint(md, retryInfo)).toEqual({ kind: 'retry-after', delayMs: 7, source: 'pushback' });
  });
});
