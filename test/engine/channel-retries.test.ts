import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { retriedBelow } from '../../src/retry/channel-retries.js';

function trailers(previous?: string): Metadata {
  const metadata = new Metadata();
  if (previous !== undefined) {
    metadata.set('grpc-previous-rpc-attempts', previous);
  }
  return metadata;
}

describe('retriedBelow', () => {
  it('no header, or no trailers: no retry layer below', () => {
    expect(retriedBelow(1, trailers())).toBe(false);
    expect(retriedBelow(3, trailers())).toBe(false);
    expect(retriedBelow(1, undefined)).toBe(false);
  });

  it("a first attempt sent no header: any value came from below (grpc-js's own retries)", () => {
    expect(retriedBelow(1, trailers('1'))).toBe(true);
    expect(retriedBelow(1, trailers('0'))).toBe(true);
  });

  it('a later attempt: the value it sent is an echo, any other came from below', () => {
    expect(retriedBelow(2, trailers('1'))).toBe(false);
    expect(retriedBelow(3, trailers('2'))).toBe(false);
    expect(retriedBelow(2, trailers('2'))).toBe(true);
    expect(retriedBelow(3, trailers('4'))).toBe(true);
  });
});
