import { Metadata, type StatusObject, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { isLoadBalancerDrop, isMessageSizeRejection } from '../../src/retry/local-failure.js';
import { engineCall, retryPolicy, Status } from '../helpers/engine.js';

describe('isLoadBalancerDrop', () => {
  const details = 'Call dropped by load balancing policy. Category: lb';
  const drop = { details, metadata: new Metadata() };
  /** A Trailers-Only status as a server sends it: its headers carry `content-type`. */
  const fromServer = (text: string) => {
    const metadata = new Metadata();
    metadata.set('content-type', 'application/grpc+proto');
    return { details: text, metadata };
  };

  it("is grpc-js-xds's and C-core's drop details on a status no server sent", () => {
    // What grpc-js's getPeer() names before a subchannel carries the attempt: the target, or `unknown`.
    for (const peer of ['dns:db.example:443', 'ipv4:10.0.0.1:50051,10.0.0.2:50051', 'unknown', '']) {
      expect(
        isLoadBalancerDrop(drop, () => peer),
        peer,
      ).toBe(true);
    }
    for (const text of ['Call dropped by load balancing policy.', 'Call dropped by load balancing policy']) {
      expect(
        isLoadBalancerDrop({ details: text, metadata: new Metadata() }, () => 'unknown'),
        text,
      ).toBe(true);
    }
  });

  it("is not a server's status, even in the same words, nor other details", () => {
    // An attempt that reached a server (grpc-js 1.14 names its connection)...
    for (const peer of ['127.0.0.1:50051', '[::1]:50051', '/run/app.sock']) {
      expect(
        isLoadBalancerDrop(drop, () => peer),
        peer,
      ).toBe(false);
    }
    // ... or whose status carries a server's headers (grpc-js 1.10 says `unknown` for its peer).
    expect(isLoadBalancerDrop(fromServer(details), () => 'unknown')).toBe(false);
    expect(
      isLoadBalancerDrop({ details: 'No connection established', metadata: new Metadata() }, () => ''),
    ).toBe(false);
    const relayed = { details: `upstream: ${details}`, metadata: new Metadata() };
    expect(isLoadBalancerDrop(relayed, () => 'unknown')).toBe(false);
  });

  it('reads the peer only for a drop the status could be', () => {
    let asked = 0;
    const peer = () => {
      asked += 1;
      return 'unknown';
    };
    isLoadBalancerDrop({ details: 'scripted failure', metadata: new Metadata() }, peer);
    isLoadBalancerDrop(fromServer(details), peer);
    expect(asked).toBe(0);
  });
});

describe('isMessageSizeRejection', () => {
  it("is grpc-js's own RESOURCE_EXHAUSTED for a request over the send limit", () => {
    const details = 'Attempted to send message with a size larger than 10 (11)';
    expect(isMessageSizeRejection({ code: status.RESOURCE_EXHAUSTED, details })).toBe(true);
    expect(isMessageSizeRejection({ code: status.INTERNAL, details })).toBe(false);
    expect(isMessageSizeRejection({ code: status.RESOURCE_EXHAUSTED, details: 'quota' })).toBe(false);
  });
});

describe('a status with the drop details and no metadata (an interceptor below, in plain JavaScript)', () => {
  // Found by differential testing against a bare grpc-js client, which hands such a status on as it is: the check
  // read `metadata.get` of the missing metadata, and threw out of grpc-js's status callback.
  const details = 'Call dropped by load balancing policy';
  const noMetadata = { details, metadata: undefined } as unknown as Pick<
    StatusObject,
    'details' | 'metadata'
  >;

  it('is a drop, as a status with empty metadata is (no server sent it)', () => {
    expect(isLoadBalancerDrop(noMetadata, () => 'unknown')).toBe(true);
    expect(isLoadBalancerDrop(noMetadata, () => '127.0.0.1:50051')).toBe(false);
  });

  it('ends the call with that status, once, under a retry policy of its code', async () => {
    const h = engineCall(retryPolicy({ maxAttempts: 3 }));
    // What grpc-js's getPeer() says of an attempt no connection carries.
    h.attempt(0).peer = 'unknown';
    h.attempt(0).listener?.onReceiveStatus?.({ code: Status.UNAVAILABLE, details } as StatusObject);
    await h.settle();
    expect(h.attempts).toHaveLength(1);
    expect(h.received.statuses).toHaveLength(1);
    expect(h.status).toMatchObject({ code: Status.UNAVAILABLE, details });
  });
});

describe('a status with no details (an interceptor below, in plain JavaScript)', () => {
  // Neither a size rejection nor a drop is known but by its details: one without them is neither, and the check
  // must not read `details.startsWith` of the missing text out of grpc-js's status callback.
  const noDetails = (code: Status) => ({ code, metadata: new Metadata() }) as unknown as StatusObject;

  it('is neither a message-size rejection nor a load-balancer drop', () => {
    expect(isMessageSizeRejection(noDetails(Status.RESOURCE_EXHAUSTED))).toBe(false);
    expect(isLoadBalancerDrop(noDetails(Status.UNAVAILABLE), () => 'unknown')).toBe(false);
  });

  it.each([
    ['RESOURCE_EXHAUSTED', Status.RESOURCE_EXHAUSTED],
    ['UNAVAILABLE', Status.UNAVAILABLE],
  ] as const)('is retried as a status of its code (%s), and the call ends once', async (name, code) => {
    const h = engineCall(retryPolicy({ maxAttempts: 2, retryableStatusCodes: [name] }));
    h.attempt(0).peer = 'unknown';
    h.attempt(0).listener?.onReceiveStatus?.(noDetails(code));
    await h.settle();
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(2);
    h.attempt(1).listener?.onReceiveStatus?.({ code: Status.OK, details: '', metadata: new Metadata() });
    await h.settle();
    expect(h.received.statuses).toHaveLength(1);
    expect(h.status.code).toBe(Status.OK);
  });
});
