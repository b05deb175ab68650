/**
 * Request ids (AIP-155, AIP-4235): a UUID v4 filled in once per call when the caller left it empty, so that every
 * retry and hedge of the call carries the same id and the server can drop duplicates.
 */
import { randomUUID } from 'node:crypto';
import {
  InterceptingCall,
  type Interceptor,
  type InterceptorOptions,
  type Metadata,
  status,
} from '@grpc/grpc-js';
import { isChannelLevel } from '../shared/channel-level.js';
/** Header the id goes to when no `field` is named. Envoy and many proxies propagate and log this one. */
import { DEFAULT_REQUEST_ID_HEADER } from '../shared/headers.js';
import { checkNotUsedAsInterceptor } from '../util/factory-misuse.js';
import { checkFunction, checkOptions as checkKeys, describeValue } from '../util/option-checks.js';
import { warnOnce, warnOncePerProcess } from '../util/warn-once.js';

export { DEFAULT_REQUEST_ID_HEADER };

/** Set by a retrying layer on every attempt after the first: seeing it here means this interceptor sits inside one. */
const PREVIOUS_ATTEMPTS_HEADER = 'grpc-previous-rpc-attempts';
/** A legal text metadata key (lowercase; `-bin` keys carry bytes, `grpc-` keys are reserved). */
const TEXT_HEADER_KEY = /^[0-9a-z_.-]+$/;
/** A legal text metadata value (what grpc-js accepts): printable ASCII, spaces included. */
const TEXT_HEADER_VALUE = /^[ -~]*$/;
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** How many methods the field mode checks for a serializer that drops the field (see checkedMethods). */
const MAX_CHECKED_METHODS = 1_000;

/** Options of {@link createRequestIdInterceptor}. Give `field` or `header`, not both. */
export interface RequestIdInterceptorOptions {
  /**
   * Metadata header that carries the id (default {@link DEFAULT_REQUEST_ID_HEADER}, `x-request-id`). A call whose
   * metadata already holds a non-empty value keeps it. The caller's Metadata object is never modified.
   */
  header?: string | undefined;
  /**
   * Put the id into this top-level string field of the request message instead (AIP-155 `request_id`), spelled as
   * your loader gives it to JavaScript: `requestId` with @grpc/proto-loader's defaults, `request_id` with
   * `keepCase: true`. A field that is absent, `null` or `''` is filled; a non-empty string is kept. The request
   * object is copied, never modified. Only calls with a single request message (unary and server streaming) are
   * filled: in a request stream each message would need its own id. A field holding something other than a string
   * ends the call with INTERNAL.
   */
  field?: string | undefined;
  /** Which calls get an id, by method path (`/package.Service/Method`); default every call. */
  methods?: ((methodPath: string) => boolean) | undefined;
  /** Makes an id (default `crypto.randomUUID`, a UUID v4 as AIP-155 recommends); inject one for tests. */
  generate?: (() => string) | undefined;
}

const OPTION_KEYS: ReadonlySet<string> = new Set(['header', 'field', 'methods', 'generate']);

/**
 * Builds a grpc-js interceptor that fills a request id with a UUID v4 once per call, when the caller left it empty.
 *
 * Put it **before** the retry interceptor: grpc-js runs `interceptors[0]` outermost, once per call, and each
 * interceptor after it sees what the previous one passed on. The retry interceptor then sends the same metadata and
 * the same request on every retry and hedge, so all attempts carry one id:
 *
 * ```ts
 * const client = new Catalog(address, credentials, {
 *   interceptors: [createRequestIdInterceptor({ field: 'requestId' }), createRetryInterceptor(config)],
 * });
 * ```
 * Placed after the retry interceptor it would run once per attempt and give each attempt a new id; it notices
 * (later attempts carry `grpc-previous-rpc-attempts`) and reports it once with `process.emitWarning`.
 *
 * @throws TypeError naming the option when an option is invalid.
 */
export function createRequestIdInterceptor(options: RequestIdInterceptorOptions = {}): Interceptor {
  checkNotUsedAsInterceptor('createRequestIdInterceptor', 'createRequestIdInterceptor()', options);
  const settings = checkOptions(options);
  const warnAboutOrder = warnOnce(
    'grpc-retry-hedging: the request-id interceptor runs inside a retry layer, so each attempt gets a new id; put createRequestIdInterceptor before createRetryInterceptor in `interceptors`',
    'GRPC_RETRY_HEDGING_REQUEST_ID_ORDER',
  );

  const warnFieldAtChannel = warnOnce(
    `grpc-retry-hedging: the request-id interceptor's field mode cannot fill ${settings.field} at a channel (interceptChannel), where requests are already serialized, so no id is sent; leave out \`field\` to send the id in the ${settings.header} header, or give the interceptors to a grpc-js client`,
    'GRPC_RETRY_HEDGING_REQUEST_ID_FIELD',
  );

  /**
   * Methods whose serializer was asked, on their first filled request, whether it keeps the field: the first
   * {@link MAX_CHECKED_METHODS} (a proxy calls paths without end; a field its protos drop shows in the first ones).
   */
  const checkedMethods = new Set<string>();

  return (callOptions: InterceptorOptions, nextCall) => {
    const definition = callOptions.method_definition;
    // grpc-js only uses the InterceptingCall interface of what an interceptor returns.
    if (!settings.methods(definition.path)) {
      return nextCall(callOptions) as InterceptingCall;
    }
    if (settings.field === undefined) {
      const header = settings.header;
      return new InterceptingCall(nextCall(callOptions), {
        start(metadata, listener, next) {
          if (metadata.get(PREVIOUS_ATTEMPTS_HEADER).length > 0) {
            warnAboutOrder();
          }
          next(
            hasValue(metadata, header) ? metadata : withHeader(metadata, header, settings.generate()),
            listener,
          );
        },
      });
    }
    if (definition.requestStream) {
      if (isChannelLevel(definition)) {
        warnFieldAtChannel();
      }
      return nextCall(callOptions) as InterceptingCall;
    }
    const field = settings.field;
    const call: InterceptingCall = new InterceptingCall(nextCall(callOptions), {
      start(metadata, listener, next) {
        if (metadata.get(PREVIOUS_ATTEMPTS_HEADER).length > 0) {
          warnAboutOrder();
        }
        next(metadata, listener);
      },
      sendMessage(message: unknown, next) {
        if (typeof message !== 'object' || message === null) {
          next(message);
          return;
        }
        const current = (message as Record<string, unknown>)[field];
        if (current === undefined || current === null || current === '') {
          const filled = withField(message, field, settings.generate());
          if (!checkedMethods.has(definition.path) && checkedMethods.size < MAX_CHECKED_METHODS) {
            checkedMethods.add(definition.path);
            warnIfFieldDropped(definition, field, message, filled);
          }
          next(filled);
        } else if (typeof current === 'string') {
          next(message);
        } else {
          call.cancelWithStatus(
            status.INTERNAL,
            `request-id interceptor: field ${field} of the ${definition.path} request holds ${typeof current}, expected a string`,
          );
        }
      },
    });
    return call;
  };
}

