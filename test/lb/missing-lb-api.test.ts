import { describe, expect, it, vi } from 'vitest';

// A grpc-js whose experimental namespace lacks the load-balancer API (as a future major might).
vi.mock('@grpc/grpc-js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('@grpc/grpc-js')>();
  const { ChildLoadBalancerHandler: _gone, ...experimental } = actual.experimental;
  return { ...actual, experimental };
});

describe('a grpc-js without the load-balancer API', () => {
  it('fails with an error naming what is missing, not a silent no-op', async () => {
    const { registerAvoidTriedReplicas } = await import('../../src/lb/avoid-tried-balancer.js');
    const { createChannelOptions } = await import('../../src/config/channel-options.js');
    expect(() => registerAvoidTriedReplicas()).toThrow(
      /avoiding tried replicas needs grpc-js's load-balancer API, and this @grpc\/grpc-js lacks experimental\.ChildLoadBalancerHandler/,
    );
    expect(() => createChannelOptions({}, { avoidTriedReplicas: true })).toThrow(/lacks experimental\./);
  });
});
