import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { methodLikeCallId } from '../../src/testing/call-id-resemblance.js';
import { FlakyServer, flakyMethodPath } from '../../src/testing/index.js';
import { captureWarnings } from '../helpers/warnings.js';

const ORDERS = 'test/testing/fixtures/orders.proto';
const GET_ORDER = 'fixture.orders.v1.OrderService/GetOrder';

let server: FlakyServer;

beforeAll(async () => {
  server = await FlakyServer.start({ proto: ORDERS });
});

afterAll(async () => {
  await server.stop();
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('FlakyServer call ids that resemble a method', () => {
  it('warns once per call id of one that resembles a served method, naming scriptMethod with the method', () => {
    const warnings = captureWarnings();
    for (const callId of ['GetOrder', 'fixture.orders.v1.OrderService.GetOrder', 'get-order', 'GetOrder']) {
      server.script(callId, [{}]);
    }
    expect(warnings).toEqual(
      ['GetOrder', 'fixture.orders.v1.OrderService.GetOrder', 'get-order'].map((callId) => ({
        code: 'GRPC_RETRY_HEDGING_CALL_ID',
        message: `grpc-retry-hedging: FlakyServer.script(${JSON.stringify(callId)}): ${JSON.stringify(callId)} scripts the calls whose x-flaky-call-id is ${JSON.stringify(callId)}, not a method; to script the method, call scriptMethod("${GET_ORDER}", attempts) or pass methodScripts`,
      })),
    );
  });

  it('warns of a service name, and of the built-in FlakyTest methods, and not of plain call ids', () => {
    const warnings = captureWarnings();
    for (const callId of ['OrderService', 'Unary', 'c1', 'tenant/42', 'order-1', 'stream']) {
      server.script(callId, [{}]);
    }
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringContaining(
        `FlakyServer.script("OrderService"): "OrderService" scripts the calls whose x-flaky-call-id is "OrderService", not a method; to script the methods of fixture.orders.v1.OrderService, script each one with scriptMethod, such as scriptMethod("fixture.orders.v1.OrderService/`,
      ),
      expect.stringContaining(`call scriptMethod("${flakyMethodPath('Unary').slice(1)}", attempts)`),
    ]);
  });

  it('warns of the scripts option at start, naming it', async () => {
    const warnings = captureWarnings();
    const own = await FlakyServer.start({ proto: ORDERS, scripts: { GetOrder: [{}], ok: [{}] } });
    await own.stop();
    expect(warnings).toEqual([
      {
        code: 'GRPC_RETRY_HEDGING_CALL_ID',
        message: expect.stringMatching(
          /^grpc-retry-hedging: FlakyServer\.start: scripts\["GetOrder"\]: "GetOrder" scripts /,
        ),
      },
    ]);
  });

  it('still refuses a served method given as a call id, without a warning', () => {
    const warnings = captureWarnings();
    expect(() => server.script(GET_ORDER, [{}])).toThrow('is a method this server serves, not a call id');
    expect(warnings).toEqual([]);
  });
});

describe('methodLikeCallId', () => {
  const served = new Set([`/${GET_ORDER}`, '/fixture.orders.v1.OrderService/ListOrders']);

  it('reads a method in its short, dotted, misspelled and padded forms, and a service', () => {
    for (const callId of [
      'GetOrder',
      'getorder',
      'Get_Order',
      'OrderService/GetOrder',
      'fixture.orders.v1.OrderService.GetOrder',
      'fixture.orders.v1.OrderService/GetOrdr',
      ` /${GET_ORDER}/ `,
    ]) {
      expect(methodLikeCallId(callId, served), callId).toEqual({ kind: 'method', method: GET_ORDER });
    }
    expect(methodLikeCallId('OrderService', served)).toEqual({
      kind: 'service',
      service: 'fixture.orders.v1.OrderService',
      example: GET_ORDER,
    });
  });

  it('leaves call ids alone: short ones near a method name, paths, empty ones', () => {
    for (const callId of ['GetOrd', 'c1', 'tenant/42', '', '---', 'orders']) {
      expect(methodLikeCallId(callId, served), callId).toBeUndefined();
    }
  });
});
