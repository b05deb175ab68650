import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  parseAttemptScriptsJson,
  validateAttemptScript,
  validateAttemptScripts,
} from '../../src/testing/index.js';

describe('attempt script status', () => {
  it.each([
    ['UNAVAILABLE', grpc.status.UNAVAILABLE],
    ['unavailable', grpc.status.UNAVAILABLE],
    ['Deadline_Exceeded', grpc.status.DEADLINE_EXCEEDED],
    ['OK', grpc.status.OK],
    ['UNAUTHENTICATED', grpc.status.UNAUTHENTICATED],
  ])('accepts the status name %j as code %i', (name, code) => {
    expect(validateAttemptScript({ status: name })).toEqual({ status: code });
  });

  it('keeps codes 0..16 as they are, and refuses other numbers, saying what they would do', () => {
    expect(validateAttemptScripts([{ status: 14 }, { status: 0 }, { status: 16 }])).toEqual([
      { status: 14 },
      { status: 0 },
      { status: 16 },
    ]);
    for (const bad of [99, 17, -1, 1.5, Number.NaN]) {
      expect(() => validateAttemptScript({ status: bad })).toThrow(
        `must be a grpc status code 0..16 or a status name such as "UNAVAILABLE", got ${String(bad)} (a code outside 0..16 reaches the client as UNKNOWN: write "UNKNOWN" for that)`,
      );
    }
  });

  it.each([['14'], ['UNAVAILABLEX'], [''], [true], [null]])(
    'rejects %j, naming the field and the value',
    (bad) => {
      expect(() => validateAttemptScripts([{}, { status: bad }])).toThrow(
        /^script\[1\]: "status" must be a grpc status code 0\.\.16 or a status name such as "UNAVAILABLE", got /,
      );
    },
  );

  it.each([
    ['UNAVAILBLE', '; did you mean "UNAVAILABLE"?'],
    ['deadline_exeeded', '; did you mean "DEADLINE_EXCEEDED"?'],
    ['CANCELED', '; did you mean "CANCELLED"?'],
    [' UNAVAILABLE ', '; did you mean "UNAVAILABLE" (without the spaces around it)?'],
    ['14', '; write the number 14 without quotes, or its name "UNAVAILABLE"'],
  ])('names the status meant by %j, as the service config does', (bad, hint) => {
    expect(() => validateAttemptScript({ status: bad })).toThrow(
      `attempt script: "status" must be a grpc status code 0..16 or a status name such as "UNAVAILABLE", got "${bad}"${hint}`,
    );
  });

  it.each<[object, string]>([
    [
      { delayMs: '100' },
      '"delayMs" must be a number between 0 and 2147483647, got "100"; did you mean 100 (a number, not a string)?',
    ],
    [{ delayMs: -1 }, '"delayMs" must be a number between 0 and 2147483647, got -1'],
    [
      { pushback: 50 },
      '"pushback" must be a string of printable ASCII, got 50; did you mean "50" (a string)?',
    ],
    [{ retryInfoMs: '20' }, 'got "20"; did you mean 20 (a number, not a string)?'],
    [{ responses: 'two' }, '"responses" must be an integer between 0 and 100000, got "two"'],
    [
      { responses: [{ id: 1 }, { id: 2 }] },
      '"responses" must be an integer between 0 and 100000, got an array: it is how many messages to stream, and `response` the message each one is',
    ],
    [{ echo: 'TRUE' }, '"echo" must be a boolean, got "TRUE"; did you mean true (a boolean, not a string)?'],
  ])('names the value of %j and what it likely meant', (script, message) => {
    expect(() => validateAttemptScript(script)).toThrow(message);
  });

  it('turns names into numbers in scripts shipped as JSON', () => {
    expect(parseAttemptScriptsJson('[{"status":"aborted","details":"x"},{}]')).toEqual([
      { status: grpc.status.ABORTED, details: 'x' },
      {},
    ]);
  });
});

describe('attempt script fields', () => {
  it('rejects unknown fields, listing the known ones', () => {
    expect(() => validateAttemptScript({ stauts: 14 }, 'here')).toThrow(
      /^here: unknown field "stauts"; did you mean "status"\? \(known: status,/,
    );
  });

  it('checks trailers key by key', () => {
    expect(validateAttemptScript({ trailers: { 'x-a': 'b', 'x-b-bin': 'é' } })).toEqual({
      trailers: { 'x-a': 'b', 'x-b-bin': 'é' },
    });
    expect(() => validateAttemptScript({ trailers: { 'x-a': 'é' } })).toThrow(
      /"trailers.x-a" must be printable ASCII/,
    );
    expect(() => validateAttemptScript({ trailers: { 'x-a': 1 } })).toThrow(
      /"trailers.x-a" must be a string/,
    );
    expect(() => validateAttemptScript({ trailers: { 'grpc-status': '0' } })).toThrow(
      /"trailers.grpc-status" is reserved/,
    );
    expect(() => validateAttemptScript({ trailers: [] })).toThrow(/"trailers" must be an object/);
  });

  it('rejects a script that is not an object', () => {
    expect(() => validateAttemptScript([], 'w')).toThrow('w: must be an object, got an array');
    expect(() => validateAttemptScript(3, 'w')).toThrow('w: must be an object, got number');
  });
});
