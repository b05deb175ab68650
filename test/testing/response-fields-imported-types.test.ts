/**
 * Scripted responses are checked inside message fields whose types are declared outside the response message: at
 * the top of its file, or in another package and file (through proto-loader's `fileDescriptorProtos`); nested types,
 * map values, recursion and definitions without file descriptors as before.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterEach, describe, expect, it } from 'vitest';
import { FlakyServer } from '../../src/testing/index.js';
import {
  formatResponseProblem,
  type MessageFields,
  responseFieldsOf,
  responseKeyProblems,
} from '../../src/testing/response-fields.js';

const SHOP = 'test/fixtures/response-types/shop.proto';
const TWINS_B = 'test/fixtures/response-types/twins_b.proto';
const GET_ORDER = 'fixture.shop.v1.ShopService/GetOrder';

type Method = Record<string, unknown> & { path: string; responseType: Record<string, unknown> };

function methodOf(file: string, service: string, name: string, keepCase: boolean): Method {
  const definition = protoLoader.loadSync(file, { keepCase, oneofs: true });
  return (definition[service] as unknown as Record<string, Method>)[name]!;
}

function problemsOf(method: Method, response: Record<string, unknown>): string[] {
  const fields = responseFieldsOf(method);
  expect(fields).toBeDefined();
  return responseKeyProblems(response, fields!, method.path).map(formatResponseProblem);
}

/** How many messages deep `fields` goes, following every message field: finite, or this never returns. */
function depthOf(fields: MessageFields): number {
  let deepest = 0;
  for (const nested of fields.keys.values()) {
    if (nested !== undefined) {
      deepest = Math.max(deepest, depthOf(nested));
    }
  }
  return deepest + 1;
}

describe.each([
  { keepCase: true, unitCount: 'unit_count', currencyCode: 'currency_code', noteText: 'note_text' },
  { keepCase: false, unitCount: 'unitCount', currencyCode: 'currencyCode', noteText: 'noteText' },
])('a response loaded with keepCase: $keepCase', ({ keepCase, unitCount, currencyCode, noteText }) => {
  const getOrder = (): Method => methodOf(SHOP, 'fixture.shop.v1.ShopService', 'GetOrder', keepCase);
  const itemsBySku = keepCase ? 'items_by_sku' : 'itemsBySku';
  const createdAt = keepCase ? 'created_at' : 'createdAt';

  it('checks the keys of a message type declared at the top of the file', () => {
    expect(problemsOf(getOrder(), { items: [{ sku: 'a', [unitCount]: 1 }, { skuu: 'b' }] })).toEqual([
      `response.items[1].skuu: "skuu" is not a field of Item (in the response of /${GET_ORDER}); did you mean "sku"? (fields: sku, ${unitCount}, price)`,
    ]);
    const otherCase = keepCase ? 'unitCount' : 'unit_count';
    expect(problemsOf(getOrder(), { items: [{ [otherCase]: 1 }] })).toEqual([
      expect.stringMatching(
        new RegExp(`^response\\.items\\[0\\]\\.${otherCase}: .* of Item .*did you mean "${unitCount}"\\?`),
      ),
    ]);
  });

  it('checks the keys of a message type imported from another file and package', () => {
    expect(problemsOf(getOrder(), { total: { [currencyCode]: 'EUR', unitz: 3 } })).toEqual([
      expect.stringMatching(
        /^response\.total\.unitz: "unitz" is not a field of Money .*did you mean "units"\?/,
      ),
    ]);
    // imported from a top-level type
    expect(problemsOf(getOrder(), { items: [{ price: { currency: 'EUR' } }] })).toEqual([
      expect.stringMatching(
        new RegExp(
          `^response\\.items\\[0\\]\\.price\\.currency: .* of Money .*did you mean "${currencyCode}"\\?`,
        ),
      ),
    ]);
  });

  it('still checks nested message types', () => {
    expect(problemsOf(getOrder(), { note: { noteTxt: 'x', [noteText]: 'y' } })).toEqual([
      expect.stringMatching(
        new RegExp(
          `^response\\.note\\.noteTxt: "noteTxt" is not a field of Note .*did you mean "${noteText}"\\?`,
        ),
      ),
    ]);
  });

  it("checks the values of a map, and a Timestamp's value (its two fields, or its RFC 3339 string)", () => {
    expect(
      problemsOf(getOrder(), {
        [itemsBySku]: { 'any-key': { skuu: 'x' } },
        items: [{ skuu: 'y' }],
        [createdAt]: { seconds: 1, '@type': 'not a field' },
      }),
    ).toEqual([
      expect.stringMatching(new RegExp(`^response\\.${itemsBySku}\\.any-key\\.skuu: .* of Item .*"sku"`)),
      expect.stringMatching(/^response\.items\[0\]\.skuu: /),
      expect.stringMatching(
        new RegExp(
          `^response\\.${createdAt}: Order\\.${createdAt} is a google\\.protobuf\\.Timestamp .*"@type" is not one of its fields`,
        ),
      ),
    ]);
    expect(problemsOf(getOrder(), { [createdAt]: '2024-01-01T00:00:00Z' })).toEqual([]);
  });

  it('terminates on mutually recursive types, checking a message that holds itself one level down only', () => {
    const method = getOrder();
    expect(depthOf(responseFieldsOf(method)!)).toBe(3); // Order, Category, Tree (Tree.parent is not followed)
    expect(
      problemsOf(method, {
        category: { title: 't', tree: { labell: 'x', parent: { title: 'p', bogus: 1 } } },
      }),
    ).toEqual([
      expect.stringMatching(/^response\.category\.tree\.labell: .* of Tree .*did you mean "label"\?/),
    ]);
  });

  it('checks nested types only when the definition has no fileDescriptorProtos, or ones that do not decode', () => {
    const response = { items: [{ skuu: 'b' }], note: { noteTxt: 'x' } };
    for (const fileDescriptorProtos of [undefined, [Buffer.from([0x22, 0xff, 0x01])], 'not an array']) {
      const method = getOrder();
      const bare = { ...method, responseType: { ...method.responseType, fileDescriptorProtos } };
      expect(problemsOf(bare, response)).toEqual([expect.stringMatching(/^response\.note\.noteTxt: /)]);
    }
  });
});

