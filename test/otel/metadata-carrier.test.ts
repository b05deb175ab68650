import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { metadataGetter, metadataSetter } from '../../src/otel/metadata-carrier.js';

describe('metadataGetter and metadataSetter: trace context in grpc-js Metadata', () => {
  it('reads a missing key as undefined, one value as a string and several as an array', () => {
    const md = new Metadata();
    expect(metadataGetter.get(md, 'traceparent')).toBeUndefined();
    md.set('traceparent', '00-abc-def-01');
    expect(metadataGetter.get(md, 'traceparent')).toBe('00-abc-def-01');
    md.add('baggage', 'a=1');
    md.add('baggage', 'b=2');
    expect(metadataGetter.get(md, 'baggage')).toEqual(['a=1', 'b=2']);
  });

  it('reads a -bin value in base64, and lists the keys', () => {
    const md = new Metadata();
    md.set('grpc-trace-bin', Buffer.from([0, 1, 2, 250]));
    md.set('traceparent', 'x');
    expect(metadataGetter.get(md, 'grpc-trace-bin')).toBe('AAEC+g==');
    expect(metadataGetter.keys(md).sort()).toEqual(['grpc-trace-bin', 'traceparent']);
  });

  it('writes a field, replacing what the key held', () => {
    const md = new Metadata();
    md.set('traceparent', 'old');
    metadataSetter.set(md, 'traceparent', 'new');
    expect(md.get('traceparent')).toEqual(['new']);
    metadataSetter.set(md, 'grpc-trace-bin', 'AAEC+g==');
    expect(md.get('grpc-trace-bin')).toEqual([Buffer.from([0, 1, 2, 250])]);
  });
});
