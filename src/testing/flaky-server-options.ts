/**
 * The options of `FlakyServer.start`, and their checks: an unknown or invalid option is a TypeError or RangeError
 * naming it.
 */

import type * as grpc from '@grpc/grpc-js';
import { DEFAULT_REQUEST_ID_HEADER } from '../shared/headers.js';
import type { RequestIdSources } from './attempt-recording.js';
import { validateAttemptScripts } from './attempt-script-validation.js';
import {
  type AttemptScript,
  type AttemptScriptInput,
  DEFAULT_REQUEST_ID_FIELD,
  type RecordedAttempt,
} from './flaky-script.js';
import { flakyRequestStringFields } from './flaky-test-service.js';

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

/** Options of {@link FlakyServer.start}. */
export interface FlakyServerOptions {
  /** Port to bind; default 0 (an ephemeral port, see {@link FlakyServer.port}). */
  port?: number;
  /** Host to bind; default `127.0.0.1` (the server is never exposed beyond loopback unless asked). */
  host?: string;
  /** Scripts to register up front, by call id (same as calling {@link FlakyServer.script} for each). */
  scripts?: Record<string, AttemptScriptInput[]>;
  /**
   * Consulted for attempts whose call id has no registered script; return `undefined` for a prompt success.
   * A hook that throws or returns an invalid script ends the attempt with INTERNAL.
   */
  onAttempt?: (info: FlakyAttemptInfo) => AttemptScriptInput | undefined;
  /** Called once per attempt when it ends with a status or is seen cancelled (errors thrown are ignored). */
  onAttemptEnd?: (attempt: RecordedAttempt) => void;
  /**
   * Request header whose value is recorded as the attempt's `requestId` (AIP-155) when the request message
   * carries none. Default `x-request-id`; `false` reads no header.
   */
  requestIdHeader?: string | false;
  /**
   * String field of the request message recorded as the attempt's `requestId`, by its proto name
   * (`request_id`, the default) or its camelCase name (`requestId`); `false` reads no field. It takes precedence
   * over the header.
   */
  requestIdField?: string | false;
  /** Passed to `new grpc.Server(...)`. */
  serverOptions?: grpc.ServerOptions;
}

/** {@link FlakyServerOptions} after checking, with defaults applied. */
export interface CheckedFlakyServerOptions {
  port: number;
  host: string;
  scripts: ReadonlyArray<readonly [string, AttemptScript[]]>;
  onAttempt: FlakyServerOptions['onAttempt'];
  onAttemptEnd: FlakyServerOptions['onAttemptEnd'];
  requestIds: RequestIdSources;
  serverOptions: grpc.ServerOptions | undefined;
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
]);

/** A legal lowercase metadata key for text values. */
const TEXT_METADATA_KEY = /^[0-9a-z_.-]+$/;

function camelCase(protoName: string): string {
  return protoName.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function snakeCase(camelName: string): string {
  return camelName.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function checkRequestIdHeader(value: unknown): string | undefined {
  if (value === false) {
    return undefined;
  }
  if (value === undefined) {
    return DEFAULT_REQUEST_ID_HEADER;
  }
  if (typeof value !== 'string' || !TEXT_METADATA_KEY.test(value) || value.endsWith('-bin')) {
    throw new TypeError(
      `FlakyServer: option "requestIdHeader" must be a lowercase metadata key not ending in -bin, or false; got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function checkRequestIdField(value: unknown): string | undefined {
  if (value === false) {
    return undefined;
  }
  const name = value === undefined ? DEFAULT_REQUEST_ID_FIELD : value;
  const fields = flakyRequestStringFields(); // as loaded: camelCase
  const match = typeof name === 'string' ? fields.find((f) => f === camelCase(name)) : undefined;
  if (match === undefined) {
    throw new TypeError(
      `FlakyServer: option "requestIdField" must name a string field of TestRequest (${fields.map(snakeCase).join(', ')}), or be false; got ${JSON.stringify(value)}`,
    );
  }
  return match;
}

function checkHook<T>(name: string, value: T): T {
  if (value !== undefined && typeof value !== 'function') {
    throw new TypeError(`FlakyServer: option "${name}" must be a function`);
  }
  return value;
}

/** Checks the options of `FlakyServer.start`; throws a TypeError or RangeError naming a bad option. */
export function checkFlakyServerOptions(options: unknown): CheckedFlakyServerOptions {
  if (options === undefined) {
    options = {};
  }
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError('FlakyServer: options must be an object');
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_NAMES.has(key)) {
      throw new TypeError(`FlakyServer: unknown option "${key}" (known: ${[...OPTION_NAMES].join(', ')})`);
    }
  }
  const o = options as FlakyServerOptions;
  const port = o.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`FlakyServer: invalid port ${port} (option "port" must be an integer 0..65535)`);
  }
  const host = o.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host === '') {
    throw new TypeError('FlakyServer: option "host" must be a non-empty string');
  }
  if (o.scripts !== undefined && (typeof o.scripts !== 'object' || o.scripts === null)) {
    throw new TypeError('FlakyServer: option "scripts" must be an object of scripts by call id');
  }
  const scripts = Object.entries(o.scripts ?? {}).map(
    ([callId, script]) => [callId, validateAttemptScripts(script, `scripts["${callId}"]`)] as const,
  );
  if (o.serverOptions !== undefined && (typeof o.serverOptions !== 'object' || o.serverOptions === null)) {
    throw new TypeError('FlakyServer: option "serverOptions" must be an object');
  }
  return {
    port,
    host,
    scripts,
    onAttempt: checkHook('onAttempt', o.onAttempt),
    onAttemptEnd: checkHook('onAttemptEnd', o.onAttemptEnd),
    requestIds: {
      header: checkRequestIdHeader(o.requestIdHeader),
      field: checkRequestIdField(o.requestIdField),
    },
    serverOptions: o.serverOptions,
  };
}
