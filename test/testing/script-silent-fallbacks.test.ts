/**
 * Script input the flaky server used to take and then drop or change without a word: `retryInfoMs` on an attempt
 * that ends OK, a trailer a dedicated field would replace, a oneof's name given as a response field, URL-safe
 * base64 refused for a BytesValue, and a numeral beyond a double sent as Infinity. Each is an error naming the
 * place in the script now (or, for URL-safe base64, taken and sent as the bytes it encodes).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  FlakyServer,
  parseAttemptScriptsJson,
  validateAttemptScript,
  validateAttemptScripts,
} from '../../src/testing/index.js';
import { withWellKnownValues } from '../../src/testing/response-conversion.js';
import type { MessageFields } from '../../src/testing/response-fields.js';
import { wellKnownValueProblem, wireValueOf } from '../../src/testing/well-known-values.js';
import { responseFieldsFrom, responseProblems } from '../helpers/response-fields.js';

const UNARY = 'grpc_retry_hedging.testing.v1.FlakyTest/Unary';
const dir = mkdtempSync(join(tmpdir(), 'flaky-fallbacks-'));
const PROTO = join(dir, 'wallet.proto');
writeFileSync(
  PROTO,
  `syntax = "proto3";
package fixture.wallet.v1;
import "google/protobuf/wrappers.proto";
message Payment {
  string id = 1;
  oneof payment_method {
    string iban = 2;
    string card_no = 3;
  }
  optional string note = 4;
  google.protobuf.BytesValue receipt = 5;
  google.protobuf.DoubleValue amount = 6;
  google.protobuf.FloatValue rate = 7;
  Refund refund = 8;
}
message Refund {
  oneof reason {
    string code = 1;
    string text = 2;
  }
  google.protobuf.BytesValue receipt = 3;
}
message GetPaymentRequest {
  string id = 1;
}
service PaymentService {
  rpc GetPayment(GetPaymentRequest) returns (Payment);
}
`,
);
type Reply = Record<string, unknown>;
interface PaymentClient extends grpc.Client {
  GetPayment(request: Reply, callback: grpc.requestCallback<Reply>): unknown;
}
type PaymentConstructor = new (address: string, credentials: grpc.ChannelCredentials) => PaymentClient;
const GET_PAYMENT = 'fixture.wallet.v1.PaymentService/GetPayment';
const METHOD = `/${GET_PAYMENT}`;

let server: FlakyServer | undefined;
let clients: grpc.Client[] = [];
afterEach(async () => {
  for (const c of clients) c.close();
  clients = [];
  await server?.stop();
  server = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('retryInfoMs needs a non-OK status', () => {
  const needs = /"retryInfoMs" requires a non-OK status, got /;

  it('refuses it without a status, or with status OK in any spelling, naming the place', () => {
    expect(() => validateAttemptScripts([{ status: 14 }, { retryInfoMs: 250 }])).toThrow(
      'script[1]: "retryInfoMs" requires a non-OK status, got no "status" (an attempt ends OK by default): the RetryInfo travels in the details of a failed status, so an OK attempt would not send it; give a "status" such as "UNAVAILABLE"',
    );
    for (const status of [0, 'OK', 'ok']) {
      expect(() => validateAttemptScript({ status, retryInfoMs: 5 })).toThrow(
        `attempt script: "retryInfoMs" requires a non-OK status, got status OK:`,
      );
    }
    expect(() => parseAttemptScriptsJson('[{"retryInfoMs": 5}]', 'x-flaky-script metadata')).toThrow(
      /^x-flaky-script metadata\[0\]: "retryInfoMs" requires a non-OK status/,
    );
  });

  it('takes it with any non-OK status; pushback stays allowed with OK (it is sent with any status)', () => {
    expect(validateAttemptScript({ status: 'UNAVAILABLE', retryInfoMs: 5 })).toEqual({
      status: 14,
      retryInfoMs: 5,
    });
    expect(validateAttemptScript({ status: 8, retryInfoMs: 0 })).toEqual({ status: 8, retryInfoMs: 0 });
    expect(validateAttemptScript({ pushback: '10' })).toEqual({ pushback: '10' });
    expect(validateAttemptScript({ status: 0, pushback: 'abc' })).toEqual({ status: 0, pushback: 'abc' });
  });

  it('is refused by scriptMethod before any call', async () => {
    server = await FlakyServer.start({ host: '127.0.0.1', port: 0 });
    expect(() => server!.scriptMethod(UNARY, [{ retryInfoMs: 250 }])).toThrow(needs);
    expect(() => server!.script('c1', [{ status: 'UNAVAILABLE' }, { status: 'OK', retryInfoMs: 1 }])).toThrow(
      needs,
    );
  });
});

describe('a trailer a dedicated field would replace', () => {
  it('refuses grpc-retry-pushback-ms beside pushback, naming both', () => {
    expect(() =>
      validateAttemptScripts([
        { status: 14, pushback: '5', trailers: { 'x-other': 'a', 'grpc-retry-pushback-ms': '7' } },
      ]),
    ).toThrow(
      'script[0]: "trailers.grpc-retry-pushback-ms" and "pushback" both set the grpc-retry-pushback-ms trailer ("pushback" would replace the scripted value silently): give one of them',
    );
  });

  it('refuses grpc-status-details-bin beside retryInfoMs, naming both', () => {
    expect(() =>
      validateAttemptScript(
        { status: 14, retryInfoMs: 5, trailers: { 'grpc-status-details-bin': 'x' } },
        'w',
      ),
    ).toThrow(
      'w: "trailers.grpc-status-details-bin" and "retryInfoMs" both set the grpc-status-details-bin trailer ("retryInfoMs" would replace the scripted value silently): give one of them',
    );
  });

  it('takes either trailer alone, raw or garbage, with any status', () => {
    for (const script of [
      { trailers: { 'grpc-retry-pushback-ms': 'abc' } },
      { status: 14, trailers: { 'grpc-retry-pushback-ms': '-1' }, retryInfoMs: 5 },
      { status: 14, trailers: { 'grpc-status-details-bin': 'junk' }, pushback: '3' },
      { trailers: { 'grpc-status-details-bin': '' } },
    ]) {
      expect(() => validateAttemptScript(script)).not.toThrow();
    }
  });
});

function paymentFields(options: { keepCase?: boolean; noFiles?: boolean } = {}): MessageFields {
  return responseFieldsFrom(PROTO, 'fixture.wallet.v1.PaymentService', 'GetPayment', {
    ...options,
    oneofs: true,
  });
}

function problemsOf(response: Record<string, unknown>, fields = paymentFields()): string[] {
  return responseProblems(response, fields, METHOD);
}

describe("a oneof's name in a scripted response", () => {
  it('refuses a oneof group, naming its members, at any depth', () => {
    expect(problemsOf({ paymentMethod: 'DE00 1234' })).toEqual([
      `response.paymentMethod: "paymentMethod" is not a field of Payment (in the response of ${METHOD}) but a oneof group, whose members are iban, cardNo: the serializer ignores a oneof's own key, so the client would receive none of what it holds; set one member instead`,
    ]);
    expect(problemsOf({ refund: { reason: { code: 'x' } } })).toEqual([
      expect.stringMatching(
        /^response\.refund\.reason: "reason" is not a field of Refund .*a oneof group, whose members are code, text:/,
      ),
    ]);
    expect(problemsOf({ payment_method: 'x' }, paymentFields({ keepCase: true }))).toEqual([
      expect.stringMatching(/"payment_method" .*a oneof group, whose members are iban, card_no:/),
    ]);
  });

  it("refuses proto3 optional's synthetic oneof, naming the field to set", () => {
    expect(problemsOf({ _note: 'n' })).toEqual([
      `response._note: "_note" is not a field of Payment (in the response of ${METHOD}) but the synthetic oneof of the proto3 optional field "note": the serializer ignores a oneof's own key, so the client would receive none of what it holds; set "note" itself`,
    ]);
  });

  it('without the file descriptors, still refuses them', () => {
    const fields = paymentFields({ noFiles: true });
    expect(problemsOf({ paymentMethod: 'x' }, fields)).toEqual([
      expect.stringMatching(
        /"paymentMethod" .* but a oneof group \(the descriptor does not tell its members\)/,
      ),
    ]);
    expect(problemsOf({ _note: 'n' }, fields)).toEqual([
      expect.stringMatching(/synthetic oneof of the proto3 optional field "note"/),
    ]);
  });

  it('keeps oneof names out of the fields a hint lists', () => {
    const [problem] = problemsOf({ ibn: 'x' });
    expect(problem).toContain(
      'did you mean "iban"? (fields: id, iban, cardNo, note, receipt, amount, rate, refund)',
    );
    const [near] = problemsOf({ paymentMethd: 'x' });
    expect(near).not.toContain('paymentMethod');
    expect(near).not.toContain('_note');
  });

  it('takes it as proto-loader decodes it: the name of the member set, beside that member', () => {
    expect(problemsOf({ iban: 'x', paymentMethod: 'iban', note: 'n', _note: 'note' })).toEqual([]);
    expect(problemsOf({ paymentMethod: null })).toEqual([]);
    expect(problemsOf({ paymentMethod: 'iban' })).toHaveLength(1);
    expect(problemsOf({ id: 'x', paymentMethod: 'id' })).toHaveLength(1);
  });

  it('is refused by scriptMethod, not sent as an empty message', async () => {
    server = await FlakyServer.start({ host: '127.0.0.1', port: 0, proto: PROTO });
    expect(() => server!.scriptMethod(GET_PAYMENT, [{ response: { paymentMethod: 'x' } }])).toThrow(
      `scriptMethod("${GET_PAYMENT}")[0]: response.paymentMethod: "paymentMethod" is not a field of Payment`,
    );
  });
});

describe('BytesValue in URL-safe base64', () => {
  it('is taken, bare or in the object, padded or not, and sent as the same bytes', async () => {
    for (const text of ['aGV-bG8_', 'aGV-bG8', '_w', '_w==', '-_8']) {
      expect(wellKnownValueProblem('google.protobuf.BytesValue', text), text).toBeUndefined();
      expect(wellKnownValueProblem('google.protobuf.BytesValue', { value: text }), text).toBeUndefined();
    }
    expect(wireValueOf('google.protobuf.BytesValue', 'aGV-bG8_')).toEqual({ value: 'aGV+bG8/' });
    expect(wireValueOf('google.protobuf.BytesValue', { value: '_w' })).toEqual({ value: '/w' });
    expect(withWellKnownValues({ receipt: '-_8' }, paymentFields())).toEqual({ receipt: { value: '+/8' } });

    server = await FlakyServer.start({ host: '127.0.0.1', port: 0, proto: PROTO });
    server.scriptMethod(GET_PAYMENT, [
      { response: { receipt: 'aGV-bG8_', refund: { receipt: { value: '_w' } } } },
    ]);
    const definition = protoLoader.loadSync(PROTO, {});
    const pkg = grpc.loadPackageDefinition(definition) as unknown as {
      fixture: { wallet: { v1: { PaymentService: PaymentConstructor } } };
    };
    const client = new pkg.fixture.wallet.v1.PaymentService(
      server.address,
      grpc.credentials.createInsecure(),
    );
    clients.push(client);
    const { err, res } = await new Promise<{ err: grpc.ServiceError | null; res: Reply | undefined }>(
      (resolve) => {
        client.GetPayment({}, (e, r) => resolve({ err: e, res: r }));
      },
    );
    expect(err).toBeNull();
    const receipt = res?.receipt as { value: Buffer };
    const refund = res?.refund as { receipt: { value: Buffer } };
    expect(Buffer.from(receipt.value).toString('latin1')).toBe('he~lo?');
    expect([...refund.receipt.value]).toEqual([0xff]);
  });

  it('refuses a value that mixes the two alphabets', () => {
    expect(wellKnownValueProblem('google.protobuf.BytesValue', 'a+b-')).toBe(
      'got string "a+b-" (it mixes the standard base64 alphabet, with + and /, and the URL-safe one, with - and _)',
    );
  });
});

describe('DoubleValue and FloatValue numerals beyond their range', () => {
  const double = ' (beyond ±1.7976931348623157e+308, the range of a double: it would be sent as Infinity)';
  const float =
    ' (beyond ±3.4028234663852886e+38, the range of a 32-bit float: it would be sent as Infinity)';

  it('refuses a string numeral that overflows a double, bare or in the object', () => {
    for (const text of ['1e400', '-1e400', '2e308']) {
      expect(wellKnownValueProblem('google.protobuf.DoubleValue', text)).toBe(
        `got string "${text}"${double}`,
      );
      expect(wellKnownValueProblem('google.protobuf.DoubleValue', { value: text })).toBe(
        `"value" must be a number (a number or a string of one, "NaN", "Infinity" or "-Infinity"), got string "${text}"${double}`,
      );
      expect(wellKnownValueProblem('google.protobuf.FloatValue', text)).toBe(`got string "${text}"${float}`);
    }
    expect(problemsOf({ amount: '1e400' })).toEqual([
      expect.stringMatching(
        /^response\.amount: Payment\.amount is a google\.protobuf\.DoubleValue .*got string "1e400" \(beyond/,
      ),
    ]);
  });

  it('takes "Infinity", "-Infinity", "NaN", the largest double, and the number Infinity itself', () => {
    for (const value of [
      'Infinity',
      '-Infinity',
      'NaN',
      '1.7976931348623157e308',
      '1e-400',
      Number.POSITIVE_INFINITY,
    ]) {
      expect(wellKnownValueProblem('google.protobuf.DoubleValue', value), String(value)).toBeUndefined();
    }
    expect(wellKnownValueProblem('google.protobuf.FloatValue', 'Infinity')).toBeUndefined();
    expect(wellKnownValueProblem('google.protobuf.FloatValue', Number.NEGATIVE_INFINITY)).toBeUndefined();
  });

  it('is refused by scriptMethod', async () => {
    server = await FlakyServer.start({ host: '127.0.0.1', port: 0, proto: PROTO });
    expect(() => server!.scriptMethod(GET_PAYMENT, [{ response: { amount: { value: '1e400' } } }])).toThrow(
      /response\.amount: .*got string "1e400" \(beyond ±1\.7976931348623157e\+308, the range of a double/,
    );
    expect(() => server!.scriptMethod(GET_PAYMENT, [{ response: { rate: '1e400' } }])).toThrow(
      /response\.rate: .*got string "1e400" \(beyond ±3\.4028234663852886e\+38, the range of a 32-bit float/,
    );
  });
});
