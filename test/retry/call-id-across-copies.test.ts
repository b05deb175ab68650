/**
 * Call numbers are unique within the process, even when it loads two copies of the package (its ESM and CJS builds,
 * each with its own modules): one listener, such as the OpenTelemetry adapters, may serve interceptors of both.
 * Two module instances of the interceptor stand for the two copies here.
 */
import { type InterceptorOptions, Metadata } from '@grpc/grpc-js';
import { describe, expect, it, vi } from 'vitest';
import type { RetryEvent } from '../../src/retry/events.js';
import { FakeAttempt, METHOD } from '../helpers/engine.js';
import { RETRY_UNAVAILABLE_CONFIG } from '../helpers/service-configs.js';

type Factory = typeof import('../../src/retry/retry-interceptor.js').createRetryInterceptor;

/** Starts one call through an interceptor of `create` and returns the call number its events carry. */
function callIdOf(create: Factory): number {
  const events: RetryEvent[] = [];
  const interceptor = create(RETRY_UNAVAILABLE_CONFIG, { onEvent: (e) => events.push(e) });
  const options = {
    method_definition: {
      path: METHOD,
      requestStream: true,
      responseStream: true,
      requestSerialize: (m: Buffer) => m,
      responseDeserialize: (b: Buffer) => b,
    },
  } as unknown as InterceptorOptions;
  let attempts = 0;
  const call = interceptor(options, ((o: InterceptorOptions) => new FakeAttempt(attempts++, o)) as never);
  call.start(new Metadata(), {});
  call.cancelWithStatus(1, 'done');
  const ids = new Set(events.map((e) => e.callId));
  expect(ids.size).toBe(1);
  return [...ids][0] as number;
}

describe('call numbers', () => {
  it('keep counting across two copies of the package in one process', async () => {
    const first = (await import('../../src/retry/retry-interceptor.js')).createRetryInterceptor;
    vi.resetModules();
    const second = (await import('../../src/retry/retry-interceptor.js')).createRetryInterceptor;
    expect(second).not.toBe(first);
    const ids = [callIdOf(first), callIdOf(second), callIdOf(first), callIdOf(second)];
    expect(new Set(ids).size).toBe(4);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });
});
