import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  type AttemptScript,
  CALL_ID_METADATA_KEY,
  type RecordedAttempt,
  SCRIPT_METADATA_KEY,
} from './flaky-script.js';
import { flakyTestProtoPath } from './proto-path.js';

/** Fully qualified name of the flaky test service. */
export const FLAKY_TEST_SERVICE = 'grpc_retry_hedging.testing.v1.FlakyTest';
/** Response header carrying the attempt number, sent when an attempt's script has `sendHeaders`. */
export const ATTEMPT_METADATA_KEY = 'x-flaky-attempt';
/** Trailer through which a server asks the client's retry policy to back off (gRPC A6). */
export const PUSHBACK_TRAILER_KEY = 'grpc-retry-pushback-ms';
/** Request header through which a retrying client reports how many attempts preceded this one (gRPC A6). */
export const PREVIOUS_RPC_ATTEMPTS_METADATA_KEY = 'grpc-previous-rpc-attempts';

/** The methods of the flaky test service. */
export type FlakyMethodName = 'Unary' | 'ServerStream' | 'ClientStream' | 'Bidi';

/** Full gRPC path of a flaky test method, e.g. `/grpc_retry_hedging.testing.v1.FlakyTest/Unary`. */
export function flakyMethodPath(name: FlakyMethodName): string {
  return `/${FLAKY_TEST_SERVICE}/${name}`;
}

/** Options used to load `flaky_test.proto` (clients must agree with the server on them). */
const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

let cachedServiceClient: grpc.ServiceClientConstructor | undefined;

/**
 * The grpc-js client constructor of the FlakyTest service, loaded from the packaged `protos/flaky_test.proto`
 * with @grpc/proto-loader (camelCase field names: `messagesReceived`). Loaded once and cached.
 *
 * @example
 * const FlakyTest = loadFlakyTestService();
 * const client = new FlakyTest(server.address, grpc.credentials.createInsecure(), { interceptors: [...] });
 */
export function loadFlakyTestService(): grpc.ServiceClientConstructor {
  if (cachedServiceClient === undefined) {
    const packageDefinition = protoLoader.loadSync(flakyTestProtoPath(), LOADER_OPTIONS);
    let node: ReturnType<typeof grpc.loadPackageDefinition>[string] =
      grpc.loadPackageDefinition(packageDefinition);
    for (const segment of FLAKY_TEST_SERVICE.split('.')) {
      if (typeof node !== 'object' || node === null || !(segment in node)) {
        throw new Error(`grpc-retry-hedging: ${FLAKY_TEST_SERVICE} not found in ${flakyTestProtoPath()}`);
      }
      node = (node as grpc.GrpcObject)[segment]!;
    }
    if (typeof node !== 'function') {
      throw new Error(`grpc-retry-hedging: ${FLAKY_TEST_SERVICE} is not a service`);
    }
    cachedServiceClient = node;
  }
  return cachedServiceClient;
}

// ---------------------------------------------------------------------------------------------------------------
// Script validation
// ---------------------------------------------------------------------------------------------------------------

