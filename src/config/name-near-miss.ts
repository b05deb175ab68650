/**
 * A call that no methodConfig name matches, while one nearly does: the same name in other letter case
 * (`sayHello` for `SayHello`, as proto-loader clients also expose it), or a service named without its package
 * (`Greeter` for `helloworld.Greeter`). Names are matched exactly, so such an entry applies to nothing.
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

function nearMiss(name: MethodName, service: string, method: string): string | undefined {
  if (name.service === undefined) {
    return undefined;
  }
  const serviceClose =
    name.service === service
      ? 'same'
      : name.service.toLowerCase() === service.toLowerCase()
        ? 'the service differs in letter case'
        : !name.service.includes('.') && service.endsWith(`.${name.service}`)
          ? 'the service is named without its package'
          : undefined;
  if (serviceClose === undefined) {
    return undefined;
  }
  if (name.method === undefined || name.method === method) {
    return serviceClose === 'same' ? undefined : serviceClose;
  }
  if (name.method.toLowerCase() !== method.toLowerCase()) {
    return undefined;
  }
  return serviceClose === 'same'
    ? 'the method differs in letter case'
    : `${serviceClose}, and the method differs in letter case`;
}

function describe(name: MethodName): string {
  return JSON.stringify(name.method === undefined ? { service: name.service } : name);
}
