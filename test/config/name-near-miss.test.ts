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

  it('finds a service or a method misspelt by a letter left out, added or swapped', () => {
    const path = '/inventory.v1.Inventory/GetItem';
    for (const service of ['inventory.v1.Inventroy', 'inventory.v1.Inventor', 'inventory.v1.Inventoryy']) {
      expect(nearMissName(withNames({ service }), path)).toBe(
        `the call ${path} matches no methodConfig name, but {"service":"${service}"} nearly does (the service is misspelt): names are matched exactly, as the proto spells them (inventory.v1.Inventory)`,
      );
    }
    for (const method of ['GetItems', 'GetIem', 'GteItem', 'getitems']) {
      expect(nearMissName(withNames({ service: 'inventory.v1.Inventory', method }), path)).toContain(
        `"method":"${method}"} nearly does (the method is misspelt)`,
      );
    }
  });

  it('names the entry a call with a misspelt entry of its own runs under instead', () => {
    const path = '/inventory.v1.Inventory/GetItem';
    const config = parseServiceConfig({
      methodConfig: [
        { name: [{ service: 'inventory.v1.Inventory' }], ...RETRY_UNAVAILABLE_POLICY },
        {
          name: [{ service: 'inventory.v1.Inventory', method: 'GetItems' }],
          hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.05s' },
        },
      ],
    });
    expect(nearMissName(config, path)).toBe(
      `the call ${path} matches no methodConfig name of its own (it runs under methodConfig[0], its service's entry), but {"service":"inventory.v1.Inventory","method":"GetItems"} nearly does (the method is misspelt): names are matched exactly, as the proto spells them (inventory.v1.Inventory/GetItem)`,
    );
    const withDefault = parseServiceConfig({
      methodConfig: [
        { name: [{ service: 'inventory.v1.Inventory', method: 'GetItems' }], ...RETRY_UNAVAILABLE_POLICY },
        { name: [{}], ...RETRY_UNAVAILABLE_POLICY },
      ],
    });
    expect(nearMissName(withDefault, path)).toContain('(it runs under methodConfig[1], its default entry)');
    // The lookup's precedence: the service's entry over a default listed before it.
    const defaultFirst = parseServiceConfig({
      methodConfig: [
        { name: [{}], ...RETRY_UNAVAILABLE_POLICY },
        { name: [{ service: 'inventory.v1.Inventory' }], ...RETRY_UNAVAILABLE_POLICY },
        { name: [{ service: 'inventory.v1.Inventory', method: 'GetItems' }], ...RETRY_UNAVAILABLE_POLICY },
      ],
    });
    expect(nearMissName(defaultFirst, path)).toContain(
      "(it runs under methodConfig[1], its service's entry)",
    );
    // A name that matches the call exactly: nothing to report, whatever else nearly matches.
    const exact = parseServiceConfig({
      methodConfig: [
        { name: [{ service: 'inventory.v1.Inventory', method: 'GetItems' }], ...RETRY_UNAVAILABLE_POLICY },
        { name: [{ service: 'inventory.v1.Inventory', method: 'GetItem' }], ...RETRY_UNAVAILABLE_POLICY },
      ],
    });
    expect(nearMissName(exact, path)).toBeUndefined();
  });

  it('takes a name the client has called for a real method, and a replaced letter or a short name for another name', () => {
    const path = '/inventory.v1.Inventory/GetItem';
    const plural = withNames({ service: 'inventory.v1.Inventory', method: 'GetItems' });
    expect(nearMissName(plural, path, new Set(['/inventory.v1.Inventory/GetItems']))).toBeUndefined();
    expect(nearMissName(plural, path, new Set(['/inventory.v1.Inventory/Other']))).toContain('misspelt');
    const otherService = withNames({ service: 'inventory.v1.Inventor' });
    expect(nearMissName(otherService, path, new Set(['/inventory.v1.Inventor/GetItem']))).toBeUndefined();
    // One letter replaced: another real name more often than a slip.
    expect(
      nearMissName(withNames({ service: 'inventory.v1.Inventory', method: 'SetItem' }), path),
    ).toBeUndefined();
    expect(nearMissName(withNames({ service: 'inventory.v2.Inventory' }), path)).toBeUndefined();
    // Names under five letters: `Get` and `Gets`, `Put` and `Pu` may both be real.
    expect(nearMissName(withNames({ service: 'a.Svc', method: 'Gets' }), '/a.Svc/Get')).toBeUndefined();
    expect(nearMissName(withNames({ service: 'a.Sv' }), '/a.Svc/Get')).toBeUndefined();
    // Two slips are not one.
    expect(
      nearMissName(withNames({ service: 'inventory.v1.Inventory', method: 'GetItemss' }), path),
    ).toBeUndefined();
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
    // engineCall makes a fresh interceptor per call; the warning comes once per path, and once per process for
    // the same text, so another interceptor of the same config does not repeat it.
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
    expect(warnings).toHaveLength(1);
  });

  it("warns of a misspelt method whose call runs under its service's entry, unless the name has been called", () => {
    const warnings = captureWarnings();
    const config = parseServiceConfig({
      methodConfig: [
        { name: [{ service: 'test.Svc' }], ...RETRY_UNAVAILABLE_POLICY },
        { name: [{ service: 'test.Svc', method: 'Doo' }], hedgingPolicy: { maxAttempts: 2 } },
        { name: [{ service: 'test.Svc', method: 'Readd' }], hedgingPolicy: { maxAttempts: 2 } },
        { name: [{ service: 'test.Svc', method: 'Writes' }], hedgingPolicy: { maxAttempts: 2 } },
      ],
    });
    const interceptor = createRetryInterceptor(config);
    const next = (() => ({})) as never;
    const call = (path: string) => interceptor({ method_definition: { path } } as never, next);
    call('/test.Svc/Readd');
    call('/test.Svc/Read');
    call('/test.Svc/Do');
    expect(warnings).toEqual([]);
    call('/test.Svc/Write');
    expect(warnings).toEqual([
      {
        message: expect.stringContaining(
          'the call /test.Svc/Write matches no methodConfig name of its own (it runs under methodConfig[0], its service\'s entry), but {"service":"test.Svc","method":"Writes"} nearly does (the method is misspelt)',
        ),
        code: 'GRPC_RETRY_HEDGING_CONFIG_NAME',
      },
    ]);
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
