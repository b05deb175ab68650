import { Metadata } from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { retriedBelow } from '../../src/retry/channel-retries.js';
import { forgetGivenWarnings } from '../../src/util/warn-once.js';
import { engineCall, retryPolicy, Status } from '../helpers/engine.js';
import { type CapturedWarning, captureWarnings } from '../helpers/warnings.js';

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

describe('the engine reports a retry layer below, whether its retries failed or succeeded', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });
  const codes = (warnings: CapturedWarning[]) => warnings.map((w) => w.code);

  it("from an OK status's trailers (grpc-js marks them when no headers came), and from headers", () => {
    const warnings = captureWarnings();
    const trailersOnly = engineCall(retryPolicy());
    trailersOnly.attempt(0).status(Status.OK, '', { 'grpc-previous-rpc-attempts': '2' });
    expect(codes(warnings)).toEqual(['GRPC_RETRY_HEDGING_CHANNEL_RETRIES']);

    forgetGivenWarnings(); // the same warning, given once per process: the headers must give it too
    const viaHeaders = engineCall(retryPolicy());
    viaHeaders.attempt(0).headers(trailers('1'));
    viaHeaders.attempt(0).succeed();
    expect(viaHeaders.status.code).toBe(Status.OK);
    expect(codes(warnings)).toEqual([
      'GRPC_RETRY_HEDGING_CHANNEL_RETRIES',
      'GRPC_RETRY_HEDGING_CHANNEL_RETRIES',
    ]);
  });

  it('not for headers that echo what the attempt sent', () => {
    const warnings = captureWarnings();
    const h = engineCall(retryPolicy());
    h.attempt(0).fail(Status.UNAVAILABLE);
    h.clock.advance(200);
    h.attempt(1).headers(trailers('1'));
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(warnings).toEqual([]);
  });
});
