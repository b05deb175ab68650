/**
 * `createChannelOptions`: the grpc-js channel options for everything in a service config that the retry interceptor
 * does not own (load balancing, message size limits, fields this package does not know), with the parts the
 * interceptor owns removed so that nothing is applied twice.
 */
import type { ChannelOptions } from '@grpc/grpc-js';
import { withReplicaAvoidance } from '../lb/avoid-tried-config.js';
import { hedgingAroundPickFirstWarning } from '../lb/hedging-lb-warning.js';
import { isPolicyKnownToGrpcJs } from '../lb/known-to-grpc-js.js';
import { unknownPoliciesWarning } from '../lb/lb-policy-names.js';
import { errorMessage } from '../util/error-message.js';
import { checkOptions } from '../util/option-checks.js';
import { warnOncePerProcess } from '../util/warn-once.js';
import {
  findLoadBalancingConfigProblems,
  findMessageLimitProblems,
  type LimitSpelling,
  messageLimit,
} from './channel-rules.js';
import { formatJsonPath } from './json-path.js';
import { configSourceOf } from './normalized-config.js';
import { isNormalizedServiceConfig, parseServiceConfig } from './parse-service-config.js';
import { describeValue, ServiceConfigError } from './service-config-error.js';
import type { ServiceConfigJson } from './service-config-json.js';
import type { MethodName, ServiceConfig } from './types.js';

/** Options of {@link createChannelOptions}. */
export interface ChannelOptionsSettings {
  /**
   * Keep grpc-js's transparent retries (default `true`): grpc-js then re-sends, once, an attempt that never reached
   * the server application, below the interceptor and invisible to it, as A6 allows. `false` adds
   * `'grpc.enable_retries': 0`, which turns them off.
   */
  transparentRetries?: boolean | undefined;
  /**
   * Receives a message when the channel will not do what the config says: a per-method message size limit that
   * cannot be enforced as written (grpc-js has only channel-wide limits), a `loadBalancingConfig` that names no
   * policy grpc-js knows (a misspelling, say: grpc-js then runs `pick_first`), or a `hedgingPolicy` under the
   * replica-avoiding policy around `pick_first` (one server to choose from: a hedge cannot leave a slow replica).
   * Default: `process.emitWarning`, with code `GRPC_RETRY_HEDGING_MESSAGE_LIMIT` or `GRPC_RETRY_HEDGING_LB_POLICY`
   * (both load-balancing warnings).
   */
  onWarning?: ((message: string) => void) | undefined;
  /**
   * Send retries and hedges to replicas the call has not tried yet (default `false`): wraps the config's
   * `loadBalancingConfig` (or `round_robin` where it has none) in the `grpc_retry_hedging.avoid_tried_replicas`
   * policy, and registers that policy with grpc-js. See docs/hedging-across-replicas.md.
   */
  avoidTriedReplicas?: boolean | undefined;
}

/** Fields of a methodConfig entry that the interceptor applies, or that become channel options. */
const REMOVED_METHOD_FIELDS: ReadonlySet<string> = new Set([
  'name',
  'retryPolicy',
  'hedgingPolicy',
  'timeout',
  'waitForReady',
  'maxRequestMessageBytes',
  'maxResponseMessageBytes',
  'maxRequestBytes',
  'maxResponseBytes',
]);

/** grpc-js's defaults (constants.ts): no send limit, 4 MiB receive limit. */
const GRPC_JS_DEFAULT_SEND_LIMIT = Number.POSITIVE_INFINITY;
const GRPC_JS_DEFAULT_RECEIVE_LIMIT = 4 * 1024 * 1024;

interface LimitField extends LimitSpelling {
  readonly channelOption: 'grpc.max_send_message_length' | 'grpc.max_receive_message_length';
  /** What a method without a limit gets from grpc-js. */
  readonly grpcJsDefault: number;
}

const LIMIT_FIELDS: readonly LimitField[] = [
  {
    standard: 'maxRequestMessageBytes',
    grpcJs: 'maxRequestBytes',
    channelOption: 'grpc.max_send_message_length',
    grpcJsDefault: GRPC_JS_DEFAULT_SEND_LIMIT,
  },
  {
    standard: 'maxResponseMessageBytes',
    grpcJs: 'maxResponseBytes',
    channelOption: 'grpc.max_receive_message_length',
    grpcJsDefault: GRPC_JS_DEFAULT_RECEIVE_LIMIT,
  },
];

type JsonObject = Record<string, unknown>;

