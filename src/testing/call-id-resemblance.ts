/**
 * What a flaky-server call id (the value a client sends in `x-flaky-call-id`) says about itself when it looks
 * like a method: the one place that tells a call id from a method name meant as one, for the server's `script()`
 * and `scripts` option (which refuse a served method given as a call id and warn of one that resembles a method)
 * and for the CLI's `--script` file (which warns of keys that resemble a method or a service).
 */

import { closestName } from '../util/closest-name.js';
import { errorMessage } from '../util/error-message.js';
import type { FlakyServerOptions } from './flaky-server-options.js';
import { resolveMethodPath } from './served-services.js';

/** `pkg.Service/Method` (or `/pkg.Service/Method`, or `Service/Method`): a key written as a method is. */
const METHOD_SHAPED = /^\/?([A-Za-z_]\w*\.)*[A-Za-z_]\w*\/[A-Za-z_]\w*$/;

/**
 * The served method a call id names (`pkg.Service/Method`, with or without the leading `/`, or `Service/Method`
 * without its package when one served method fits), which is almost surely a method meant as one: no client sends
 * it as `x-flaky-call-id`. Undefined for any other call id.
 */
export function servedMethodNamedBy(callId: string, served: ReadonlySet<string>): string | undefined {
  const path = callId.startsWith('/') ? callId : `/${callId}`;
  if (served.has(path)) {
    return path;
  }
  if (!path.includes('/', 1)) {
    return undefined;
  }
  const unqualified = [...served].filter((candidate) => candidate.endsWith(`.${path.slice(1)}`));
  return unqualified.length === 1 ? unqualified[0] : undefined;
}

/** The error for a call id {@link servedMethodNamedBy} found: `where` is `script("…")` or `start: scripts["…"]`. */
export function methodAsCallIdMessage(where: string, method: string, advice: string): string {
  return `FlakyServer.${where}: "${method.slice(1)}" is a method this server serves, not a call id (the value a client sends in x-flaky-call-id); script the method with ${advice}`;
}

/**
 * What is wrong with a key that names no served method but is written as a method of a package
 * (`pkg.Service/Method`), or as a served service's method without its package (`Service/Method`); undefined for
 * any other key (a call id, `tenant/42` included).
 */
