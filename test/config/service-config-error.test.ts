import { describe, expect, it } from 'vitest';
import { isServiceConfigError, ServiceConfigError } from '../../src/config/service-config-error.js';

describe('ServiceConfigError', () => {
  it('puts the path and then the problem in the message', () => {
    const error = new ServiceConfigError(
      'methodConfig[1].retryPolicy.maxAttempts',
      'must be an integer greater than 1, got 1; for a single attempt, leave the retryPolicy out (without a policy, a call makes one attempt)',
    );
    expect(error.message).toBe(
      'methodConfig[1].retryPolicy.maxAttempts: must be an integer greater than 1, got 1; for a single attempt, leave the retryPolicy out (without a policy, a call makes one attempt)',
    );
    expect(error.path).toBe('methodConfig[1].retryPolicy.maxAttempts');
    expect(error.detail).toBe(
      'must be an integer greater than 1, got 1; for a single attempt, leave the retryPolicy out (without a policy, a call makes one attempt)',
    );
    expect(error.file).toBeUndefined();
    expect(error.name).toBe('ServiceConfigError');
    expect(error).toBeInstanceOf(Error);
  });

  it('omits an empty root path and prefixes the file', () => {
    expect(new ServiceConfigError('', 'must be a JSON object').message).toBe('must be a JSON object');
    const located = new ServiceConfigError('retryThrottling', 'must be an object', { file: 'cfg.json' });
    expect(located.message).toBe('cfg.json: retryThrottling: must be an object');
    expect(located.file).toBe('cfg.json');
  });

  it('keeps the cause', () => {
    const cause = new Error('boom');
    expect(new ServiceConfigError('', 'x', { cause }).cause).toBe(cause);
  });
});

describe('isServiceConfigError', () => {
  it('recognizes its own errors', () => {
    expect(isServiceConfigError(new ServiceConfigError('a', 'b'))).toBe(true);
  });

  it('rejects other errors and plain objects, even with a path', () => {
    expect(isServiceConfigError(new Error('x'))).toBe(false);
    expect(isServiceConfigError(Object.assign(new TypeError('x'), { path: 'a' }))).toBe(false);
    expect(isServiceConfigError({ name: 'ServiceConfigError', path: 'a', message: 'b' })).toBe(false);
    expect(isServiceConfigError(null)).toBe(false);
    expect(isServiceConfigError('ServiceConfigError')).toBe(false);
  });

  it('recognizes an error from another copy of the package by its registry brand', () => {
    // What a duplicate copy of the class produces: same Symbol.for brand, different constructor.
    class OtherCopyError extends Error {
      readonly path = 'methodConfig[0]';
    }
    Object.defineProperty(OtherCopyError.prototype, Symbol.for('grpc-retry-hedging.ServiceConfigError'), {
      value: true,
    });
    const foreign = new OtherCopyError('methodConfig[0]: bad');
    expect(foreign).not.toBeInstanceOf(ServiceConfigError);
    expect(isServiceConfigError(foreign)).toBe(true);
  });
});