/**
 * Turns one service config into grpc-js channel options, to use next to {@link createRetryInterceptor} with the
 * same file:
 *
 * ```ts
 * const config = readFileSync('service-config.json', 'utf8');
 * const client = new Greeter(address, credentials, {
 *   ...createChannelOptions(config),
 *   interceptors: [createRetryInterceptor(config)],
 * });
 * ```
 *
 * - `grpc.service_config` gets the config without `retryPolicy`, `hedgingPolicy`, `timeout` and `waitForReady`
 *   (in every methodConfig entry) and without `retryThrottling`: the interceptor applies those once per call, and
 *   grpc-js applying them too would multiply attempts (a `timeout` would become a per-attempt deadline there).
 *   Everything else (`loadBalancingConfig`, `loadBalancingPolicy`, unknown fields) is kept as written; `null`
 *   fields are dropped (proto3 JSON reads them as absent, grpc-js's parser rejects them). Every entry and its names
 *   stay, so the "most specific name wins" matching is unchanged.
 * - Message size limits (`maxRequestMessageBytes`/`maxResponseMessageBytes`, and grpc-js's spelling
 *   `maxRequestBytes`/`maxResponseBytes`) become `grpc.max_send_message_length` and
 *   `grpc.max_receive_message_length`. grpc-js has no per-method limits (it parses them and ignores them), so the
 *   channel gets the largest limit any method has, counting grpc-js's default (no send limit, 4 MiB receive) for
 *   methods no entry limits: no call is refused a message its own entry allows. A method whose entry sets a smaller
 *   limit is reported through `onWarning`, since that limit is not enforced.
 *
 * @param config Service-config JSON text or object, or what `parseServiceConfig`/`loadServiceConfig` returned
 *   (it keeps the config as written, so that fields the retry parser drops reach the channel). It is validated by
 *   `parseServiceConfig`, with the same errors.
 * @throws ServiceConfigError naming the JSON path of an invalid value; TypeError for an invalid option, or for a config
 *   holding what JSON cannot (a cycle, a BigInt), as grpc-js reads the channel's service config as JSON text.
 */
export function createChannelOptions(
  config: ServiceConfig | ServiceConfigJson | string,
  settings: ChannelOptionsSettings = {},
): ChannelOptions {
  const { transparentRetries, avoidTriedReplicas, warn } = checkSettings(settings);
  if (isNormalizedServiceConfig(config)) {
    // What parseServiceConfig / loadServiceConfig returned: it keeps the config as written.
    const source = configSourceOf(config);
    if (source?.notJson !== undefined) {
      throw new TypeError(notJsonMessage(source.notJson));
    }
    const raw = source?.raw;
    if (raw === undefined) {
      throw new TypeError(
        'createChannelOptions: this parsed config does not keep the service config as written (it came from another version of grpc-retry-hedging); pass the JSON text or object itself',
      );
    }
    return createChannelOptions(raw as object, settings);
  }
  if (typeof config !== 'string' && (typeof config !== 'object' || config === null)) {
    throw new TypeError(
      `createChannelOptions: config must be JSON text or an object, got ${describeValue(config)}`,
    );
  }
  const parsed = parseServiceConfig(config);
  const raw = (typeof config === 'string' ? JSON.parse(config.replace(/^\uFEFF/, '')) : config) as JsonObject;

  const serviceConfig: JsonObject = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'retryThrottling' || key === 'methodConfig' || value === null || value === undefined) {
      continue;
    }
    serviceConfig[key] = value;
  }
  checkLoadBalancingConfig(serviceConfig.loadBalancingConfig);
  withReplicaAvoidance(serviceConfig, avoidTriedReplicas);
  // (After the wrapping: with avoidTriedReplicas, a child list grpc-js cannot run is an error there.)
  const unknownPolicies = unknownPoliciesWarning(serviceConfig.loadBalancingConfig, isPolicyKnownToGrpcJs);
  if (unknownPolicies !== undefined) {
    warn(
      `createChannelOptions: loadBalancingConfig ${unknownPolicies.message}`,
      'GRPC_RETRY_HEDGING_LB_POLICY',
    );
  }
  const aroundPickFirst = hedgingAroundPickFirstWarning(
    serviceConfig.loadBalancingConfig,
    raw.methodConfig,
    isPolicyKnownToGrpcJs,
  );
  if (aroundPickFirst !== undefined) {
    warn(`createChannelOptions: ${aroundPickFirst}`, 'GRPC_RETRY_HEDGING_LB_POLICY');
  }

  const rawEntries = Array.isArray(raw.methodConfig) ? (raw.methodConfig as JsonObject[]) : [];
  if (rawEntries.length > 0) {
    serviceConfig.methodConfig = rawEntries.map((entry, index) =>
      channelMethodConfig(entry, parsed.methodConfig[index]?.name ?? []),
    );
  }

  let serviceConfigText: string;
  try {
    serviceConfigText = JSON.stringify(serviceConfig);
  } catch (error) {
    throw new TypeError(notJsonMessage(errorMessage(error)));
  }
  const options: ChannelOptions = { 'grpc.service_config': serviceConfigText };
  for (const field of LIMIT_FIELDS) {
    const limit = channelWideLimit(rawEntries, parsed.methodConfig, field, warn);
    if (limit !== undefined) {
      options[field.channelOption] = limit;
    }
  }
  if (!transparentRetries) {
    options['grpc.enable_retries'] = 0;
  }
  return options;
}

