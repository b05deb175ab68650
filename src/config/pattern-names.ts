/**
 * Method names that look like patterns or paths. A service-config name is matched exactly: `"*"`, `"pkg.*"` or
 * `"/pkg.Service"` is a valid string that no call carries, so the entry applies to nothing and nothing fails. The
 * way to cover a whole service is to leave `method` out, and `{}` covers every method.
 */
import type { JsonPath } from './json-path.js';
import { isJsonObject } from './service-config-rules.js';

/** A name part that cannot be what its author meant, where it is, and why. */
export interface PatternName {
  readonly path: JsonPath;
  readonly message: string;
}

/** Every `methodConfig[i].name[j].service` or `.method` holding `*` or `/`, in the parsed JSON value. */
export function findPatternNames(root: unknown): PatternName[] {
  const found: PatternName[] = [];
  if (!isJsonObject(root) || !Array.isArray(root.methodConfig)) {
    return found;
  }
  root.methodConfig.forEach((entry: unknown, i: number) => {
    if (!isJsonObject(entry) || !Array.isArray(entry.name)) {
      return;
    }
    entry.name.forEach((name: unknown, j: number) => {
      if (!isJsonObject(name)) {
        return;
      }
      for (const part of ['service', 'method'] as const) {
        const value = name[part];
        if (typeof value === 'string') {
          const message = patternProblem(part, value);
          if (message !== undefined) {
            found.push({ path: ['methodConfig', i, 'name', j, part], message });
          }
        }
      }
    });
  });
  return found;
}

function patternProblem(part: 'service' | 'method', value: string): string | undefined {
  if (value.includes('*')) {
    const cover =
      part === 'method'
        ? 'leave "method" out to cover the whole service'
        : 'name each service, and leave "method" out to cover all of its methods; {} covers every method';
    return `${part} ${JSON.stringify(value)} is matched exactly, as a name no call has: service-config names have no wildcards (${cover})`;
  }
  if (value.includes('/')) {
    return `${part} ${JSON.stringify(value)} holds a "/", which no ${part} name has: a name is {"service": "package.Service", "method": "Method"}, not a path`;
  }
  return undefined;
}
