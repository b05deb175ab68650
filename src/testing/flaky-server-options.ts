/**
 * The options of `FlakyServer.start`, and their checks: an unknown or invalid option is a TypeError or RangeError
 * naming it.
 */

import type * as grpc from '@grpc/grpc-js';
import { DEFAULT_REQUEST_ID_HEADER } from '../shared/headers.js';
import { closestName } from '../util/closest-name.js';
import { portInHost } from '../util/host-port.js';
import { checkOptions, describeValue } from '../util/option-checks.js';
import { wrongTypeHint } from '../util/wrong-type-hint.js';
import type { RequestIdSources } from './attempt-recording.js';
import { validateAttemptScripts } from './attempt-script-validation.js';
import { DEFAULT_MAX_TRACKED_CALL_IDS } from './call-id-counters.js';
import {
  type AttemptScript,
  type AttemptScriptInput,
  DEFAULT_REQUEST_ID_FIELD,
  type RecordedAttempt,
} from './flaky-script.js';
import { flakyRequestStringFields } from './flaky-test-service.js';
import { camelCaseField, snakeCaseField } from './response-fields.js';
import type { FlakyServiceSource, RequestType } from './served-services.js';

/** What the `onAttempt` hook is told about an attempt that has no registered script. */
export interface FlakyAttemptInfo {
  /** Call id from `x-flaky-call-id` (`""` when absent). */
  callId: string;
  /** 1-based attempt number within the call id. */
  attempt: number;
  /** Full method path, see {@link flakyMethodPath}. */
  method: string;
  /** The attempt's request metadata. */
  metadata: grpc.Metadata;
}

/** What the `respond` option is told about the OK attempt whose response it builds. */
export interface FlakyResponseInfo {
  /** Full method path, e.g. `/helloworld.Greeter/SayHello`. */
  method: string;
  /** Call id from `x-flaky-call-id` (`""` when absent). */
  callId: string;
  /** 1-based attempt number (see {@link RecordedAttempt.attempt}). */
  attempt: number;
  /** The request messages received so far, as decoded. */
  requests: readonly unknown[];
  /** For streaming responses: 0-based index of the message being built (0 otherwise). */
  index: number;
}