describe('a response message whose name and fields another package also has', () => {
  it("is the one in the method's service package, and field types resolve from it", () => {
    const twinB = methodOf(TWINS_B, 'fixture.twins.b.TwinB', 'Get', true);
    expect(problemsOf(twinB, { inner: { b_field: 'ok', a_field: 'x' } })).toEqual([
      expect.stringMatching(/^response\.inner\.a_field: "a_field" is not a field of Inner .*"b_field"/),
    ]);
    const twinA = methodOf(TWINS_B, 'fixture.twins.a.TwinA', 'Get', true);
    expect(problemsOf(twinA, { inner: { a_field: 'ok', b_field: 'x' } })).toEqual([
      expect.stringMatching(/^response\.inner\.b_field: "b_field" is not a field of Inner .*"a_field"/),
    ]);
  });

  it('falls back to nested types when the package does not tell them apart', () => {
    const twinB = methodOf(TWINS_B, 'fixture.twins.b.TwinB', 'Get', true);
    expect(problemsOf({ ...twinB, path: '/other.Svc/Get' }, { inner: { a_field: 'x' } })).toEqual([]);
  });
});

describe('a hand-built definition', () => {
  it('is checked as before, nested types included', () => {
    const method = {
      path: '/x.S/M',
      responseType: {
        type: {
          name: 'R',
          field: [{ name: 'line', type: 'TYPE_MESSAGE', typeName: 'L' }],
          nestedType: [{ name: 'L', field: [{ name: 'sku', type: 'TYPE_STRING' }] }],
        },
      },
    };
    expect(problemsOf(method, { line: { skuu: 1 }, lime: 2 })).toEqual([
      'response.line.skuu: "skuu" is not a field of L (in the response of /x.S/M); did you mean "sku"? (fields: sku)',
      'response.lime: "lime" is not a field of R (in the response of /x.S/M); did you mean "line"? (fields: line)',
    ]);
  });
});

describe('the flaky server', () => {
  let server: FlakyServer | undefined;
  let client: grpc.Client | undefined;
  afterEach(async () => {
    client?.close();
    await server?.stop();
    server = undefined;
    client = undefined;
  });

  it('refuses a script with a wrong key in a top-level type, and serves a right one', async () => {
    server = await FlakyServer.start({ proto: SHOP, keepCase: true });
    expect(() => server!.scriptMethod(GET_ORDER, [{ response: { items: [{ skuu: 'a' }] } }])).toThrow(
      `scriptMethod("${GET_ORDER}")[0]: response.items[0].skuu: "skuu" is not a field of Item (in the response of /${GET_ORDER}); did you mean "sku"?`,
    );
    server.scriptMethod(GET_ORDER, [
      { response: { items: [{ sku: 'a', price: { currency_code: 'EUR', units: 3 } }] } },
    ]);
    const definition = protoLoader.loadSync(SHOP, { keepCase: true });
    const Shop = (
      grpc.loadPackageDefinition(definition) as unknown as {
        fixture: { shop: { v1: { ShopService: typeof grpc.Client } } };
      }
    ).fixture.shop.v1.ShopService;
    const shop = new Shop(server.address, grpc.credentials.createInsecure()) as grpc.Client & {
      GetOrder(request: object, callback: grpc.requestCallback<Record<string, unknown>>): unknown;
    };
    client = shop;
    const res = await new Promise<Record<string, unknown> | undefined>((resolve, reject) => {
      shop.GetOrder({}, (err, value) => (err ? reject(err) : resolve(value)));
    });
    expect(res).toMatchObject({ items: [{ sku: 'a', price: { currency_code: 'EUR' } }] });
  });
});
