import type { CallPolicy, HedgingPolicy, RetryPolicy } from '../config/types.js';
import {
  checkNumber,
  checkOptions,
  describeValue,
  isOptionsObject,
  type NumberRule,
} from '../util/option-checks.js';

const RETRY_KEYS: readonly (keyof RetryPolicy)[] = [
  'kind',
  'maxAttempts',
  'initialBackoffMs',
  'maxBackoffMs',
  'backoffMultiplier',
  'retryableStatusCodes',
  'perAttemptRecvTimeoutMs',
];
const HEDGING_KEYS: readonly (keyof HedgingPolicy)[] = [
  'kind',
  'maxAttempts',
  'hedgingDelayMs',
  'nonFatalStatusCodes',
];

/** The service-config spelling of a field, in a policy written in the interceptor's own form. */
const SERVICE_CONFIG_NAMES: Readonly<Record<string, { readonly now: string; readonly hint: string }>> = {
  initialBackoff: { now: 'initialBackoffMs', hint: 'a number of ms in this form' },
  maxBackoff: { now: 'maxBackoffMs', hint: 'a number of ms in this form' },
  hedgingDelay: { now: 'hedgingDelayMs', hint: 'a number of ms in this form' },
  perAttemptRecvTimeout: { now: 'perAttemptRecvTimeoutMs', hint: 'a number of ms in this form' },
};

/** maxAttempts 1 (what findMethodPolicy returns under an attempt limit of 1) makes a single attempt. */
const ATTEMPTS = { integer: true, min: 1 } as const;
/** The longest duration of service-config JSON (315,576,000,000 s), in ms. */
const LONGEST_MS = 315_576_000_000_000;
const POSITIVE_MS = { min: 0, minExclusive: true, max: LONGEST_MS, unit: 'ms' } as const;

/**
 * A policy given in the interceptor's own form (`{ kind: 'retry', maxAttempts, initialBackoffMs, ... }`, what
 * `findMethodPolicy` returns) rather than in service-config form: checked by the rules the service-config parser
 * applies to the same fields, with the same names in the message, and returned as a frozen copy (a later change to
 * the caller's object changes nothing). A field in service-config spelling (`initialBackoff`) is named with the
 * form's own (`initialBackoffMs`).
 * @throws TypeError or RangeError naming the field at `path`.
 * @internal
 */
export function checkCallPolicy(path: string, value: CallPolicy): CallPolicy {
  if (checked.has(value)) {
    return value; // one this function returned: frozen, so still as checked
  }
  const policy = checkedCopy(path, value);
  checked.add(policy);
  return policy;
}

/** The policies {@link checkCallPolicy} returned: a policy made once and passed with every call is checked once. */
const checked = new WeakSet<CallPolicy>();

function checkedCopy(path: string, value: CallPolicy): CallPolicy {
  const kind = (value as { kind: unknown }).kind;
  if (kind === 'retry') {
    const given = checkOptions(path, value, RETRY_KEYS, SERVICE_CONFIG_NAMES);
    const perAttempt = checkNumber(
      path,
      'perAttemptRecvTimeoutMs',
      given.perAttemptRecvTimeoutMs,
      undefined,
      {
        ...POSITIVE_MS,
        max: Number.MAX_SAFE_INTEGER,
      },
    );
    const policy: RetryPolicy = {
      kind,
      maxAttempts: required(path, 'retry', 'maxAttempts', given.maxAttempts, ATTEMPTS),
      initialBackoffMs: required(path, 'retry', 'initialBackoffMs', given.initialBackoffMs, POSITIVE_MS),
      maxBackoffMs: required(path, 'retry', 'maxBackoffMs', given.maxBackoffMs, POSITIVE_MS),
      backoffMultiplier: required(path, 'retry', 'backoffMultiplier', given.backoffMultiplier, {
        min: 0,
        minExclusive: true,
      }),
      retryableStatusCodes: statusCodes(
        path,
        'retryableStatusCodes',
        given.retryableStatusCodes,
        perAttempt === undefined,
      ),
      ...(perAttempt === undefined ? {} : { perAttemptRecvTimeoutMs: perAttempt }),
    };
    return Object.freeze(policy);
  }
  const given = checkOptions(path, value, HEDGING_KEYS, SERVICE_CONFIG_NAMES);
  const policy: HedgingPolicy = {
    kind: 'hedging',
    maxAttempts: required(path, 'hedging', 'maxAttempts', given.maxAttempts, ATTEMPTS),
    hedgingDelayMs: checkNumber(path, 'hedgingDelayMs', given.hedgingDelayMs ?? undefined, 0, {
      min: 0,
      max: LONGEST_MS,
      unit: 'ms',
    }),
    nonFatalStatusCodes: statusCodes(
      path,
      'nonFatalStatusCodes',
      given.nonFatalStatusCodes ?? undefined,
      false,
    ),
  };
  return Object.freeze(policy);
}

/** Whether `value` claims the interceptor's own policy form (a `kind` of 'retry' or 'hedging'). @internal */
export function isCallPolicyForm(value: unknown): value is CallPolicy {
  if (!isOptionsObject(value)) {
    return false;
  }
  return value.kind === 'retry' || value.kind === 'hedging';
}

function required(
  path: string,
  kind: CallPolicy['kind'],
  name: string,
  value: unknown,
  rule: NumberRule,
): number {
  if (value === undefined) {
    throw new TypeError(`${path}.${name} is required in a policy of kind "${kind}"`);
  }
  return checkNumber(path, name, value, 0, rule);
}

function statusCodes(path: string, name: string, value: unknown, nonEmpty: boolean): readonly number[] {
  const where = `${path}.${name}`;
  if (value === undefined && !nonEmpty) {
    return Object.freeze([]);
  }
  if (!Array.isArray(value)) {
    throw new TypeError(
      `${where} must be an array of status codes (integers 0..16), got ${describeValue(value)}`,
    );
  }
  if (nonEmpty && value.length === 0) {
    throw new RangeError(
      `${where} must not be empty (it may be empty only with a perAttemptRecvTimeoutMs): no failure would be retried`,
    );
  }
  for (let index = 0; index < value.length; index++) {
    const code: unknown = value[index];
    if (typeof code !== 'number' || !Number.isInteger(code) || code < 0 || code > 16) {
      throw new RangeError(
        `${where}[${index}] must be a status code, an integer 0..16 (names are for service-config form), got ${describeValue(code)}`,
      );
    }
  }
  return Object.freeze([...new Set(value as number[])]);
}