/** Options of {@link FlakyServer.start}. */
export interface FlakyServerOptions {
  /**
   * .proto file(s) whose services the server serves too (beside FlakyTest), every method scriptable. Loaded with
   * @grpc/proto-loader; imports resolve against `includeDirs`, then the file's own directory.
   */
  proto?: string | readonly string[] | undefined;
  /** Directories imports of `proto` resolve against (as protoc's `-I`). */
  includeDirs?: readonly string[] | undefined;
  /**
   * Load `proto` as a client loaded with proto-loader's `keepCase: true` does (grpc.io's Node examples): messages
   * keep the proto's field names (`order_id`), in scripted responses and in recorded requests alike. Default
   * false: camelCase names (`orderId`), proto-loader's default. FlakyTest and `services` are not affected (a
   * service definition carries the names it was loaded with).
   */
  keepCase?: boolean | undefined;
  /**
   * Services to serve too (beside FlakyTest), as grpc-js code holds them: a `grpc.ServiceDefinition` (generated
   * `GreeterService`), a client constructor (`grpc.loadPackageDefinition(def).helloworld.Greeter`, generated
   * `GreeterClient`), a proto-loader `PackageDefinition` or a `grpc.GrpcObject` (every service in it), or an array
   * of these.
   */
  services?: FlakyServiceSource | readonly FlakyServiceSource[] | undefined;
  /**
   * Serve the FlakyTest demo service (`grpc_retry_hedging.testing.v1.FlakyTest`) beside `proto` and `services`.
   * Default true. false serves your services alone, so that `servedMethods()` and the served lists in error
   * messages name only yours; it needs `proto` or `services`.
   */
  serveFlakyTest?: boolean | undefined;
  /**
   * Scripts by method (`"helloworld.Greeter/SayHello"`), registered up front: what attempts whose call id has no
   * script play (same as calling {@link FlakyServer.scriptMethod} for each).
   */
  methodScripts?: Record<string, readonly AttemptScriptInput[]> | undefined;
  /**
   * Builds the response message of an OK attempt of a method other than FlakyTest's, when its script has no
   * `response`. Default (no hook): `{}`, an empty message, which proto-loader and ts-proto serialize; code generated
   * by grpc-tools (google-protobuf) wants an instance of its class (`new HelloReply()`). It must return the message
   * itself, synchronously: a hook that returns a Promise (an `async` hook), `undefined` or `null` (a forgotten
   * `return`: return `{}` for an empty message), a string or an array, that throws, or that builds a plain object
   * with a key that is not a field of the response message (checked as a script's `response` is), ends the attempt
   * with INTERNAL naming the hook and the method, for every method kind alike.
   */
  respond?: ((info: FlakyResponseInfo) => unknown) | undefined;
  /** Port to bind; default 0 (an ephemeral port, see {@link FlakyServer.port}). */
  port?: number | undefined;
  /** Host to bind; default `127.0.0.1` (the server is never exposed beyond loopback unless asked). */
  host?: string | undefined;
  /** Scripts to register up front, by call id (same as calling {@link FlakyServer.script} for each). */
  scripts?: Record<string, readonly AttemptScriptInput[]> | undefined;
  /**
   * Consulted for attempts whose call id has no registered script; return `undefined` for a prompt success.
   * A hook that throws, returns an invalid script, or returns a Promise (an `async` hook) ends the attempt with
   * INTERNAL.
   */
  onAttempt?: ((info: FlakyAttemptInfo) => AttemptScriptInput | undefined) | undefined;
  /**
   * Called once per attempt when it ends with a status or is seen cancelled. An error it throws does not reach the
   * server: the first is reported as a process warning (`GRPC_RETRY_HEDGING_LISTENER_ERROR`), once per server.
   */
  onAttemptEnd?: ((attempt: RecordedAttempt) => void) | undefined;
  /**
   * Request header whose value is recorded as the attempt's `requestId` (AIP-155) when the request message
   * carries none. Default `x-request-id`; `false` reads no header.
   */
  requestIdHeader?: string | false | undefined;
  /**
   * String field of the request message recorded as the attempt's `requestId`, by its proto name
   * (`request_id`, the default) or its camelCase name (`requestId`): either spelling matches a request loaded
   * with camelCase names or with `keepCase: true`. `false` reads no field. It takes precedence over the header.
   * A field given is checked at start against the request messages of the served methods: some must have a string
   * field of that name, else `start` throws a TypeError naming the request messages looked at (and the field
   * likely meant); methods whose requests lack it record the header's id, or none. Not checked when a served
   * method's request type is unknown (services from code generated by grpc-tools or ts-proto).
   */
  requestIdField?: string | false | undefined;
  /** Passed to `new grpc.Server(...)`. */
  serverOptions?: grpc.ServerOptions | undefined;
  /**
   * The most attempts the server keeps for {@link FlakyServer.attempts}, `attemptsOf` and `allAttempts`: beyond it
   * the oldest are forgotten, so that a long load or soak test does not grow the server's memory (and its garbage
   * collection pauses) without bound. Default 100,000; 0 keeps none (count with `onAttemptEnd`, which still sees
   * every attempt); `Infinity` keeps all. Scripts and attempt numbers are not affected.
   */
  maxRecordedAttempts?: number | undefined;
  /**
   * The most request bytes the kept attempts may hold: the wire size of their request messages plus their request
   * headers. Beyond it the oldest attempts that have ended are forgotten (attempts in progress, and the newest
   * attempt, are kept), so that large requests cannot hold gigabytes before `maxRecordedAttempts` bites. Default
   * 64 MiB; `Infinity` turns the bound off.
   */
  maxRecordedBytes?: number | undefined;
  /**
   * The most call ids whose attempt counter the server keeps. Beyond it, the call id whose latest attempt is the
   * oldest and has no attempt in progress is forgotten, with the script shipped in its `x-flaky-script` header (a
   * later attempt of it would count from 1 again). Retries of one call come within seconds, so numbering stays
   * right for every call unless this many other call ids arrive meanwhile. Scripts given with `script(...)` or
   * the `scripts` option, and their counters, are never forgotten on their own. Default 100,000; `Infinity` keeps
   * all.
   */
  maxTrackedCallIds?: number | undefined;
}

/** The default of {@link FlakyServerOptions.maxRecordedAttempts}. */
export const DEFAULT_MAX_RECORDED_ATTEMPTS = 100_000;

