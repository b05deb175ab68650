import { describe, expect, it } from 'vitest';
import { formatHostPort } from '../../src/util/host-port.js';

describe('formatHostPort', () => {
  it('brackets an IPv6 host, once, and leaves names and IPv4 addresses as they are', () => {
    expect(formatHostPort('::1', 50051)).toBe('[::1]:50051');
    expect(formatHostPort('[::1]', '50051')).toBe('[::1]:50051');
    expect(formatHostPort('127.0.0.1', 0)).toBe('127.0.0.1:0');
    expect(formatHostPort('localhost', 8080)).toBe('localhost:8080');
  });
});
