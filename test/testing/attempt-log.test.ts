import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { AttemptLog } from '../../src/testing/attempt-recording.js';

const NO_REQUEST_IDS = { header: undefined, field: undefined };

function logOf(limit: number, callIds: string[]): AttemptLog {
  const log = new AttemptLog(NO_REQUEST_IDS, limit);
  for (const id of callIds) log.begin(id, '/s/M', new grpc.Metadata(), 0);
  return log;
}

describe('AttemptLog with a limit', () => {
  it('keeps the latest `limit` attempts across many compactions, in arrival order', () => {
    const ids = Array.from({ length: 5000 }, (_, i) => `c${i}`);
    const log = logOf(3, ids);
    expect(log.all().map((r) => r.callId)).toEqual(['c4997', 'c4998', 'c4999']);
    expect(log.attempts('c4998')).toHaveLength(1);
    expect(log.attempts('c0')).toEqual([]);
  });

  it('forgets a call id and clears after compactions', () => {
    const log = logOf(
      2000,
      Array.from({ length: 4500 }, (_, i) => (i % 2 === 0 ? 'even' : 'odd')),
    );
    expect(log.all()).toHaveLength(2000);
    log.forget('even');
    expect(log.all().map((r) => r.callId)).toEqual(Array(1000).fill('odd'));
    log.begin('even', '/s/M', new grpc.Metadata(), 0);
    expect(log.all()).toHaveLength(1001);
    log.clear();
    expect(log.all()).toEqual([]);
  });

  it('without a limit keeps every attempt', () => {
    expect(new AttemptLog(NO_REQUEST_IDS).all()).toEqual([]);
    const log = new AttemptLog(NO_REQUEST_IDS);
    for (let i = 0; i < 3000; i++) log.begin('x', '/s/M', new grpc.Metadata(), 0);
    expect(log.attempts('x')).toHaveLength(3000);
    expect(log.attempts('x')[2999]?.attempt).toBe(3000);
  });
});
