import { type HostAndPort, parseHostPort } from '../util/host-port.js';

/**
 * OpenTelemetry's `server.address` and `server.port` of a call span, from the channel's target as grpc-js names it
 * (`channel.getTarget()`, which the retry interceptor's events carry). The server a call is addressed to is the
 * target's host, not the replica an attempt reached (that is the attempt span's `network.peer.*`):
 *
 * - `dns:db.example:443`, `dns:///db.example`, `dns://8.8.8.8/db.example:8443` → `db.example` and the port, 443
 *   when none is written (grpc-js's default);
 * - `ipv4:10.0.0.1:50051`, `ipv6:[::1]:50051` → the address and port; a list of addresses names no one server, so
 *   it gives nothing;
 * - `unix:/run/app.sock`, `unix:///run/app.sock`, `unix:app.sock` → the socket's path, no port;
 *   `unix-abstract:name` → `name`;
 * - another scheme (`xds:///app`) → what it names, with the port only when one is written;
 * - `db.example:50051` (a target grpc-js names with `dns:` in front) → as `dns:db.example:50051`.
 *
 * @internal
 */
export type ServerAddress = HostAndPort;

/** The port gRPC's DNS and IP resolvers use when the target names none. */
const DEFAULT_GRPC_PORT = 443;

/** grpc-js's own reading of a target: `scheme:`, `//authority/` and the rest. */
const TARGET = /^(?:([A-Za-z0-9+.-]+):)?(?:\/\/([^/]*)\/)?(.+)$/;

/** The server a target names, or `undefined` when it names none (an empty target, a list of addresses). @internal */
export function serverAddressOf(target: string): ServerAddress | undefined {
  const parts = TARGET.exec(target);
  if (parts === null) {
    return undefined;
  }
  const [, scheme, authority] = parts;
  const path = parts[3] as string; // `(.+)`: always there when the target matched
  switch (scheme) {
    case 'unix':
      return { address: authority === '' ? `/${path}` : path };
    case 'unix-abstract':
      return { address: path };
    case undefined:
    case 'dns':
      return parseHostPort(path, DEFAULT_GRPC_PORT);
    case 'ipv4':
    case 'ipv6':
      return path.includes(',') ? undefined : parseHostPort(path, DEFAULT_GRPC_PORT);
    default:
      // `db.example:50051` reads as the scheme `db.example`; grpc-js takes it for `dns:db.example:50051`.
      return authority === undefined && /^\d+$/.test(path)
        ? parseHostPort(target, DEFAULT_GRPC_PORT)
        : parseHostPort(path, undefined);
  }
}
