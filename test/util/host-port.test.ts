import { describe, expect, it } from 'vitest';
import { formatHostPort, parseHostPort } from '../../src/util/host-port.js';

describe('formatHostPort', () => {
  it('brackets an IPv6 host, once, and leaves names and IPv4 addresses as they are', () => {
    expect(formatHostPort('::1', 50051)).toBe('[::1]:50051');
    expect(formatHostPort('[::1]', '50051')).toBe('[::1]:50051');
    expect(formatHostPort('127.0.0.1', 0)).toBe('127.0.0.1:0');
    expect(formatHostPort('localhost', 8080)).toBe('localhost:8080');
  });
});

describe('parseHostPort', () => {
  it('reads the forms grpc-js names a peer or a target host with, and what formatHostPort writes', () => {
    const read = (text: string, defaultPort?: number) => parseHostPort(text, defaultPort);
    expect([
      read('127.0.0.1:50051'),
      read('[::1]:50051'),
      read('[fe80::1%eth0]:443'),
      read('db.example'),
      read('db.example', 443),
      read('[::1]', 443),
      read('/run/app.sock'),
      read('app.sock'),
      // Unbracketed, an IPv6 address's last group cannot be told from a port: read whole, as an address.
      read('::1:50051'),
      read('db.example:65535'),
      read('db.example:65536', 443),
      read(formatHostPort('::1', 8080)),
      // Text around a host:port form is not one: read whole.
      read('a[::1]:1'),
      read('[::1]:80x'),
      read('db.example:80x'),
    ]).toStrictEqual([
      { address: '127.0.0.1', port: 50051 },
      { address: '::1', port: 50051 },
      { address: 'fe80::1%eth0', port: 443 },
      { address: 'db.example' },
      { address: 'db.example', port: 443 },
      { address: '::1', port: 443 },
      { address: '/run/app.sock' },
      { address: 'app.sock' },
      { address: '::1:50051' },
      { address: 'db.example', port: 65535 },
      { address: 'db.example' },
      { address: '::1', port: 8080 },
      { address: 'a[::1]:1' },
      { address: '[::1]:80x' },
      { address: 'db.example:80x' },
    ]);
  });
});
