import { describe, expect, it } from 'vitest';
import { type ServerAddress, serverAddressOf } from '../../src/otel/server-address.js';

/** Targets as `channel.getTarget()` names them, and the server each names. */
const TARGETS: readonly (readonly [string, ServerAddress | undefined])[] = [
  // grpc-js names a target written without a scheme `dns:<target>`.
  ['dns:db.example:8443', { address: 'db.example', port: 8443 }],
  ['dns:db.example', { address: 'db.example', port: 443 }],
  ['dns:///db.example:50051', { address: 'db.example', port: 50051 }],
  ['dns://8.8.8.8/db.example:50051', { address: 'db.example', port: 50051 }],
  ['dns:127.0.0.1:50051', { address: '127.0.0.1', port: 50051 }],
  ['dns:[::1]:50051', { address: '::1', port: 50051 }],
  ['dns:[::1]', { address: '::1', port: 443 }],
  ['dns:::1', { address: '::1', port: 443 }],
  ['dns:db.example:65535', { address: 'db.example', port: 65535 }],
  // A port no TCP server has is not one.
  ['dns:db.example:65536', { address: 'db.example' }],
  // Without a scheme (not grpc-js's own spelling of a target, read as it would be).
  ['db.example:50051', { address: 'db.example', port: 50051 }],
  ['localhost', { address: 'localhost', port: 443 }],
  ['ipv4:10.0.0.1:50051', { address: '10.0.0.1', port: 50051 }],
  ['ipv4:10.0.0.1', { address: '10.0.0.1', port: 443 }],
  ['ipv6:[2001:db8::1]:50051', { address: '2001:db8::1', port: 50051 }],
  ['ipv6:[2001:db8::1]', { address: '2001:db8::1', port: 443 }],
  // A list of addresses names no one server.
  ['ipv4:10.0.0.1:50051,10.0.0.2:50051', undefined],
  ['ipv6:[::1]:1,[::2]:2', undefined],
  ['unix:/run/app.sock', { address: '/run/app.sock' }],
  ['unix:///run/app.sock', { address: '/run/app.sock' }],
  ['unix:app.sock', { address: 'app.sock' }],
  ['unix-abstract:grpc-app', { address: 'grpc-app' }],
  // An abstract socket's name may hold a colon: it is no port.
  ['unix-abstract:grpc-app:1', { address: 'grpc-app:1' }],
  ['xds:///shop-backend', { address: 'shop-backend' }],
  // A resolver of one's own, with no authority.
  ['consul:orders-v2', { address: 'orders-v2' }],
  ['xds:///shop-backend:8080', { address: 'shop-backend', port: 8080 }],
  // A layer below the interceptor that could not say its target.
  ['', undefined],
];

describe('serverAddressOf: the server a channel target names', () => {
  it('reads each form of target grpc-js names', () => {
    for (const [target, expected] of TARGETS) {
      // Strict: a port left out is no `port: undefined` key.
      expect(serverAddressOf(target), target).toStrictEqual(expected);
    }
  });
});