/** The default of {@link FlakyServerOptions.maxRecordedBytes}: 64 MiB. */
export const DEFAULT_MAX_RECORDED_BYTES = 64 * 1024 * 1024;

/** The default of {@link FlakyServerOptions.maxTrackedCallIds}. */
export { DEFAULT_MAX_TRACKED_CALL_IDS } from './call-id-counters.js';

/** {@link FlakyServerOptions} after checking, with defaults applied. */
export interface CheckedFlakyServerOptions {
  port: number;
  host: string;
  scripts: ReadonlyArray<readonly [string, AttemptScript[]]>;
  onAttempt: FlakyServerOptions['onAttempt'];
  onAttemptEnd: FlakyServerOptions['onAttemptEnd'];
  requestIds: RequestIdSources;
  serverOptions: grpc.ServerOptions | undefined;
  proto: readonly string[];
  includeDirs: readonly string[];
  keepCase: boolean;
  services: readonly unknown[];
  serveFlakyTest: boolean;
  methodScripts: ReadonlyArray<readonly [string, AttemptScript[]]>;
  respond: FlakyServerOptions['respond'];
  maxRecordedAttempts: number;
  maxRecordedBytes: number;
  maxTrackedCallIds: number;
}

const OPTION_NAMES: ReadonlySet<string> = new Set([
  'port',
  'host',
  'scripts',
  'onAttempt',
  'onAttemptEnd',
  'requestIdHeader',
  'requestIdField',
  'serverOptions',
  'proto',
  'includeDirs',
  'keepCase',
  'services',
  'serveFlakyTest',
  'methodScripts',
  'respond',
  'maxRecordedAttempts',
  'maxRecordedBytes',
  'maxTrackedCallIds',
]);

/** A legal lowercase metadata key for text values. */
const TEXT_METADATA_KEY = /^[0-9a-z_.-]+$/;

function checkRequestIdHeader(value: unknown): string | undefined {
  if (value === false) {
    return undefined;
  }
  if (value === undefined) {
    return DEFAULT_REQUEST_ID_HEADER;
  }
  if (typeof value !== 'string' || !TEXT_METADATA_KEY.test(value) || value.endsWith('-bin')) {
    throw new TypeError(
      `FlakyServer: option "requestIdHeader" must be a lowercase metadata key not ending in -bin, or false; got ${describeValue(value)}`,
    );
  }
  return value;
}

/**
 * `paths` is an array of non-empty strings, else a TypeError saying what option `name` got, and where in the array
 * (`wanted` of the option, `wantedEach` of one entry); a file URL, as an ES module names a file beside it, is told
 * how to become a path.
 */
function checkPaths(name: string, paths: unknown, wanted: string, wantedEach: string): void {
  if (!Array.isArray(paths)) {
    throw new TypeError(`FlakyServer: option "${name}" must be ${wanted}, got ${describePath(paths)}`);
  }
  const bad = paths.findIndex((path) => typeof path !== 'string' || path === '');
  if (bad >= 0) {
    throw new TypeError(
      `FlakyServer: option "${name}"[${bad}] must be ${wantedEach}, got ${describePath(paths[bad])}`,
    );
  }
}

/** A value given where a path goes, for an error: a URL with the way to its path, else as described. */
function describePath(value: unknown): string {
  return value instanceof URL
    ? `a URL (${value.href}): pass fileURLToPath(url) from node:url`
    : describeValue(value);
}

/** A proto field name, snake_case or camelCase. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The request field read as the request id, as the user names it (the proto name or its camelCase spelling: the
 * recording tries both, so that it matches requests loaded either way). With only FlakyTest served it must be a
 * string field of TestRequest; with services of the user's too, any field name (of their messages).
 */
function checkRequestIdField(value: unknown, userServices: boolean): string | undefined {
  if (value === false) {
    return undefined;
  }
  const name = value === undefined ? DEFAULT_REQUEST_ID_FIELD : value;
  const fields = flakyRequestStringFields(); // as loaded: camelCase
  const valid = typeof name === 'string' && FIELD_NAME.test(name);
  if (valid && (userServices || fields.includes(camelCaseField(name)))) {
    return name;
  }
  if (userServices) {
    // Which messages have it is checked once the services are loaded (checkRequestIdFieldServed): not FlakyTest's.
    throw new TypeError(
      `FlakyServer: option "requestIdField" must be a field name (such as "request_id" or "requestId"), or false; got ${describeValue(value)}`,
    );
  }
  throw new TypeError(
    `FlakyServer: option "requestIdField" must name a string field of TestRequest (${fields.map(snakeCaseField).join(', ')}), or be false; got ${describeValue(value)}`,
  );
}