export function unservedMethodKey(key: string, served: ReadonlySet<string>): string | undefined {
  if (!METHOD_SHAPED.test(key)) {
    return undefined;
  }
  const name = key.replace(/^\//, '');
  const qualified = name.slice(0, name.indexOf('/')).includes('.');
  const unqualified = [...served].some((path) => path.endsWith(`.${name}`));
  if (!qualified && !unqualified) {
    return undefined;
  }
  try {
    resolveMethodPath(key, served, 'script');
    return undefined;
  } catch (error) {
    const text = errorMessage(error).replace(/^FlakyServer\.script: /, '');
    return /did you mean/.test(text)
      ? text
      : `${text}; a key written as a method must name a served method (serve its proto with --proto)`;
  }
}

/**
 * The method or service a call id resembles: what the caller advises scripting instead. When several served
 * methods (or services) fit it alike (`GetOrder` with two services that have one), `methods` (or `services`) lists
 * them all, in the order they are served, `method` (or `service`) being the first; absent when one fits.
 */
export type CallIdResemblance =
  | { readonly kind: 'method'; readonly method: string; readonly methods?: readonly string[] }
  | {
      readonly kind: 'service';
      readonly service: string;
      readonly example: string;
      readonly services?: readonly string[];
    };

/** Adds `value` under `key` in `map` once. */
function addOnce<T>(map: Map<string, T[]>, key: string, value: T, same: (a: T) => boolean): void {
  const list = map.get(key);
  if (list === undefined) {
    map.set(key, [value]);
  } else if (!list.some(same)) {
    list.push(value);
  }
}

/**
 * The served method or service a call id resembles (`GetOrder`, `pkg.Service.GetOrder`, a trailing `/`, a space,
 * `Get-Order`, a misspelled full name, a service's name), or undefined when it resembles none. Methods are given
 * without the leading `/`; every one that fits is named (see {@link CallIdResemblance}).
 */
export function methodLikeCallId(callId: string, served: ReadonlySet<string>): CallIdResemblance | undefined {
  const normalized = callId.trim().replace(/^\/+|\/+$/g, '');
  const methodForms = new Map<string, string[]>();
  const serviceForms = new Map<string, Array<{ service: string; example: string }>>();
  for (const path of served) {
    const name = path.slice(1);
    const service = name.slice(0, name.lastIndexOf('/'));
    const method = name.slice(name.lastIndexOf('/') + 1);
    const shortService = service.slice(service.lastIndexOf('.') + 1);
    for (const form of [name, `${service}.${method}`, method, `${shortService}/${method}`]) {
      addOnce(methodForms, form.toLowerCase(), name, (m) => m === name);
    }
    for (const form of [service, shortService]) {
      addOnce(serviceForms, form.toLowerCase(), { service, example: name }, (s) => s.service === service);
    }
  }
  const resemblance = (key: string): CallIdResemblance | undefined => {
    const methods = methodForms.get(key);
    if (methods !== undefined) {
      return methods.length === 1
        ? { kind: 'method', method: methods[0]! }
        : { kind: 'method', method: methods[0]!, methods };
    }
    const services = serviceForms.get(key);
    if (services === undefined) {
      return undefined;
    }
    const { service, example } = services[0]!;
    return services.length === 1
      ? { kind: 'service', service, example }
      : { kind: 'service', service, example, services: services.map((s) => s.service) };
  };
  const exact = resemblance(normalized.toLowerCase());
  if (exact !== undefined) {
    return exact;
  }
  // Misspellings are looked for among full names only: short call ids ("c1") are too close to short method names;
  // a short call id is only compared without its `-`, `_` and spaces (`Get-Order`).
  if (!normalized.includes('.') && !normalized.includes('/')) {
    const folded = normalized.replace(/[-_\s]/g, '').toLowerCase();
    return folded === '' ? undefined : resemblance(folded);
  }
  const close = closestName(
    normalized.toLowerCase(),
    new Set([...methodForms.keys(), ...serviceForms.keys()]),
  );
  return close === undefined ? undefined : resemblance(close);
}

/** `"a", "b" or "c"`: names quoted, as a sentence lists them. */
export function quotedAlternatives(names: readonly string[]): string {
  const quoted = names.map((name) => JSON.stringify(name));
  return quoted.length <= 1 ? (quoted[0] ?? '') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

/**
 * The mark the CLI puts on `FlakyServer.start`'s options when it has already warned, placed in its script file, of
 * the call ids that resemble a method: the server then does not warn of them again. A registered symbol, so that
 * the ESM and CJS builds agree on it; `checkOptions` reads string keys only. @internal
 */
const CALL_ID_HINTS_SHOWN = Symbol.for('grpc-retry-hedging.flaky-server.call-id-hints-shown');

/** The options with the mark added (a copy). @internal */
export function markCallIdHintsShown(options: FlakyServerOptions): FlakyServerOptions {
  return { ...options, [CALL_ID_HINTS_SHOWN]: true } as FlakyServerOptions;
}

/** Whether the caller of `FlakyServer.start` has already warned of its call ids. @internal */
export function callIdHintsShown(options: object): boolean {
  return (options as { [CALL_ID_HINTS_SHOWN]?: unknown })[CALL_ID_HINTS_SHOWN] === true;
}

/** The warning for a call id that resembles a method or a service: `where` is `script("…")` or `start: scripts["…"]`. */
export function callIdResemblanceMessage(
  where: string,
  callId: string,
  resemblance: CallIdResemblance,
): string {
  let advice: string;
  if (resemblance.kind === 'method') {
    advice =
      resemblance.methods === undefined
        ? `to script the method, call scriptMethod(${JSON.stringify(resemblance.method)}, attempts) or pass methodScripts`
        : `several served methods fit it (${quotedAlternatives(resemblance.methods)}): to script one, call scriptMethod with it, such as scriptMethod(${JSON.stringify(resemblance.method)}, attempts), or pass methodScripts`;
  } else {
    const services = resemblance.services?.join(' or ') ?? resemblance.service;
    advice = `to script the methods of ${services}, script each one with scriptMethod, such as scriptMethod(${JSON.stringify(resemblance.example)}, attempts)`;
  }
  return `grpc-retry-hedging: FlakyServer.${where}: ${JSON.stringify(callId)} scripts the calls whose x-flaky-call-id is ${JSON.stringify(callId)}, not a method; ${advice}`;
}
