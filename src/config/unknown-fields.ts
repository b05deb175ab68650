/**
 * Fields a service config may hold, and a finder for the others. Unknown fields are ignored at run time, as the
 * service-config spec requires; `check` warns about them, since a misspelled field silently does nothing.
 */

import { closestName } from '../util/closest-name.js';
import type { JsonPath } from './json-path.js';
import { isJsonObject, isPresent } from './service-config-rules.js';

/** Known fields of one object, and how to look inside each (`undefined`: its content is not checked). */
interface FieldShape {
  readonly fields: Readonly<Record<string, FieldShape | ListOf | undefined>>;
}

/** An array whose elements have a shape. */
interface ListOf {
  readonly items: FieldShape;
}

const NAME: FieldShape = { fields: { service: undefined, method: undefined } };

const RETRY_POLICY: FieldShape = {
  fields: {
    maxAttempts: undefined,
    initialBackoff: undefined,
    maxBackoff: undefined,
    backoffMultiplier: undefined,
    retryableStatusCodes: undefined,
    perAttemptRecvTimeout: undefined,
  },
};

const HEDGING_POLICY: FieldShape = {
  fields: { maxAttempts: undefined, hedgingDelay: undefined, nonFatalStatusCodes: undefined },
};

const METHOD_CONFIG: FieldShape = {
  fields: {
    name: { items: NAME },
    waitForReady: undefined,
    timeout: undefined,
    maxRequestMessageBytes: undefined,
    maxResponseMessageBytes: undefined,
    // grpc-js's spelling of the two above: createChannelOptions reads it, and the validator checks it.
    maxRequestBytes: undefined,
    maxResponseBytes: undefined,
    retryPolicy: RETRY_POLICY,
    hedgingPolicy: HEDGING_POLICY,
  },
};

/** The gRPC service config (grpc/service_config.proto), plus `$schema` for editors. */
const SERVICE_CONFIG: FieldShape = {
  fields: {
    $schema: undefined,
    loadBalancingPolicy: undefined,
    loadBalancingConfig: undefined,
    methodConfig: { items: METHOD_CONFIG },
    retryThrottling: { fields: { maxTokens: undefined, tokenRatio: undefined } },
    healthCheckConfig: { fields: { serviceName: undefined } },
    connectionScaling: { fields: { maxConnectionsPerSubchannel: undefined } },
  },
};

/** A field the service config does not define. */
export interface UnknownField {
  /** Path of the field itself, e.g. `methodConfig[0].retry_policy`. */
  readonly path: JsonPath;
  /** The field's name. */
  readonly key: string;
  /** A known field of the same object that the name is close to. */
  readonly suggestion?: string;
  /**
   * Set on a field of a methodConfig `name` that holds neither `service` nor `method`: with the field ignored, the
   * name is `{}`, which matches every method of every service (the default entry).
   */
  readonly widensName?: true;
  /** What to do instead, for a field that shows how the config was put together wrongly (a wrapper, a policy at the root). */
  readonly advice?: string;
}

/** Root fields that show the config's shape is off, and what to write instead. */
const ROOT_ADVICE: Readonly<Record<string, string>> = {
  serviceConfig:
    'the config is wrapped in {"serviceConfig": ...}, as DNS TXT records and grpc_config choices hold it: pass the object inside it',
  retryPolicy:
    'a policy goes in a methodConfig entry: {"methodConfig": [{"name": [{"service": "pkg.Service"}], "retryPolicy": ...}]}',
  hedgingPolicy:
    'a policy goes in a methodConfig entry: {"methodConfig": [{"name": [{"service": "pkg.Service"}], "hedgingPolicy": ...}]}',
  // Channel options of an application moving from grpc-js's own retries, handed over whole.
  'grpc.service_config':
    'these are grpc-js channel options, whose "grpc.service_config" holds the service config as JSON text: pass that text (options["grpc.service_config"]) instead, and leave its retryPolicy and hedgingPolicy out of the channel\'s own options, or grpc-js retries each attempt too',
};