/**
 * Checks a `requestIdField` the user gave, once the served methods are known: some served method's request message
 * must have a string field of that name (either spelling, as the recording reads it). Methods whose requests lack
 * it are fine (their attempts record the header's id, or none). Not checked when a served method's request type
 * is unknown (code generated by grpc-tools or ts-proto carries no descriptor): it may have the field.
 * @throws TypeError naming the request types looked at, a field of that name of another type, and the string field
 *   likely meant.
 */
export function checkRequestIdFieldServed(
  field: string,
  requests: ReadonlyArray<RequestType | undefined>,
): void {
  const types = new Map<string, RequestType>();
  for (const request of requests) {
    if (request === undefined) {
      return;
    }
    types.set(request.name, request);
  }
  const spellings = new Set([field, camelCaseField(field), snakeCaseField(field)]);
  const strings = new Set<string>();
  const otherTypes: string[] = [];
  for (const type of types.values()) {
    for (const [name, fieldType] of type.fields) {
      if (fieldType === 'string') {
        if (spellings.has(name)) {
          return;
        }
        strings.add(name);
      } else if (spellings.has(name)) {
        otherTypes.push(
          `${name} of ${type.name} is ${/^[aeiou]/.test(fieldType) ? 'an' : 'a'} ${fieldType} field`,
        );
      }
    }
  }
  const near = otherTypes.length > 0 ? undefined : closestName(field, strings);
  const meant =
    near === undefined ? '' : `; did you mean "${field.includes('_') ? snakeCaseField(near) : near}"?`;
  const notString = otherTypes.length > 0 ? `; ${otherTypes.join(', ')}, not a string` : '';
  throw new TypeError(
    `FlakyServer: option "requestIdField" is ${JSON.stringify(field)}, but no served method's request message has a string field of that name (looked at: ${[...types.keys()].join(', ')})${notString}${meant || '; name a string field of one of them, or give false to read no field'}`,
  );
}

function checkHook<T>(name: string, value: T): T {
  if (value !== undefined && typeof value !== 'function') {
    throw new TypeError(`FlakyServer: option "${name}" must be a function, got ${describeValue(value)}`);
  }
  return value;
}

