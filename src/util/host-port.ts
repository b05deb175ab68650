/** `host:port`, with an IPv6 host in brackets (`[::1]:50051`). @internal */
export function formatHostPort(host: string, port: number | string): string {
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `${bracketed}:${port}`;
}

/**
 * The port written in what should be a host alone (`127.0.0.1:50051`, `[::1]:50051`, `localhost:`: '' when the
 * colon has no digits after it), else undefined. A bare IPv6 address (`::1`) has more than one colon: no port.
 * @internal
 */
export function portInHost(host: string): string | undefined {
  return /^(?:\[[^\]]*\]|[^:[\]]+):(\d*)$/.exec(host)?.[1];
}

/** A host and, when known, its port: what {@link parseHostPort} reads. @internal */
export interface HostAndPort {
  readonly address: string;
  readonly port?: number;
}

/**
 * `host:port`, `[v6]:port`, `[v6]`, `host` or a bare IPv6 address (`::1`, read whole: with no brackets, its last
 * group cannot be told from a port), the port `defaultPort` when none is written, and none over 65535. Never empty
 * for a non-empty `text`. @internal
 */
export function parseHostPort(text: string, defaultPort: number | undefined): HostAndPort {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const plain = bracketed === null ? /^([^:]+)(?::(\d+))?$/.exec(text) : null;
  const [, host, written] = bracketed ?? plain ?? [undefined, text, undefined];
  const address = host as string;
  const port = written === undefined ? defaultPort : Number(written);
  return port === undefined || port > 65535 ? { address } : { address, port };
}
