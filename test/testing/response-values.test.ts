/**
 * A scripted response's enum field with a name that is not one of the enum's values would be sent as the default
 * (protobufjs puts 0 in its place), so it is refused with the value meant, wherever the enum is declared; and two
 * members of one oneof, which no server could send, are refused too, as is an array for a map field.
 */
import { loadSync } from '@grpc/proto-loader';
import { describe, expect, it } from 'vitest';
import {
  formatResponseProblem,
  responseFieldsOf,
  responseKeyProblems,
} from '../../src/testing/response-fields.js';

const PROTO = 'test/fixtures/response-types/stock.proto';
const METHOD = '/fixture.stock.v1.StockService/GetStock';

function problemsOf(
  response: Record<string, unknown>,
  options: { keepCase?: boolean; noFiles?: boolean } = {},
) {
  const definition = loadSync(PROTO, { keepCase: options.keepCase ?? false });
  const service = definition['fixture.stock.v1.StockService'] as unknown as Record<
    string,
    Record<string, unknown>
  >;
  const method = { ...service.GetStock } as Record<string, unknown>;
  if (options.noFiles) {
    const { fileDescriptorProtos: _dropped, ...rest } = method.responseType as Record<string, unknown>;
    method.responseType = rest;
  }
  const fields = responseFieldsOf(method);
  expect(fields).toBeDefined();
  return responseKeyProblems(response, fields!, METHOD).map(formatResponseProblem);
}

describe('enum values of a scripted response', () => {
  it('names a misspelled value of a top-level enum, with the value meant and the list', () => {
    expect(problemsOf({ availability: 'IN_STOK' })).toEqual([
      `response.availability: "IN_STOK" is not a value of Availability, the enum of Stock.availability (in the response of ${METHOD}), so the serializer would send the default in its place; did you mean "IN_STOCK"? (values: AVAILABILITY_UNSPECIFIED, IN_STOCK, BACKORDERED)`,
    ]);
  });

  it('checks each element of a repeated enum, letter case included, and enums nested at any depth', () => {
    expect(problemsOf({ history: ['IN_STOCK', 'backordered'] })).toEqual([
      expect.stringMatching(
        /^response\.history\[1\]: "backordered" is not a value of Availability.*did you mean "BACKORDERED"\?/,
      ),
    ]);
    expect(problemsOf({ level: 'HGIH', shelf: { side: 'LEFTT' } })).toEqual([
      expect.stringMatching(
        /^response\.level: "HGIH" is not a value of Level, the enum of Stock\.level .*did you mean "HIGH"\?/,
      ),
      expect.stringMatching(
        /^response\.shelf\.side: "LEFTT" is not a value of Side, the enum of Shelf\.side .*did you mean "LEFT"\?/,
      ),
    ]);
  });

  it('takes every value name and any number, with keepCase too', () => {
    expect(
      problemsOf({
        availability: 'BACKORDERED',
        history: [1, 'IN_STOCK'],
        level: 7,
        shelf: { side: 'RIGHT' },
      }),
    ).toEqual([]);
    expect(problemsOf({ availability: 'IN_STOK' }, { keepCase: true })).toHaveLength(1);
  });

  it('without the file descriptors, checks the enums declared in the response message', () => {
    expect(
      problemsOf({ level: 'HGIH', shelf: { side: 'LEFTT' }, availability: 'IN_STOK' }, { noFiles: true }),
    ).toEqual([
      expect.stringMatching(/^response\.level: "HGIH"/),
      expect.stringMatching(/^response\.shelf\.side: "LEFTT"/),
    ]);
  });
});

describe('oneof members of a scripted response', () => {
  it('refuses a second member of one oneof, which no server could send; one member, or null beside it, is fine', () => {
    expect(problemsOf({ inDays: 3, onDate: '2027-01-01' })).toEqual([
      `response.onDate: "onDate" and "inDays" are both members of the oneof restock of Stock (in the response of ${METHOD}): a message holds one of them, so no server could send both`,
    ]);
    expect(problemsOf({ in_days: 3, on_date: 'x' }, { keepCase: true })).toHaveLength(1);
    expect(problemsOf({ inDays: 3, onDate: null, note: 'n' })).toEqual([]);
    // Without the file descriptors, oneof members cannot be told from other fields: not checked.
    expect(problemsOf({ inDays: 1, onDate: 'x', level: 'LOW' }, { noFiles: true })).toEqual([]);
  });
});

describe('map fields of a scripted response', () => {
  it('refuses an array for a map, which the serializer would key by index; an object is fine', () => {
    const arrayForMap = new RegExp(
      `^response\\.counts: "counts" is a map field of Stock \\(in the response of ${METHOD}\\): write it as an object keyed by the map's keys`,
    );
    expect(problemsOf({ counts: ['a'] })).toEqual([expect.stringMatching(arrayForMap)]);
    expect(problemsOf({ counts: ['a'] }, { noFiles: true })).toEqual([expect.stringMatching(arrayForMap)]);
    expect(problemsOf({ counts: { a: 1 } })).toEqual([]);
  });
});