/** The error for a config object holding what JSON cannot (a cycle, a BigInt) in a field the channel gets. */
function notJsonMessage(why: string): string {
  const firstLine = why.split('\n')[0] ?? why;
  return `createChannelOptions: the service config is not JSON (JSON.stringify: ${firstLine}), and grpc-js reads 'grpc.service_config' as JSON text: take out what JSON cannot hold, or pass the JSON text`;
}

function checkSettings(settings: ChannelOptionsSettings): {
  transparentRetries: boolean;
  avoidTriedReplicas: boolean;
  warn: (message: string, code: string) => void;
} {
  if (typeof settings !== 'object' || settings === null) {
    throw new TypeError(`createChannelOptions: options must be an object, got ${describeValue(settings)}`);
  }
  checkOptions('createChannelOptions: options', settings, [
    'transparentRetries',
    'onWarning',
    'avoidTriedReplicas',
  ]);
  const avoidTriedReplicas = settings.avoidTriedReplicas ?? false;
  if (typeof avoidTriedReplicas !== 'boolean') {
    throw new TypeError(
      `createChannelOptions: options.avoidTriedReplicas must be true or false, got ${describeValue(avoidTriedReplicas)}`,
    );
  }
  const transparentRetries = settings.transparentRetries ?? true;
  if (typeof transparentRetries !== 'boolean') {
    throw new TypeError(
      `createChannelOptions: options.transparentRetries must be true or false, got ${describeValue(transparentRetries)}`,
    );
  }
  const onWarning = settings.onWarning;
  if (onWarning !== undefined && typeof onWarning !== 'function') {
    throw new TypeError(
      `createChannelOptions: options.onWarning must be a function, got ${describeValue(onWarning)}`,
    );
  }
  const warn = (message: string, code: string): void => {
    if (onWarning === undefined) {
      warnOncePerProcess(message, code);
    } else {
      onWarning(message);
    }
  };
  return { transparentRetries, avoidTriedReplicas, warn };
}

/**
 * grpc-js rejects (at client construction) anything but an array of objects that each name one policy; the
 * validator reports the same problems (channel-rules.ts), so this only guards configs it did not see.
 */
function checkLoadBalancingConfig(value: unknown): void {
  const [problem] = findLoadBalancingConfigProblems(value);
  if (problem !== undefined) {
    throw new ServiceConfigError(formatJsonPath(problem.path), problem.message);
  }
}

function channelMethodConfig(entry: JsonObject, names: readonly MethodName[]): JsonObject {
  const out: JsonObject = { name: names.map((name) => ({ ...name })) };
  for (const [key, value] of Object.entries(entry)) {
    if (REMOVED_METHOD_FIELDS.has(key) || value === null || value === undefined) {
      continue;
    }
    out[key] = value;
  }
  return out;
}

/** The limit of one entry in one direction, from either spelling (which must then agree; channel-rules.ts). */
function entryLimit(entry: JsonObject, field: LimitField, index: number): number | undefined {
  const [problem] = findMessageLimitProblems(entry, ['methodConfig', index], [field]);
  if (problem !== undefined) {
    throw new ServiceConfigError(formatJsonPath(problem.path), problem.message);
  }
  return messageLimit(entry[field.standard]) ?? messageLimit(entry[field.grpcJs]);
}

/**
 * The largest limit any method can have: each entry's own limit (grpc-js's default where it sets none), and
 * grpc-js's default for methods no entry names (whenever there is no `{}` entry). `undefined` when no entry sets a
 * limit, or when the largest is "no limit".
 */
function channelWideLimit(
  rawEntries: readonly JsonObject[],
  entries: readonly { name: readonly MethodName[] }[],
  field: LimitField,
  warn: (message: string, code: string) => void,
): number | undefined {
  const limits = rawEntries.map((entry, index) => ({
    // The key the entry wrote its limit under (the standard name, or grpc-js's), so the warning names the file's.
    path: `methodConfig[${index}].${messageLimit(entry[field.standard]) === undefined ? field.grpcJs : field.standard}`,
    limit: entryLimit(entry, field, index),
    hasNames: (entries[index]?.name.length ?? 0) > 0,
  }));
  const set = limits.filter(
    (l): l is { path: string; limit: number; hasNames: boolean } => l.limit !== undefined,
  );
  if (set.length === 0) {
    return undefined;
  }
  const hasDefaultEntry = entries.some((entry) => entry.name.some((name) => name.service === undefined));
  let widest = hasDefaultEntry ? 0 : field.grpcJsDefault;
  for (const l of limits) {
    if (l.hasNames) {
      widest = Math.max(widest, l.limit ?? field.grpcJsDefault);
    }
  }
  for (const l of set) {
    if (l.hasNames && l.limit < widest) {
      warn(
        `createChannelOptions: ${l.path} (${l.limit}) is not enforced: grpc-js has only channel-wide message size limits, and ${field.channelOption} is ${Number.isFinite(widest) ? widest : 'unlimited'} so that no method is refused a message its own entry allows`,
        'GRPC_RETRY_HEDGING_MESSAGE_LIMIT',
      );
    }
  }
  return Number.isFinite(widest) ? widest : undefined;
}