const MAX_DELAY_MS = 2_147_483_647; // largest delay setTimeout honours
const MAX_RESPONSES = 100_000;
const LEGAL_KEY = /^[0-9a-z_.-]+$/;
const LEGAL_VALUE = /^[ -~]*$/;
/** Trailer keys that would break the HTTP/2 response or the status itself. */
const FORBIDDEN_TRAILER_KEYS = new Set([
  'grpc-status',
  'grpc-message',
  'content-type',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
  'te',
]);
const SCRIPT_FIELDS: ReadonlySet<string> = new Set([
  'status',
  'details',
  'delayMs',
  'pushback',
  'trailers',
  'sendHeaders',
  'responses',
  'failOnFirstMessage',
  'echo',
]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEncodable(text: string): boolean {
  try {
    encodeURI(text); // grpc-js encodes status details with encodeURI; lone surrogates would throw there
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks one attempt script and returns a copy of it. Throws an Error whose message names the offending field,
 * prefixed by `where`. Unknown fields are rejected so typos do not silently turn into a prompt success.
 */
export function validateAttemptScript(value: unknown, where = 'attempt script'): AttemptScript {
  if (!isPlainObject(value)) {
    throw new Error(`${where}: must be an object, got ${Array.isArray(value) ? 'an array' : typeof value}`);
  }
  const fail = (field: string, rule: string): never => {
    throw new Error(`${where}: "${field}" ${rule}`);
  };
  const out: AttemptScript = {};
  for (const [field, v] of Object.entries(value)) {
    if (!SCRIPT_FIELDS.has(field)) {
      throw new Error(`${where}: unknown field "${field}" (known: ${[...SCRIPT_FIELDS].join(', ')})`);
    }
    if (v === undefined) continue;
    switch (field) {
      case 'status':
        if (typeof v !== 'number') fail(field, 'must be a number (grpc status code)');
        out.status = v as number;
        break;
      case 'details':
        if (typeof v !== 'string' || !isEncodable(v)) fail(field, 'must be a well-formed string');
        out.details = v as string;
        break;
      case 'delayMs':
        if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > MAX_DELAY_MS) {
          fail(field, `must be a number between 0 and ${MAX_DELAY_MS}`);
        }
        out.delayMs = v as number;
        break;
      case 'pushback':
        if (typeof v !== 'string' || !LEGAL_VALUE.test(v)) fail(field, 'must be a string of printable ASCII');
        out.pushback = v as string;
        break;
      case 'trailers': {
        if (!isPlainObject(v)) fail(field, 'must be an object of string values');
        const trailers: Record<string, string> = {};
        for (const [key, text] of Object.entries(v as Record<string, unknown>)) {
          if (!LEGAL_KEY.test(key)) fail(`trailers.${key}`, 'is not a legal lowercase metadata key');
          if (FORBIDDEN_TRAILER_KEYS.has(key)) fail(`trailers.${key}`, 'is reserved');
          if (typeof text !== 'string') fail(`trailers.${key}`, 'must be a string');
          if (!key.endsWith('-bin') && !LEGAL_VALUE.test(text as string)) {
            fail(`trailers.${key}`, 'must be printable ASCII (use a -bin key for other bytes)');
          }
          trailers[key] = text as string;
        }
        out.trailers = trailers;
        break;
      }
      case 'responses':
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_RESPONSES) {
          fail(field, `must be an integer between 0 and ${MAX_RESPONSES}`);
        }
        out.responses = v as number;
        break;
      case 'sendHeaders':
      case 'failOnFirstMessage':
      case 'echo':
        if (typeof v !== 'boolean') fail(field, 'must be a boolean');
        out[field] = v as boolean;
        break;
    }
  }
  return out;
}

/**
 * Checks a per-call script (non-empty array of {@link AttemptScript}) and returns a copy. Throws an Error naming
 * the problem, prefixed by `where`.
 */
export function validateAttemptScripts(value: unknown, where = 'script'): AttemptScript[] {
  if (!Array.isArray(value)) {
    throw new Error(`${where}: must be an array of attempt scripts`);
  }
  if (value.length === 0) {
    throw new Error(`${where}: must contain at least one attempt script`);
  }
  return value.map((entry, i) => validateAttemptScript(entry, `${where}[${i}]`));
}

/** Parses and checks a JSON text holding a per-call script, as shipped in `x-flaky-script` metadata. */
export function parseAttemptScriptsJson(text: string, where = 'script'): AttemptScript[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`${where}: not valid JSON (${errorMessage(err)})`);
  }
  return validateAttemptScripts(parsed, where);
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---------------------------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------------------------

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
  scripts?: Record<string, AttemptScript[]>;
  /**
   * Consulted for attempts whose call id has no registered script; return `undefined` for a prompt success.
   * A hook that throws or returns an invalid script ends the attempt with INTERNAL.
   */
  onAttempt?: (info: FlakyAttemptInfo) => AttemptScript | undefined;
  /** Called once per attempt when it ends with a status or is seen cancelled (errors thrown are ignored). */
  onAttemptEnd?: (attempt: RecordedAttempt) => void;
  /** Passed to `new grpc.Server(...)`. */
  serverOptions?: grpc.ServerOptions;
}