/** Checks the options of `FlakyServer.start`; throws a TypeError or RangeError naming a bad option. */
export function checkFlakyServerOptions(options: unknown): CheckedFlakyServerOptions {
  const o = checkOptions('FlakyServer: options', options, [...OPTION_NAMES]) as FlakyServerOptions;
  const port = o.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new (typeof port === 'number' ? RangeError : TypeError)(
      `FlakyServer: option "port" must be an integer 0..65535, got ${describeValue(port)}${wrongTypeHint(port, 'number')}`,
    );
  }
  const host = o.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host === '') {
    throw new TypeError(
      `FlakyServer: option "host" must be a non-empty string, got ${describeValue(host)}${wrongTypeHint(host, 'string')}`,
    );
  }
  const portWritten = portInHost(host);
  if (portWritten !== undefined) {
    // bound as it is, it reads as an IPv6 address ([127.0.0.1:50051]:0) that does not resolve
    throw new TypeError(
      `FlakyServer: option "host" is a host name or address without a port, got ${JSON.stringify(host)}: give the port as option "port"${portWritten === '' ? '' : ` (port: ${portWritten})`}`,
    );
  }
  if (
    o.scripts !== undefined &&
    (typeof o.scripts !== 'object' || o.scripts === null || Array.isArray(o.scripts))
  ) {
    throw new TypeError(
      `FlakyServer: option "scripts" must be an object of scripts by call id, got ${describeValue(o.scripts)}`,
    );
  }
  const scripts = Object.entries(o.scripts ?? {}).map(([callId, script]) => {
    if (callId === '') {
      throw new TypeError(
        'FlakyServer: option "scripts" has a script under the call id "": a call id must be non-empty (attempts sent without one play their method\'s script, see "methodScripts")',
      );
    }
    return [callId, validateAttemptScripts(script, `scripts["${callId}"]`)] as const;
  });
  if (o.serverOptions !== undefined && (typeof o.serverOptions !== 'object' || o.serverOptions === null)) {
    throw new TypeError(
      `FlakyServer: option "serverOptions" must be an object, got ${describeValue(o.serverOptions)}`,
    );
  }
  const proto = o.proto === undefined ? [] : typeof o.proto === 'string' ? [o.proto] : o.proto;
  checkPaths('proto', proto, 'a .proto file path or an array of them', 'a .proto file path');
  const includeDirs = o.includeDirs ?? [];
  checkPaths('includeDirs', includeDirs, 'an array of directory paths', 'a directory path');
  const keepCase = o.keepCase ?? false;
  if (typeof keepCase !== 'boolean') {
    throw new TypeError(`FlakyServer: option "keepCase" must be a boolean; got ${describeValue(keepCase)}`);
  }
  const services: readonly unknown[] =
    o.services === undefined ? [] : Array.isArray(o.services) ? o.services : [o.services];
  const serveFlakyTest = o.serveFlakyTest ?? true;
  if (typeof serveFlakyTest !== 'boolean') {
    throw new TypeError(
      `FlakyServer: option "serveFlakyTest" must be a boolean; got ${describeValue(serveFlakyTest)}`,
    );
  }
  if (!serveFlakyTest && proto.length === 0 && services.length === 0) {
    throw new TypeError(
      'FlakyServer: option "serveFlakyTest" is false and neither "proto" nor "services" is given: the server would serve nothing',
    );
  }
  if (
    o.methodScripts !== undefined &&
    (typeof o.methodScripts !== 'object' || o.methodScripts === null || Array.isArray(o.methodScripts))
  ) {
    throw new TypeError(
      `FlakyServer: option "methodScripts" must be an object of scripts by method name, got ${describeValue(o.methodScripts)}`,
    );
  }
  const methodScripts = Object.entries(o.methodScripts ?? {}).map(
    ([method, script]) => [method, validateAttemptScripts(script, `methodScripts["${method}"]`)] as const,
  );
  const maxRecordedAttempts = checkBound(
    'FlakyServer',
    'maxRecordedAttempts',
    o.maxRecordedAttempts,
    DEFAULT_MAX_RECORDED_ATTEMPTS,
    0,
  );
  const maxRecordedBytes = checkBound(
    'FlakyServer',
    'maxRecordedBytes',
    o.maxRecordedBytes,
    DEFAULT_MAX_RECORDED_BYTES,
    0,
  );
  const maxTrackedCallIds = checkBound(
    'FlakyServer',
    'maxTrackedCallIds',
    o.maxTrackedCallIds,
    DEFAULT_MAX_TRACKED_CALL_IDS,
    1,
  );
  return {
    port,
    host,
    scripts,
    onAttempt: checkHook('onAttempt', o.onAttempt),
    onAttemptEnd: checkHook('onAttemptEnd', o.onAttemptEnd),
    requestIds: {
      header: checkRequestIdHeader(o.requestIdHeader),
      field: checkRequestIdField(o.requestIdField, proto.length > 0 || services.length > 0),
    },
    serverOptions: o.serverOptions,
    proto,
    includeDirs,
    keepCase,
    services,
    serveFlakyTest,
    methodScripts,
    respond: checkHook('respond', o.respond),
    maxRecordedAttempts,
    maxRecordedBytes,
    maxTrackedCallIds,
  };
}

/**
 * A bound option: an integer >= `min` or `Infinity` (default `fallback` when left out; null is refused, as for
 * every other option); else an error naming it and the value given: a TypeError when that is no number (NaN
 * included; a number written as text is hinted), a RangeError when it is out of range.
 * @internal shared with FlakyCluster
 */
export function checkBound(
  owner: string,
  name: string,
  value: unknown,
  fallback: number,
  min: number,
): number {
  const bound = value === undefined ? fallback : value;
  if (
    typeof bound !== 'number' ||
    !(Number.isInteger(bound) || bound === Number.POSITIVE_INFINITY) ||
    bound < min
  ) {
    // not a number (NaN included, as checkNumber has it): a TypeError; a number out of range: a RangeError
    throw new (typeof bound !== 'number' || Number.isNaN(bound) ? TypeError : RangeError)(
      `${owner}: option "${name}" must be an integer >= ${min} or Infinity; got ${describeValue(bound)}${wrongTypeHint(bound, 'number')}`,
    );
  }
  return bound;
}
