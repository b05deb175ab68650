import { describe, expect, it } from 'vitest';
import { type ServerAddress, serverAddressOf } from '../../src/otel/server-address.js';

describe('serverAddressOf: the server a channel target names', () => {
  it.each<[string, ServerAddress | undefined]>([
    // grpc-js names a target written without a scheme `dns:<target>`.
    ['dns:db.example:8443', { address: 'db.example', port: 8443 }],
    ['dns:db.example', { address: 'db.example', port: 443 }],
    ['dns:///db.example:50051', { address: 'db.example', port: 50051 }],
    ['dns://8.8.8.8/db.example:50051', { address: 'db.example', port: 50051 }],
    ['dns:127.0.0.1:50051', { address: '127.0.0.1', port: 50051 }],
    ['dns:[::1]:50051', { address: '::1', port: 50051 }],
    ['dns:[::1]', { address: '::1', port: 443 }],
    ['dns:::1', { address: '::1', port: 443 }],
    ['db.example:50051', { address: 'db.example', port: 50051 }],
    ['ipv4:10.0.0.1:50051', { address: '10.0.0.1', port: 50051 }],
    ['ipv4:10.0.0.1', { address: '10.0.0.1', port: 443 }],
    ['ipv6:[2001:db8::1]:50051', { address: '2001:db8::1', port: 50051 }],
    // A list of addresses names no one server.
    ['ipv4:10.0.0.1:50051,10.0.0.2:50051', undefined],
    ['unix:/run/app.sock', { address: '/run/app.sock' }],
    ['unix:///run/app.sock', { address: '/run/app.sock' }],
    ['unix:app.sock', { address: 'app.sock' }],
    ['unix-abstract:grpc-app', { address: 'grpc-app' }],
    ['xds:///shop-backend', { address: 'shop-backend' }],
    ['xds:///shop-backend:8080', { address: 'shop-backend', port: 8080 }],
    // A port no TCP server has is not one.
    ['dns:db.example:70000', { address: 'db.example' }],
    // A layer below the interceptor that could not say its target.
    ['', undefined],
  ])('%j', (target, expected) => {
    expect(serverAddressOf(target)).toEqual(expected);
  });
});
