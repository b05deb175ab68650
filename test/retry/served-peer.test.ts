/**
 * `attempt-end.peer` names the address that served the attempt, never the channel's target: grpc-js's getPeer says
 * the target (with its scheme) until a subchannel carries the call (src/retry/call-events.ts, `servedPeer`).
 */
import { describe, expect, it } from 'vitest';
import { servedPeer } from '../../src/retry/call-events.js';
import { engineCall, eventsOfType, FakeAttempt, retryPolicy } from '../helpers/engine.js';

describe('servedPeer', () => {
  it('keeps what a subchannel says: host:port, [v6]:port, a unix socket path', () => {
    for (const peer of [
      '127.0.0.1:50051',
      'localhost:443',
      'replica-1.svc.cluster.local:8080',
      '[::1]:50051',
      '[2001:db8::7]:443',
      '[fe80::1%eth0]:50051',
      '/run/app.sock', // unix:/run/app.sock and unix:///run/app.sock
      'app.sock', // unix:app.sock (relative)
    ]) {
      expect(servedPeer(peer), peer).toBe(peer);
    }
  });

  it('drops the channel target grpc-js says before a pick, and unknown', () => {
    for (const peer of [
      'dns:localhost:41891',
      'dns:///greeter.example:443',
      'dns://8.8.8.8/greeter.example:443',
      'ipv4:127.0.0.1:50051,127.0.0.1:50052',
      'ipv6:[::1]:50051',
      'unix:/run/app.sock',
      'unix:///run/app.sock',
      'xds:///greeter',
      '127.0.0.1:50051,127.0.0.1:50052',
      'localhost:port',
      'unknown',
      '',
      undefined,
    ]) {
      expect(servedPeer(peer), String(peer)).toBeUndefined();
    }
  });
});

describe('attempt-end.peer', () => {
  const withPeers = (peers: string[]) => {
    const original = FakeAttempt.prototype.getPeer;
    FakeAttempt.prototype.getPeer = function (this: FakeAttempt) {
      return peers[this.index] as string;
    };
    return () => {
      FakeAttempt.prototype.getPeer = original;
    };
  };

  it('is absent for an attempt whose call named the channel target, present for one a subchannel served', () => {
    const restore = withPeers(['dns:localhost:41891', '127.0.0.1:41891']);
    try {
      const h = engineCall(retryPolicy());
      h.attempt(0).fail();
      h.clock.runNext();
      h.attempt(1).succeed();
      const ends = eventsOfType(h.events, 'attempt-end');
      expect(ends).toHaveLength(2);
      expect(ends[0]).not.toHaveProperty('peer');
      expect(ends[1]).toMatchObject({ peer: '127.0.0.1:41891' });
    } finally {
      restore();
    }
  });
});
