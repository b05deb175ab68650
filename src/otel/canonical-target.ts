/**
 * gRFC A66's `grpc.target` from the name grpc-js gives a channel's target (`channel.getTarget()`, which the retry
 * interceptor's events carry): A66 records the canonical target URI, with the default scheme's empty authority
 * spelt out. grpc-js names a target given without a scheme (`localhost:50051`) `dns:localhost:50051`; its
 * canonical form is `dns:///localhost:50051`. A target with an authority (`dns://8.8.8.8/db.example:443`,
 * `dns:///db.example:443`) or another scheme (`ipv4:10.0.0.1:50051`, `unix:/run/app.sock`, `xds:///app`) is kept
 * as grpc-js names it.
 */
export function canonicalTarget(target: string): string {
  // `dns:/db.example:443` is kept: grpc-js resolves the host `/db.example`, and fails, so it must not share a label
  // with the working `dns:///db.example:443`.
  if (!target.startsWith('dns:') || target.startsWith('dns:/')) {
    return target;
  }
  return `dns:///${target.slice('dns:'.length)}`;
}