/** Fields of a retryPolicy written in a hedgingPolicy, which takes none of them. */
const HEDGING_ADVICE: Readonly<Record<string, string>> = {
  perAttemptRecvTimeout:
    'it is a retryPolicy field: hedging has no per-attempt timeout (a hedge goes after hedgingDelay whatever the attempts before it do), so no attempt is cut',
  retryableStatusCodes:
    'it is a retryPolicy field: a hedgingPolicy names the statuses that send the next hedge at once in nonFatalStatusCodes',
};

/**
 * Every field of a service-config JSON value that the service config does not define, at any level (the root,
 * methodConfig entries, names, policies, retryThrottling, healthCheckConfig), in document order. Values of the
 * wrong type are skipped (validation reports them); `loadBalancingConfig` content is not looked into.
 */
export function findUnknownFields(root: unknown): UnknownField[] {
  const found: UnknownField[] = [];
  visit(root, SERVICE_CONFIG, [], found);
  return found;
}

function visit(value: unknown, shape: FieldShape, path: JsonPath, found: UnknownField[]): void {
  if (!isJsonObject(value)) {
    return;
  }
  const known = Object.keys(shape.fields);
  const widensName = shape === NAME && !isPresent(value.service) && !isPresent(value.method);
  for (const [key, child] of Object.entries(value)) {
    const childPath = [...path, key];
    if (!Object.hasOwn(shape.fields, key)) {
      const suggestion = closestName(key, known);
      const advice = adviceFor(
        shape === SERVICE_CONFIG ? ROOT_ADVICE : shape === HEDGING_POLICY ? HEDGING_ADVICE : undefined,
        key,
      );
      found.push({
        path: childPath,
        key,
        ...(suggestion === undefined ? {} : { suggestion }),
        ...(widensName ? { widensName: true as const } : {}),
        ...(advice === undefined ? {} : { advice }),
      });
      continue;
    }
    const childShape = shape.fields[key];
    if (childShape === undefined) {
      continue;
    }
    if ('items' in childShape) {
      if (Array.isArray(child)) {
        child.forEach((item, index) => {
          visit(item, childShape.items, [...childPath, index], found);
        });
      }
    } else {
      visit(child, childShape, childPath, found);
    }
  }
}

/**
 * The unknown fields of a policy in service-config form, `{ "retryPolicy": {...} }` or `{ "hedgingPolicy": {...} }`,
 * at `path` (the policy object's own path): those of the retryPolicy or hedgingPolicy object in it. The object's
 * other fields are its caller's to check.
 */
export function findUnknownPolicyFields(policy: unknown, path: JsonPath): UnknownField[] {
  const found: UnknownField[] = [];
  if (isJsonObject(policy)) {
    visit(policy.retryPolicy, RETRY_POLICY, [...path, 'retryPolicy'], found);
    visit(policy.hedgingPolicy, HEDGING_POLICY, [...path, 'hedgingPolicy'], found);
  }
  return found;
}

/** The warning text for an unknown field. */
export function describeUnknownField(field: UnknownField): string {
  const hint = field.suggestion === undefined ? '' : `; did you mean "${field.suggestion}"?`;
  return `unknown field "${field.key}" is ignored${hint}${field.widensName ? `; ${WIDENED_NAME}` : ''}${field.advice === undefined ? '' : `; ${field.advice}`}`;
}

/** What a name left with neither service nor method does (see {@link UnknownField.widensName}). */
export const WIDENED_NAME =
  'the name is then {}, which matches every method of every service: this entry applies to all calls no other entry names';

/** The advice a table holds for `key` (its own entries only: `constructor` is no field with advice). */
function adviceFor(table: Readonly<Record<string, string>> | undefined, key: string): string | undefined {
  return table !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}