type MutableAttempt = {
  -readonly [K in keyof RecordedAttempt]: RecordedAttempt[K];
};

type MetadataRecord = Record<string, string | Buffer | Array<string | Buffer>>;

interface TestResponse {
  payload: string;
  attempt: number;
  messagesReceived?: number;
  index?: number;
}

/** The parts of a grpc-js server call the server uses before dispatching on the method kind. */
interface SurfaceCall {
  readonly metadata: grpc.Metadata;
  readonly cancelled: boolean;
  sendMetadata(metadata: grpc.Metadata): void;
  on(event: 'cancelled', listener: () => void): unknown;
}

/** The writing side of a server-streaming or bidi call. */
interface ResponseStream {
  write(message: TestResponse): unknown;
  end(metadata?: grpc.Metadata): unknown;
  emit(event: 'error', status: Partial<grpc.StatusObject>): unknown;
}

interface FinalStatus {
  code: grpc.status;
  details: string;
  metadata: grpc.Metadata;
}

function metadataToRecord(metadata: grpc.Metadata): MetadataRecord {
  const out: MetadataRecord = {};
  for (const [key, values] of Object.entries(metadata.toJSON())) {
    if (values.length === 1) {
      out[key] = values[0]!;
    } else if (values.length > 1) {
      out[key] = [...values];
    }
  }
  return out;
}

function firstString(metadata: grpc.Metadata, key: string): string | undefined {
  for (const value of metadata.get(key)) {
    if (typeof value === 'string') return value;
  }
  return undefined;
}

function parsePreviousAttempts(metadata: grpc.Metadata): number | undefined {
  const raw = firstString(metadata, PREVIOUS_RPC_ATTEMPTS_METADATA_KEY);
  if (raw === undefined) return undefined;
  return /^\s*\d+\s*$/.test(raw) ? Number.parseInt(raw, 10) : Number.NaN;
}

function readMessage(message: unknown): { payload: string; blobBytes: number } {
  if (!isPlainObject(message)) return { payload: '', blobBytes: 0 };
  const payload = typeof message.payload === 'string' ? message.payload : '';
  const blob = message.blob;
  let blobBytes = 0;
  if (blob instanceof Uint8Array) blobBytes = blob.byteLength;
  else if (typeof blob === 'string') blobBytes = Buffer.byteLength(blob, 'base64');
  return { payload, blobBytes };
}

function normalizeStatus(code: number | undefined): grpc.status {
  if (code === undefined) return grpc.status.OK;
  return Number.isInteger(code) && code >= 0 && code <= 16 ? (code as grpc.status) : grpc.status.UNKNOWN;
}

/** Ends an attempt: `response` is only used for OK unary / client-streaming attempts. */
type Ender = (status: FinalStatus, response?: TestResponse) => void;

/** The state of one attempt while the server plays its script. */
class AttemptRun {
  readonly record: MutableAttempt;
  script: AttemptScript = {};
  /** Set when the attempt must fail before its script runs (bad script metadata, failing hook). */
  failure: { code: grpc.status; details: string } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private finished = false;

  constructor(
    record: MutableAttempt,
    private readonly onSettled: (run: AttemptRun) => void,
  ) {
    this.record = record;
  }

  /** True once the attempt ended with a status or was cancelled: nothing more may be sent. */
  get done(): boolean {
    return this.finished || this.record.cancelled;
  }

  cancel(): void {
    if (this.done) return;
    this.record.cancelled = true;
    this.clearTimer();
    this.settle();
  }

  clearTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** Runs `next` after the scripted delay (synchronously when there is none), unless cancelled meanwhile. */
  afterDelay(next: () => void): void {
    const delay = this.script.delayMs ?? 0;
    if (!(delay > 0)) {
      next();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.done) next();
    }, delay);
  }

  /** The status the script asks for (or the pre-script failure), with its trailers. */
  finalStatus(): FinalStatus {
    const metadata = new grpc.Metadata();
    if (this.failure) {
      return { ...this.failure, metadata };
    }
    const code = normalizeStatus(this.script.status);
    try {
      for (const [key, value] of Object.entries(this.script.trailers ?? {})) {
        metadata.add(key, key.endsWith('-bin') ? Buffer.from(value, 'utf8') : value);
      }
      if (this.script.pushback !== undefined) {
        metadata.set(PUSHBACK_TRAILER_KEY, this.script.pushback);
      }
    } catch (err) {
      return {
        code: grpc.status.INTERNAL,
        details: `flaky server: cannot send scripted trailers: ${errorMessage(err)}`,
        metadata: new grpc.Metadata(),
      };
    }
    const details =
      code === grpc.status.OK
        ? 'OK'
        : (this.script.details ?? `scripted failure (attempt ${this.record.attempt})`);
    return { code, details, metadata };
  }

  /** Ends the attempt with its final status through `end` (at most once). */
  finish(end: Ender, response?: (status: FinalStatus) => TestResponse): void {
    if (this.done) return;
    const status = this.finalStatus();
    this.finished = true;
    this.clearTimer();
    this.record.endedWith = status.code;
    this.record.endedDetails = status.details;
    this.settle();
    try {
      end(status, status.code === grpc.status.OK && response ? response(status) : undefined);
    } catch {
      // The call went away underneath us; nothing more to do.
    }
  }

  /** Writes one response message unless the attempt is over. */
  write(call: ResponseStream, message: TestResponse): void {
    if (this.done) return;
    this.record.responsesSent++;
    try {
      call.write(message);
    } catch {
      // ignore: the call was torn down
    }
  }

  private settle(): void {
    this.record.endedAt = Date.now();
    this.onSettled(this);
  }
}

/** Ends a unary or client-streaming call. */
function unaryEnder(callback: grpc.sendUnaryData<TestResponse>): Ender {
  return (status, response) => {
    if (status.code === grpc.status.OK) {
      callback(null, response ?? { payload: '', attempt: 0 }, status.metadata);
    } else {
      callback(status);
    }
  };
}

/** Ends a server-streaming or bidi call after the messages already written. */
function streamEnder(call: ResponseStream): Ender {
  return (status) => {
    if (status.code === grpc.status.OK) {
      call.end(status.metadata);
    } else {
      // grpc-js turns an 'error' event on a server stream into the call's status once pending writes are flushed.
      call.emit('error', status);
    }
  };
}

/**
 * A scripted gRPC server for testing retrying/hedging clients: every attempt of a call (identified by the
 * `x-flaky-call-id` request header) plays the next entry of that call's script. See `flaky-script.ts`.
 *
 * @example
 * const server = await FlakyServer.start();
 * server.script('c1', [{ status: grpc.status.UNAVAILABLE }, {}]);
 * // ... make a call with metadata x-flaky-call-id: c1 against server.address ...
 * expect(server.attempts('c1')).toHaveLength(2);
 * await server.stop();
 */
export class FlakyServer {
  /** The port the server is bound to. */
  readonly port: number;
  /** `host:port` to pass to a client (IPv6 hosts are bracketed). */
  readonly address: string;

