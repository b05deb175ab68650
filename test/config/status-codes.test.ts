import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { isServiceConfigError } from '../../src/config/service-config-error.js';
import { parseStatusCode, statusCodeName } from '../../src/config/status-codes.js';

describe('parseStatusCode', () => {
  it.each<[unknown, number]>([
    [0, status.OK],
    [14, status.UNAVAILABLE],
    [16, status.UNAUTHENTICATED],
    ['UNAVAILABLE', status.UNAVAILABLE],
    ['unavailable', status.UNAVAILABLE],
    ['Unavailable', status.UNAVAILABLE],
    ['deadline_exceeded', status.DEADLINE_EXCEEDED],
    ['RESOURCE_EXHAUSTED', status.RESOURCE_EXHAUSTED],
    ['cancelled', status.CANCELLED],
    ['OK', status.OK],
  ])('parses %j as %i', (value, code) => {
    expect(parseStatusCode(value, 'p')).toBe(code);
  });

  it.each<[unknown]>([
    [17],
    [-1],
    [1.5],
    ['14'],
    ['UNAVAILABLE '],
    ['DEADLINE EXCEEDED'],
    ['CANCELED'],
    [''],
    [null],
    [[14]],
  ])('rejects %j', (value) => {
    let thrown: unknown;
    try {
      parseStatusCode(value, 'methodConfig[0].retryPolicy.retryableStatusCodes[2]');
    } catch (error) {
      thrown = error;
    }
    expect(isServiceConfigError(thrown)).toBe(true);
    if (isServiceConfigError(thrown)) {
      expect(thrown.path).toBe('methodConfig[0].retryPolicy.retryableStatusCodes[2]');
      expect(thrown.message).toContain('methodConfig[0].retryPolicy.retryableStatusCodes[2]: ');
      expect(thrown.message).toContain('status code');
    }
  });
});

describe('statusCodeName', () => {
  it('names every canonical code', () => {
    expect(statusCodeName(14)).toBe('UNAVAILABLE');
    expect(statusCodeName(0)).toBe('OK');
    expect(statusCodeName(4)).toBe('DEADLINE_EXCEEDED');
    for (let code = 0; code <= 16; code++) {
      expect(parseStatusCode(statusCodeName(code), 'p')).toBe(code);
    }
  });

  it('falls back to the number for unknown codes', () => {
    expect(statusCodeName(42)).toBe('42');
  });

  it.each<[unknown, string]>([
    ['x', 'got "x"'],
    ['UNAVAILABLE', 'got "UNAVAILABLE"; it is already a status name'],
    ['14', 'got "14"; did you mean 14 (a number, not a string)?'],
    [undefined, 'got nothing'],
    [Number.NaN, 'got NaN'],
    [{ code: 14 }, 'got {"code":14}'],
  ])(
    'refuses %j, which is no status code, with a TypeError (it returned the value back as its "name")',
    (code, got) => {
      expect(() => statusCodeName(code as number)).toThrow(
        new TypeError(
          `statusCodeName: code must be a status code number (such as 14 or grpc.status.UNAVAILABLE), ${got}`,
        ),
      );
    },
  );
});