interface Settings {
  readonly header: string;
  readonly field: string | undefined;
  readonly methods: (methodPath: string) => boolean;
  readonly generate: () => string;
}

function checkOptions(options: RequestIdInterceptorOptions): Settings {
  const where = 'createRequestIdInterceptor: options';
  checkKeys(where, options, [...OPTION_KEYS]);
  if (options.header !== undefined && options.field !== undefined) {
    throw new TypeError(`${where}: give field or header, not both`);
  }
  const header = options.header ?? DEFAULT_REQUEST_ID_HEADER;
  if (
    typeof header !== 'string' ||
    !TEXT_HEADER_KEY.test(header) ||
    header.endsWith('-bin') ||
    header.startsWith('grpc-')
  ) {
    throw new TypeError(
      `${where}.header must be a lowercase text metadata key (not -bin, not grpc-), got ${JSON.stringify(header)}`,
    );
  }
  if (options.field !== undefined && (typeof options.field !== 'string' || !FIELD_NAME.test(options.field))) {
    throw new TypeError(`${where}.field must be a field name, got ${JSON.stringify(options.field)}`);
  }
  checkFunction(where, 'methods', options.methods);
  checkFunction(where, 'generate', options.generate);
  const generate = options.generate ?? randomUUID;
  return {
    header,
    field: options.field,
    methods: options.methods ?? (() => true),
    generate: () => {
      const id = generate();
      if (typeof id !== 'string' || id === '') {
        throw new TypeError(`${where}.generate must return a non-empty string, got ${JSON.stringify(id)}`);
      }
      if (options.field === undefined && !TEXT_HEADER_VALUE.test(id)) {
        throw new TypeError(
          `${where}.generate must return printable ASCII for the ${header} header (a metadata text value has no control or non-ASCII characters), got ${describeValue(id)}`,
        );
      }
      return id;
    },
  };
}

function hasValue(metadata: Metadata, header: string): boolean {
  return metadata.get(header).some((value) => typeof value === 'string' && value !== '');
}

function withHeader(metadata: Metadata, header: string, id: string): Metadata {
  const copy = metadata.clone();
  copy.set(header, id);
  return copy;
}

/**
 * Warns when the method's serializer drops the field: the request serializes to the same bytes with the id as
 * without it, so the field is not in the message type as the loader spells it (proto-loader turns `request_id` into
 * `requestId` unless `keepCase: true`). Asked once per method; a serializer that throws, or whose output differs
 * from one call to the next, is given the benefit of the doubt.
 */
function warnIfFieldDropped(
  definition: InterceptorOptions['method_definition'],
  field: string,
  message: object,
  filled: object,
): void {
  const serialize = definition.requestSerialize as (value: object) => Buffer;
  const keeps = (value: object): boolean | undefined => {
    try {
      return !serialize(value).equals(serialize(message));
    } catch {
      return undefined;
    }
  };
  if (keeps(filled) !== false) {
    return;
  }
  const other = otherSpelling(field);
  const otherKept = other === undefined ? undefined : keeps(withField(message, other, 'x'));
  const hint =
    otherKept === true
      ? `: did you mean ${other}? Spell it as your loader gives it to JavaScript`
      : otherKept === false
        ? `: the request has neither ${field} nor ${other}, so this method's requests have no such field; leave it out with the interceptor's methods option (methods: (path) => ...), or send the id in a header`
        : ": spell it as your loader gives it to JavaScript (requestId with @grpc/proto-loader's defaults, request_id with keepCase: true)";
  warnOncePerProcess(
    `grpc-retry-hedging: the request-id interceptor's field ${field} is not in the ${definition.path} request as it is serialized, so the id it fills in is dropped before it is sent${hint}`,
    'GRPC_RETRY_HEDGING_REQUEST_ID_FIELD',
  );
}

/** `request_id` ↔ `requestId`; undefined when the name has neither form. */
function otherSpelling(field: string): string | undefined {
  if (field.includes('_')) {
    const camel = field.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
    return camel === field ? undefined : camel;
  }
  const snake = field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return snake === field ? undefined : snake;
}

/** A shallow copy with the field set, keeping the prototype (protobufjs message instances keep their class). */
function withField(message: object, field: string, id: string): object {
  const copy = Object.assign(Object.create(Object.getPrototypeOf(message)) as object, message);
  (copy as Record<string, unknown>)[field] = id;
  return copy;
}
