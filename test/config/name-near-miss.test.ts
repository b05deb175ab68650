/**
 * A call no methodConfig name matches while one nearly does (other letter case, a service without its package)
 * is reported once per method path; and the interceptor put where no client call reaches it says so.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { nearMissName } from '../../src/config/name-near-miss.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { engineCall } from '../helpers/engine.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';
import { captureWarnings } from '../helpers/warnings.js';

const withNames = (...name: object[]) =>
  parseServiceConfig({ methodConfig: [{ name, ...RETRY_UNAVAILABLE_POLICY }] });

afterEach(() => {
  vi.restoreAllMocks();
});

describe('nearMissName', () => {
  it('finds a method or a service in other letter case, and a service without its package', () => {
    const path = '/helloworld.Greeter/SayHello';
    expect(nearMissName(withNames({ service: 'helloworld.Greeter', method: 'sayHello' }), path)).toBe(
      'the call /helloworld.Greeter/SayHello matches no methodConfig name, but {"service":"helloworld.Greeter","method":"sayHello"} nearly does (the method differs in letter case): names are matched exactly, as the proto spells them (helloworld.Greeter/SayHello)',
    );
    expect(nearMissName(withNames({ service: 'helloworld.greeter' }), path)).toContain(
      '{"service":"helloworld.greeter"} nearly does (the service differs in letter case)',
    );
    expect(nearMissName(withNames({ service: 'Greeter' }), path)).toContain(
      '(the service is named without its package): names are matched exactly, as the proto spells them (helloworld.Greeter)',
    );
    expect(nearMissName(withNames({ service: 'Greeter', method: 'sayhello' }), path)).toContain(
      'the service is named without its package, and the method differs in letter case',
    );
  });

  it('finds a service with part of its package, and a method written into the service', () => {
    const path = '/acme.shop.v1.Shop/GetItem';
    for (const service of ['v1.Shop', 'shop.v1.Shop', 'acme.Shop', 'shop.Shop', 'acme.v1.Shop']) {
      expect(nearMissName(withNames({ service, method: 'GetItem' }), path)).toContain(
        `{"service":"${service}","method":"GetItem"} nearly does (the service is named with only part of its package`,
      );
    }
    expect(nearMissName(withNames({ service: 'acme.shop.v1.Shop.GetItem' }), path)).toBe(
      'the call /acme.shop.v1.Shop/GetItem matches no methodConfig name, but {"service":"acme.shop.v1.Shop.GetItem"} nearly does (the method is written into the service; write it as { "service": "…", "method": "…" }): names are matched exactly, as the proto spells them (acme.shop.v1.Shop)',
    );
    // Another package, or another version, is another service.
    expect(nearMissName(withNames({ service: 'other.Shop' }), path)).toBeUndefined();
    expect(nearMissName(withNames({ service: 'acme.shop.v2.Shop' }), path)).toBeUndefined();
    expect(nearMissName(withNames({ service: 'v1.acme.Shop' }), path)).toBeUndefined();
  });

  it('says nothing of names that are simply other methods or services', () => {
    const path = '/helloworld.Greeter/SayHello';
    expect(
      nearMissName(withNames({ service: 'helloworld.Greeter', method: 'SayGoodbye' }), path),
    ).toBeUndefined();
    expect(nearMissName(withNames({ service: 'other.Greeter' }), path)).toBeUndefined();
    expect(nearMissName(withNames({ service: 'Greeter2' }), path)).toBeUndefined();
    expect(nearMissName(withNames({}), path)).toBeUndefined();
    expect(nearMissName(withNames({ service: 'x.Y' }), 'not-a-path')).toBeUndefined();
  });
});

describe('the interceptor', () => {
  it('warns once per method path when a call matches no name but one nearly', () => {
    const warnings = captureWarnings();
    const config = withNames({ service: 'test.svc' });
    const interceptor = { onEvent: () => {} };
    // engineCall makes a fresh interceptor per call: the warning comes once per interceptor and path.
    const first = engineCall(config, { interceptor });
    expect(first.attempts).toHaveLength(1);
    expect(warnings).toEqual([
      {
        message: expect.stringContaining(
          'the call /test.Svc/Do matches no methodConfig name, but {"service":"test.svc"}',
        ),
        code: 'GRPC_RETRY_HEDGING_CONFIG_NAME',
      },
    ]);
    const shared = createRetryInterceptor(config);
    const options = { method_definition: { path: '/test.Svc/Do' } } as never;
    const next = (() => ({})) as never;
    shared(options, next);
    shared(options, next);
    expect(warnings).toHaveLength(2);
  });

  it('put in interceptor_providers or on a server, it says where it belongs', () => {
    const interceptor = createRetryInterceptor({ methodConfig: [] }) as unknown as (
      ...args: unknown[]
    ) => unknown;
    const where = /returns a grpc-js client interceptor: put it in the client options' `interceptors`/;
    // interceptor_providers: called with the method definition alone.
    expect(() => interceptor({ path: '/a.B/C', requestStream: false })).toThrow(where);
    // A server interceptor: (methodDescriptor, call).
    expect(() => interceptor({ path: '/a.B/C' }, {})).toThrow(where);
  });
});
