/** `host:port`, with an IPv6 host in brackets (`[::1]:50051`). @internal */
export function formatHostPort(host: string, port: number | string): string {
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `${bracketed}:${port}`;
}
