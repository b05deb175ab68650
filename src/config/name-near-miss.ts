/**
 * A call that no methodConfig name matches, while one nearly does: the same name in other letter case
 * (`sayHello` for `SayHello`, as proto-loader clients also expose it), a service named without its package or with
 * part or another of it (`Greeter`, `v1.Greeter` or `hello.Greeter` for `hello.v1.Greeter`), or a method written
 * into the service (`hello.v1.Greeter.SayHello`, as grpcurl spells it). Names are matched exactly, so such an
 * entry applies to nothing.
 */
import type { MethodName, ServiceConfig } from './types.js';

/**
 * The configured name that `methodPath` (`/pkg.Service/Method`) nearly matches, described for a warning;
 * undefined when none does.
 */
export function nearMissName(config: ServiceConfig, methodPath: string): string | undefined {
  const path = methodPath.startsWith('/') ? methodPath.slice(1) : methodPath;
  const slash = path.lastIndexOf('/');
  if (slash <= 0) {
    return undefined;
  }
  const service = path.slice(0, slash);
  const method = path.slice(slash + 1);
  for (const entry of config.methodConfig) {
    for (const name of entry.name) {
      const why = nearMiss(name, service, method);
      if (why !== undefined) {
        return `the call ${methodPath} matches no methodConfig name, but ${describe(name)} nearly does (${why}): names are matched exactly, as the proto spells them (${service}${name.method === undefined ? '' : `/${method}`})`;
      }
    }
  }
  return undefined;
}

/** How a configured name differs from a path's service and method; undefined when it is not a near miss. */
function nearMiss(name: MethodName, service: string, method: string): string | undefined {
  if (name.service === undefined) {
    return undefined;
  }
  if (name.method === undefined && name.service === `${service}.${method}`) {
    // How grpcurl and tracing spell a method: `pkg.Service.Method`.
    return 'the method is written into the service; write it as { "service": "…", "method": "…" }';
  }
  const serviceDiff = difference(name.service, service, [
    [(a, b) => a.toLowerCase() === b.toLowerCase(), 'the service differs in letter case'],
    [(a, b) => !a.includes('.') && b.endsWith(`.${a}`), 'the service is named without its package'],
    [
      (a, b) => simpleName(a) === simpleName(b) && isSubsequence(packageOf(a), packageOf(b)),
      `the service is named with only part of its package (${packageOf(service)})`,
    ],
  ]);
  const methodDiff =
    name.method === undefined
      ? ''
      : difference(name.method, method, [
          [(a, b) => a.toLowerCase() === b.toLowerCase(), 'the method differs in letter case'],
        ]);
  if (serviceDiff === undefined || methodDiff === undefined || (serviceDiff === '' && methodDiff === '')) {
    return undefined;
  }
  return [serviceDiff, methodDiff].filter((diff) => diff !== '').join(', and ');
}

/**
 * '' when `configured` is `actual`; the description of the first rule under which it nearly is; else undefined.
 */
function difference(
  configured: string,
  actual: string,
  rules: [near: (configured: string, actual: string) => boolean, description: string][],
): string | undefined {
  if (configured === actual) {
    return '';
  }
  return rules.find(([near]) => near(configured, actual))?.[1];
}

/** `Service` of `pkg.v1.Service`. */
function simpleName(service: string): string {
  return service.slice(service.lastIndexOf('.') + 1);
}

/** `pkg.v1` of `pkg.v1.Service` ('' when it has none). */
function packageOf(service: string): string {
  const dot = service.lastIndexOf('.');
  return dot < 0 ? '' : service.slice(0, dot);
}

/** Whether the segments of package `part` appear in `whole`'s, in order (`shop` in `shop.v1`, `acme.v1` in `acme.shop.v1`). */
function isSubsequence(part: string, whole: string): boolean {
  const wanted = part.split('.');
  let next = 0;
  for (const segment of whole.split('.')) {
    if (segment === wanted[next]) {
      next++;
    }
  }
  return part !== '' && next === wanted.length;
}

function describe(name: MethodName): string {
  return JSON.stringify(name.method === undefined ? { service: name.service } : name);
}
