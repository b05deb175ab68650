/**
 * A status code a service config misspells gets a "did you mean", as misspelled fields do: the American spelling
 * of CANCELLED, a space for the underscore, a number in quotes.
 */
import { describe, expect, it } from 'vitest';
import { parseStatusCode, readStatusCode } from '../../src/config/status-codes.js';
import { validateServiceConfig } from '../../src/config/validate-service-config.js';

const PREFIX = 'must be a gRPC status code (an integer 0..16 or a name such as "UNAVAILABLE"), got ';

describe('the error for a status code name that is not one', () => {
  it.each([
    ['CANCELED', '; did you mean "CANCELLED"?'],
    ['unavalable', '; did you mean "UNAVAILABLE"?'],
    ['DEADLINE EXCEEDED', '; did you mean "DEADLINE_EXCEEDED"?'],
    ['deadline-exceeded', '; did you mean "DEADLINE_EXCEEDED"?'],
    ['RESOURCE_EXHAUSED', '; did you mean "RESOURCE_EXHAUSTED"?'],
    [' UNAVAILABLE', '; did you mean "UNAVAILABLE" (without the spaces around it)?'],
    ['14', '; write the number 14 without quotes, or its name "UNAVAILABLE"'],
    ['0', '; write the number 0 without quotes, or its name "OK"'],
    ['16', '; write the number 16 without quotes, or its name "UNAUTHENTICATED"'],
    [' unavailable ', '; did you mean "unavailable" (without the spaces around it)?'],
  ])('%j: says what was meant', (value, hint) => {
    expect(readStatusCode(value)).toBe(`${PREFIX}${JSON.stringify(value)}${hint}`);
  });

  it.each(['17', 'NOPE', '', 'Internal Error', '1x', 'x1', '-1', '1.5'])(
    '%j: no hint when nothing is near',
    (value) => {
      expect(readStatusCode(value)).toBe(`${PREFIX}${JSON.stringify(value)}`);
    },
  );

  it.each([17, -1, 1.5, null, true])('%j (not a string): no hint', (value) => {
    expect(readStatusCode(value)).toBe(`${PREFIX}${JSON.stringify(value)}`);
  });

  it('keeps the path, and reaches the config diagnostics', () => {
    expect(() => parseStatusCode('CANCELED', 'x[0]')).toThrow('x[0]: must be a gRPC status code');
    const { errors } = validateServiceConfig({
      methodConfig: [
        { name: [{}], hedgingPolicy: { maxAttempts: 2, nonFatalStatusCodes: ['UNAVAILABLE', 'ABORTD'] } },
      ],
    });
    expect(errors).toEqual([
      {
        path: 'methodConfig[0].hedgingPolicy.nonFatalStatusCodes[1]',
        message: `${PREFIX}"ABORTD"; did you mean "ABORTED"?`,
      },
    ]);
  });
});