  private readonly scripts = new Map<string, AttemptScript[]>();
  private readonly counters = new Map<string, number>();
  private records: MutableAttempt[] = [];
  private readonly running = new Set<AttemptRun>();
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly server: grpc.Server,
    port: number,
    host: string,
    private readonly options: FlakyServerOptions,
  ) {
    this.port = port;
    this.address = `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
  }

  /** Starts a server on `host:port` (default `127.0.0.1:0`) with insecure credentials. */
  static async start(options: FlakyServerOptions = {}): Promise<FlakyServer> {
    const host = options.host ?? '127.0.0.1';
    const requestedPort = options.port ?? 0;
    if (!Number.isInteger(requestedPort) || requestedPort < 0 || requestedPort > 65535) {
      throw new Error(`FlakyServer: invalid port ${requestedPort}`);
    }
    const initialScripts = Object.entries(options.scripts ?? {}).map(
      ([callId, script]) => [callId, validateAttemptScripts(script, `scripts["${callId}"]`)] as const,
    );
    const server = new grpc.Server(options.serverOptions);
    const bindHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
    const port = await new Promise<number>((resolve, reject) => {
      server.bindAsync(
        `${bindHost}:${requestedPort}`,
        grpc.ServerCredentials.createInsecure(),
        (err, bound) => {
          if (err) reject(new Error(`FlakyServer: cannot bind ${bindHost}:${requestedPort}: ${err.message}`));
          else resolve(bound);
        },
      );
    });
    const flaky = new FlakyServer(server, port, host, options);
    for (const [callId, script] of initialScripts) {
      flaky.scripts.set(callId, script);
    }
    server.addService(loadFlakyTestService().service, {
      Unary: flaky.handleUnary,
      ServerStream: flaky.handleServerStream,
      ClientStream: flaky.handleClientStream,
      Bidi: flaky.handleBidi,
    });
    return flaky;
  }

  /**
   * Registers (or replaces) the script of `callId`: attempt N plays `attempts[N-1]`, later attempts repeat the last
   * entry. Resets the call id's attempt counter and forgets its recorded attempts. Throws on an invalid script.
   */
  script(callId: string, attempts: AttemptScript[]): void {
    const checked = validateAttemptScripts(attempts, `script("${callId}")`);
    this.scripts.set(callId, checked);
    this.counters.delete(callId);
    this.records = this.records.filter((r) => r.callId !== callId);
  }

  /** Recorded attempts of `callId` in arrival order (live objects, updated while the attempts run). */
  attempts(callId: string): readonly RecordedAttempt[] {
    return this.records.filter((r) => r.callId === callId);
  }

  /** Every recorded attempt in arrival order. */
  allAttempts(): readonly RecordedAttempt[] {
    return [...this.records];
  }

  /** Forgets every script, attempt counter and record (attempts in progress keep running). */
  reset(): void {
    this.scripts.clear();
    this.counters.clear();
    this.records = [];
  }

  /** Number of attempts in progress (arrived, neither ended by the server nor cancelled). */
  activeCalls(): number {
    return this.running.size;
  }

  /** Resolves once `callId` has at least `count` recorded attempts; rejects after `timeoutMs`. */
  async waitForAttempts(
    callId: string,
    count: number,
    timeoutMs = 5000,
  ): Promise<readonly RecordedAttempt[]> {
    try {
      await this.waitFor(() => this.attempts(callId).length >= count, timeoutMs);
    } catch {
      throw new Error(
        `FlakyServer.waitForAttempts: call id "${callId}" has ${this.attempts(callId).length} of ${count} attempts after ${timeoutMs} ms`,
      );
    }
    return this.attempts(callId);
  }

  /**
   * Resolves once `predicate()` is true (checked now and then every few ms); rejects with an Error after
   * `timeoutMs`, or with the predicate's own error if it throws.
   */
  waitFor(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    return new Promise<void>((resolve, reject) => {
      const check = (): void => {
        let ok: boolean;
        try {
          ok = predicate();
        } catch (err) {
          reject(err);
          return;
        }
        if (ok) resolve();
        else if (Date.now() >= deadline) {
          reject(new Error(`FlakyServer.waitFor: condition not met within ${timeoutMs} ms`));
        } else setTimeout(check, 5);
      };
      check();
    });
  }

  /**
   * Stops the server: lets calls in progress finish for up to `graceMs` (default 200 ms), then cancels the rest.
   * Idempotent: later calls return the same promise.
   */
  stop(graceMs = 200): Promise<void> {
    if (this.stopping === undefined) {
      this.stopping = new Promise<void>((resolve) => {
        let settled = false;
        const done = (): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          this.dropTimers();
          resolve();
        };
        const timer = setTimeout(() => {
          this.server.forceShutdown();
          done();
        }, graceMs);
        this.server.tryShutdown(() => done());
      });
    }
    return this.stopping;
  }

  /** Stops the server at once, cancelling every call in progress. Idempotent. */
  forceStop(): void {
    if (this.stopping === undefined) {
      this.stopping = Promise.resolve();
    }
    this.server.forceShutdown();
    this.dropTimers();
  }

  private dropTimers(): void {
    for (const run of this.running) {
      run.clearTimer();
    }
  }

  // ------------------------------------------------------------------------------------------------------------
  // Attempt bookkeeping
  // ------------------------------------------------------------------------------------------------------------

  /** Records an arriving attempt, resolves its script and sends the early headers. */
  private begin(method: FlakyMethodName, call: SurfaceCall): AttemptRun {
    const metadata = call.metadata;
    const callId = firstString(metadata, CALL_ID_METADATA_KEY) ?? '';
    const attempt = (this.counters.get(callId) ?? 0) + 1;
    this.counters.set(callId, attempt);
    const record: MutableAttempt = {
      callId,
      attempt,
      method: flakyMethodPath(method),
      arrivedAt: Date.now(),
      previousRpcAttempts: parsePreviousAttempts(metadata),
      metadata: metadataToRecord(metadata),
      messages: [],
      blobBytes: 0,
      halfClosed: false,
      cancelled: false,
      endedWith: undefined,
      responsesSent: 0,
    };
    this.records.push(record);
    const run = new AttemptRun(record, (settled) => this.settled(settled));
    this.running.add(run);
    call.on('cancelled', () => run.cancel());
    if (call.cancelled) {
      run.cancel();
      return run;
    }
    this.resolveScript(run, metadata);
    if (run.script.sendHeaders && !run.failure) {
      const headers = new grpc.Metadata();
      headers.set(ATTEMPT_METADATA_KEY, String(attempt));
      try {
        call.sendMetadata(headers);
      } catch {
        // ignore: the call was torn down
      }
    }
    return run;
  }

  private resolveScript(run: AttemptRun, metadata: grpc.Metadata): void {
    const { callId, attempt, method } = run.record;
    const shipped = firstString(metadata, SCRIPT_METADATA_KEY);
    if (shipped !== undefined) {
      try {
        const parsed = parseAttemptScriptsJson(shipped, `${SCRIPT_METADATA_KEY} metadata`);
        if (!this.scripts.has(callId)) this.scripts.set(callId, parsed);
      } catch (err) {
        run.failure = { code: grpc.status.INVALID_ARGUMENT, details: errorMessage(err) };
        return;
      }
    }
    const registered = this.scripts.get(callId);
    if (registered !== undefined && registered.length > 0) {
      run.script = registered[Math.min(attempt, registered.length) - 1]!;
      return;
    }
    const hook = this.options.onAttempt;
    if (hook) {
      try {
        const answer: unknown = hook({ callId, attempt, method, metadata });
        if (answer !== undefined) run.script = validateAttemptScript(answer, 'onAttempt result');
      } catch (err) {
        run.failure = {
          code: grpc.status.INTERNAL,
          details: `flaky server onAttempt hook: ${errorMessage(err)}`,
        };
      }
    }
  }

  private settled(run: AttemptRun): void {
    this.running.delete(run);
    const hook = this.options.onAttemptEnd;
    if (hook) {
      try {
        hook(run.record);
      } catch {
        // a logging hook must not break the server
      }
    }
  }

  private static receive(run: AttemptRun, message: unknown): void {
    const { payload, blobBytes } = readMessage(message);
    run.record.messages.push(payload);
    run.record.blobBytes += blobBytes;
  }

  // ------------------------------------------------------------------------------------------------------------
  // Method handlers (arrow properties so they can be handed to addService)
  // ------------------------------------------------------------------------------------------------------------

  private readonly handleUnary: grpc.handleUnaryCall<unknown, TestResponse> = (call, callback) => {
    const end = unaryEnder(callback);
    const run = this.begin('Unary', call);
    FlakyServer.receive(run, call.request);
    run.record.halfClosed = true;
    const payload = readMessage(call.request).payload;
    const reply = (): void => run.finish(end, () => ({ payload, attempt: run.record.attempt }));
    if (run.failure) reply();
    else run.afterDelay(reply);
  };

  private readonly handleServerStream: grpc.handleServerStreamingCall<unknown, TestResponse> = (call) => {
    const end = streamEnder(call);
    const run = this.begin('ServerStream', call);
    FlakyServer.receive(run, call.request);
    run.record.halfClosed = true;
    if (run.failure) {
      run.finish(end);
      return;
    }
    const payload = readMessage(call.request).payload;
    run.afterDelay(() => {
      const ok = normalizeStatus(run.script.status) === grpc.status.OK;
      const count = run.script.responses ?? (ok ? 1 : 0);
      for (let index = 0; index < count; index++) {
        run.write(call, { payload, attempt: run.record.attempt, index });
      }
      run.finish(end);
    });
  };

  private readonly handleClientStream: grpc.handleClientStreamingCall<unknown, TestResponse> = (
    call,
    callback,
  ) => {
    const end = unaryEnder(callback);
    const run = this.begin('ClientStream', call);
    const respond = (): TestResponse => ({
      payload: run.record.messages.join(','),
      attempt: run.record.attempt,
      messagesReceived: run.record.messages.length,
    });
    let delayOver = false;
    const maybeFinish = (): void => {
      if (!delayOver || run.done) return;
      if (run.record.halfClosed || (run.script.failOnFirstMessage && run.record.messages.length > 0)) {
        run.finish(end, respond);
      }
    };
    FlakyServer.follow(call, run, end, maybeFinish, () => {
      delayOver = true;
    });
  };

  private readonly handleBidi: grpc.handleBidiStreamingCall<unknown, TestResponse> = (call) => {
    const end = streamEnder(call);
    const run = this.begin('Bidi', call);
    let delayOver = false;
    let answered = 0;
    const echoPending = (): void => {
      const { messages, attempt } = run.record;
      while (answered < messages.length && !run.done) {
        run.write(call, {
          payload: messages[answered]!,
          attempt,
          messagesReceived: messages.length,
          index: answered,
        });
        answered++;
      }
    };
    const finishAfterHalfClose = (): void => {
      const { messages, attempt } = run.record;
      if (run.script.echo) {
        echoPending();
      } else {
        const ok = normalizeStatus(run.script.status) === grpc.status.OK;
        const count = run.script.responses ?? (ok ? messages.length : 0);
        for (let index = 0; index < count; index++) {
          const payload = messages.length > 0 ? messages[index % messages.length]! : '';
          run.write(call, { payload, attempt, messagesReceived: messages.length, index });
        }
      }
      run.finish(end);
    };
    const progress = (): void => {
      if (!delayOver || run.done) return;
      if (run.script.failOnFirstMessage && run.record.messages.length > 0) {
        run.finish(end);
        return;
      }
      if (run.script.echo && !run.script.failOnFirstMessage) echoPending();
      if (run.record.halfClosed) finishAfterHalfClose();
    };
    FlakyServer.follow(call, run, end, progress, () => {
      delayOver = true;
    });
  };

  /**
   * Client streaming and bidi: record every client message and the half-close, calling `progress` after each;
   * after the scripted delay, `delayOver` then `progress` run once more.
   */
  private static follow(
    call: grpc.ServerReadableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, TestResponse>,
    run: AttemptRun,
    end: Ender,
    progress: () => void,
    delayOver: () => void,
  ): void {
    call.on('data', (message: unknown) => {
      FlakyServer.receive(run, message);
      progress();
    });
    call.on('end', () => {
      run.record.halfClosed = true;
      progress();
    });
    call.on('error', () => {
      // stream errors end up as cancellation or status; nothing to do here
    });
    if (run.failure) {
      run.finish(end);
      return;
    }
    run.afterDelay(() => {
      delayOver();
      progress();
    });
  }
}
