/**
 * A call that no methodConfig name of its own matches, while one nearly does: the same name in other letter case
 * (`sayHello` for `SayHello`, as proto-loader clients also expose it), a service named without its package or with
 * part or another of it (`Greeter`, `v1.Greeter` or `hello.Greeter` for `hello.v1.Greeter`), a method written
 * into the service (`hello.v1.Greeter.SayHello`, as grpcurl spells it), or a name misspelt by one letter left out,
 * added or swapped with its neighbour (`hello.v1.Greter`, `SayHelo`, `SayHlelo`; not one letter replaced by another,
 * which is how other real names differ: `GetUser` and `SetUser`). Names are matched exactly, so such an entry
 * applies to nothing; a call its service's entry or the default covers meanwhile runs under that policy instead.
 */
import { matchedEntry } from './method-policy.js';
import type { MethodName, ServiceConfig } from './types.js';

/**
 * The configured name that `methodPath` (`/pkg.Service/Method`) nearly matches, described for a warning;
 * undefined when none does, or when a name matches the path exactly.
 *
 * @param calledPaths Method paths (`/pkg.Service/Method`) the client has called: a name that is exactly one of
 *   them (or, without a method, the service of one) is a real method or service, not a misspelling.
 */
export function nearMissName(
  config: ServiceConfig,
  methodPath: string,
  calledPaths: ReadonlySet<string> = new Set(),
): string | undefined {
  const path = methodPath.startsWith('/') ? methodPath.slice(1) : methodPath;
  const slash = path.lastIndexOf('/');
  if (slash <= 0) {
    return undefined;
  }
  const service = path.slice(0, slash);
  const method = path.slice(slash + 1);
  const runsUnder = matchedEntry(config, methodPath);
  if (runsUnder?.matchedBy === 'method') {
    return undefined;
  }
  for (const entry of config.methodConfig) {
    for (const name of entry.name) {
      const why = wasCalled(name, calledPaths) ? undefined : nearMiss(name, service, method);
      if (why !== undefined) {
        const matches =
          runsUnder === undefined
            ? 'matches no methodConfig name'
            : `matches no methodConfig name of its own (it runs under methodConfig[${runsUnder.methodConfigIndex}], its ${runsUnder.matchedBy === 'service' ? "service's" : 'default'} entry)`;
        return `the call ${methodPath} ${matches}, but ${describe(name)} nearly does (${why}): names are matched exactly, as the proto spells them (${service}${name.method === undefined ? '' : `/${method}`})`;
      }
    }
  }
  return undefined;
}

/** Whether a configured name is exactly a method (or the service of a method) the client has called. */
function wasCalled(name: MethodName, calledPaths: ReadonlySet<string>): boolean {
  if (name.service === undefined || calledPaths.size === 0) {
    return false;
  }
  if (name.method !== undefined) {
    return calledPaths.has(`/${name.service}/${name.method}`);
  }
  for (const path of calledPaths) {
    if (path.startsWith(`/${name.service}/`)) {
      return true;
    }
  }
  return false;
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
    [isSlip, 'the service is misspelt'],
  ]);
  const methodDiff =
    name.method === undefined
      ? ''
      : difference(name.method, method, [
          [(a, b) => a.toLowerCase() === b.toLowerCase(), 'the method differs in letter case'],
          [isSlip, 'the method is misspelt'],
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

/** Names shorter than this are not taken for a misspelling of each other (`Get` and `Gets` may both be real). */
const MIN_SLIP_LENGTH = 5;

/**
 * Whether `a` is `b` with one letter left out, one added, or two neighbours swapped (letter case aside): the slips
 * of typing. One letter replaced by another is not one: that is how real names next to each other differ
 * (`GetUser` and `SetUser`, `v1` and `v2`).
 */
function isSlip(configured: string, actual: string): boolean {
  const a = configured.toLowerCase();
  const b = actual.toLowerCase();
  if (a === b || Math.min(a.length, b.length) < MIN_SLIP_LENGTH) {
    return false;
  }
  if (Math.abs(a.length - b.length) === 1) {
    const [short, long] = a.length < b.length ? [a, b] : [b, a];
    let i = 0;
    while (i < short.length && short[i] === long[i]) {
      i++;
    }
    return short.slice(i) === long.slice(i + 1);
  }
  if (a.length !== b.length) {
    return false;
  }
  let i = 0;
  while (a[i] === b[i]) {
    i++;
  }
  return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2);
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
