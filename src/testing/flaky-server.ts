/**
 * The flaky test server: a real grpc-js server of `grpc_retry_hedging.testing.v1.FlakyTest`, and of any service the
 * user hands it, whose every attempt plays a script (see `flaky-script.ts`). Script checks, recording, the services
 * served and the playing of one attempt live in their own modules; this one binds the server, keeps the scripts
 * and dispatches the four method kinds.
 */

import * as grpc from '@grpc/grpc-js';
import { MAX_TIMER_MS } from '../shared/clock.js';
import { errorMessage } from '../util/error-message.js';
import { formatHostPort } from '../util/host-port.js';
import { describeValue, isThenable } from '../util/option-checks.js';
import { safeListener } from '../util/safe-listener.js';
import { warnOncePerProcess } from '../util/warn-once.js';
import { wrongTypeHint } from '../util/wrong-type-hint.js';
import { AttemptLog, firstString, measureRequests, readMessage } from './attempt-recording.js';
import {
  AttemptRun,
  type Ender,
  type OutgoingResponse,
  passSerialized,
  ResponseNotSendable,
  streamEnder,
  unaryEnder,
} from './attempt-run.js';
import {
  parseAttemptScriptsJson,
  validateAttemptScript,
  validateAttemptScripts,
} from './attempt-script-validation.js';
import {
  callIdHintsShown,
  callIdResemblanceMessage,
  methodAsCallIdMessage,
  methodLikeCallId,
  servedMethodNamedBy,
} from './call-id-resemblance.js';
import {
  ATTEMPT_METADATA_KEY,
  type AttemptScript,
  type AttemptScriptInput,
  CALL_ID_METADATA_KEY,
  type RecordedAttempt,
  SCRIPT_METADATA_KEY,
} from './flaky-script.js';
import {
  type CheckedFlakyServerOptions,
  checkFlakyServerOptions,
  checkRequestIdFieldServed,
  type FlakyServerOptions,
} from './flaky-server-options.js';
import { FLAKY_TEST_SERVICE, loadFlakyTestService } from './flaky-test-service.js';
import { realClearTimeout, realSetTimeout } from './real-timers.js';
import { checkScriptResponses, scriptResponseProblem } from './response-fields.js';
import { scriptFitProblem } from './script-method-fit.js';
import {
  resolveMethodPath,
  type ServedMethod,
  type ServedService,
  servicesIn,
  servicesInProtos,
} from './served-services.js';

/** Builds the message an OK attempt sends, from FlakyTest's echo of it. */
type Respond = (run: AttemptRun, echo: OutgoingResponse, index: number) => unknown;

/** The parts of a grpc-js server call the server uses before dispatching on the method kind. */
interface SurfaceCall {
  readonly metadata: grpc.Metadata;
  readonly cancelled: boolean;
  sendMetadata(metadata: grpc.Metadata): void;
  getDeadline(): grpc.Deadline;
  on(event: 'cancelled', listener: () => void): unknown;
}

/**
 * How long `waitFor` and `waitForAttempts` wait by default: under the 5 s a test may take in vitest and Jest, so
 * that a condition never met fails with this server's message (what it waited for, and how far it got) rather than
 * the test runner's timeout.
 */
const DEFAULT_WAIT_MS = 4000;

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

  /** Scripts the test registered, by call id: kept until `script` replaces them or `reset`. */
  private readonly scripts = new Map<string, AttemptScript[]>();
  /** Scripts shipped in metadata, by call id: forgotten with the call id's counter (`maxTrackedCallIds`). */
  private readonly shipped = new Map<string, AttemptScript[]>();
  private readonly methodScripts = new Map<string, AttemptScript[]>();
  private readonly served = new Set<string>();
  /** Call ids already warned of as resembling a method (once each per server). */
  private readonly hintedCallIds = new Set<string>();
  private readonly methods = new Map<string, ServedMethod>();
  private readonly log: AttemptLog;
  private readonly running = new Set<AttemptRun>();
  private stopping: Promise<void> | undefined;
  /** The `onAttemptEnd` option, its first error reported as a warning (once per server), none thrown. */
  private readonly onAttemptEnd: ((attempt: RecordedAttempt) => void) | undefined;

  private constructor(
    private readonly server: grpc.Server,
    port: number,
    private readonly options: CheckedFlakyServerOptions,
  ) {
    if (options === undefined) {
      // Private in TypeScript only: from JavaScript, `new FlakyServer()` would make a server that is not there.
      throw new TypeError(
        'FlakyServer: start one with `await FlakyServer.start(options)`; the constructor is not public',
      );
    }
    this.port = port;
    this.address = formatHostPort(options.host, port);
    this.log = new AttemptLog(options.requestIds, options.maxRecordedAttempts, {
      maxBytes: options.maxRecordedBytes,
      maxCallIds: options.maxTrackedCallIds,
      onForgetCallId: (callId) => this.shipped.delete(callId),
    });
    const hook = options.onAttemptEnd;
    this.onAttemptEnd = hook && safeListener(hook, 'FlakyServer: the onAttemptEnd option');
  }

  /**
   * Starts a server on `host:port` (default `127.0.0.1:0`) with insecure credentials.
   *
   * @throws TypeError or RangeError naming an unknown or invalid option; Error when a script is invalid or the
   *   address cannot be bound.
   */
  static async start(options: FlakyServerOptions = {}): Promise<FlakyServer> {
    const checked = checkFlakyServerOptions(options);
    const services = servedServices(checked);
    if (
      typeof options.requestIdField === 'string' &&
      (checked.proto.length > 0 || checked.services.length > 0)
    ) {
      // With only FlakyTest served, checkFlakyServerOptions checked the field against TestRequest already.
      checkRequestIdFieldServed(
        options.requestIdField,
        services.flatMap((service) => service.methods.map(({ method }) => method.request)),
      );
    }
    const server = new grpc.Server(checked.serverOptions);
    const bindAddress = formatHostPort(checked.host, checked.port);
    const port = await new Promise<number>((resolve, reject) => {
      server.bindAsync(bindAddress, grpc.ServerCredentials.createInsecure(), (err, bound) => {
        if (err) {
          reject(new Error(`FlakyServer: cannot bind ${bindAddress}: ${err.message}`));
        } else {
          resolve(bound);
        }
      });
    });
    const flaky = new FlakyServer(server, port, checked);
    try {
      for (const service of services) {
        flaky.serve(service);
      }
      const hint = !callIdHintsShown(options);
      for (const [callId, script] of checked.scripts) {
        flaky.checkCallId(
          callId,
          `start: scripts["${callId}"]`,
          (m) => `methodScripts: { "${m}": [...] }`,
          hint,
        );
        flaky.scripts.set(callId, script);
      }
      for (const [method, script] of checked.methodScripts) {
        flaky.setMethodScript(method, script, 'start: methodScripts', `methodScripts["${method}"]`);
      }
    } catch (err) {
      // A script naming no served method is found only once the services are added: nothing may stay bound (the
      // port would keep the process alive, and a CLI or test run would hang after the error).
      server.forceShutdown();
      throw err;
    }
    return flaky;
  }

  /**
   * Throws when a call id names a served method: a script under it would never play (see servedMethodNamedBy).
   * Warns (`GRPC_RETRY_HEDGING_CALL_ID`, once per call id) of one that only resembles a method or a service
   * (`GetOrder`, `Shop.GetOrder`): it may be meant as a call id, and stays one.
   */
  private checkCallId(callId: string, where: string, advice: (method: string) => string, hint = true): void {
    if (typeof callId !== 'string') {
      return;
    }
    const method = servedMethodNamedBy(callId, this.served);
    if (method !== undefined) {
      throw new TypeError(methodAsCallIdMessage(where, method, advice(method.slice(1))));
    }
    if (!hint || this.hintedCallIds.has(callId)) {
      return;
    }
    const resemblance = methodLikeCallId(callId, this.served);
    if (resemblance !== undefined) {
      this.hintedCallIds.add(callId);
      warnOncePerProcess(callIdResemblanceMessage(where, callId, resemblance), 'GRPC_RETRY_HEDGING_CALL_ID');
    }
  }

  /** Full paths (`/pkg.Service/Method`) of every method served, FlakyTest's included unless `serveFlakyTest` is false. */
  servedMethods(): readonly string[] {
    return [...this.served];
  }

  private serve(service: ServedService): void {
    const handlers: grpc.UntypedServiceImplementation = {};
    const respond = service.name === FLAKY_TEST_SERVICE ? flakyEcho : this.respondFor();
    for (const { key, method } of service.methods) {
      this.served.add(method.path);
      this.methods.set(method.path, method);
      handlers[key] = this.handlerFor(method, respond);
    }
    // Responses reach grpc-js serialized (each was checked before the attempt's outcome was recorded); requests are
    // measured as they are decoded (their wire size counts against maxRecordedBytes).
    const definition = Object.fromEntries(
      Object.entries(service.definition).map(([key, method]) => {
        const wrapped = { ...method };
        if (typeof method.responseSerialize === 'function') {
          wrapped.responseSerialize = passSerialized(method.responseSerialize);
        }
        if (typeof method.requestDeserialize === 'function') {
          wrapped.requestDeserialize = measureRequests(method.requestDeserialize);
        }
        return [key, wrapped];
      }),
    ) as grpc.ServiceDefinition;
    this.server.addService(definition, handlers);
  }

  private handlerFor(method: ServedMethod, respond: Respond): grpc.UntypedHandleCall {
    if (method.requestStream) {
      return method.responseStream
        ? this.handleBidi(method.path, respond)
        : this.handleClientStream(method.path, respond);
    }
    return method.responseStream
      ? this.handleServerStream(method.path, respond)
      : this.handleUnary(method.path, respond);
  }

  /** The response of an OK attempt of a user's service: the script's, the `respond` option's, or `{}`. */
  private respondFor(): Respond {
    const hook = this.options.respond;
    return (run, _echo, index) => {
      if (run.script.response !== undefined) {
        return run.script.response;
      }
      if (hook === undefined) {
        return {};
      }
      const { method, callId, attempt, requests } = run.record;
      const built: unknown = hook({ method, callId, attempt, requests, index });
      const problem = respondResultProblem(built, method);
      if (problem !== undefined) {
        throw new ResponseNotSendable(`flaky server respond hook: ${problem}`);
      }
      // A plain object is checked as a script's `response` is (a misspelled key would be dropped by the
      // serializer); a message class instance (grpc-tools) is the serializer's own to check.
      const served = this.methods.get(method);
      if (served !== undefined && isObjectLiteral(built)) {
        const problem = scriptResponseProblem({ response: built }, served);
        if (problem !== undefined) {
          throw new Error(`the respond option built ${problem}`);
        }
      }
      return built;
    };
  }

  /**
   * Registers (or replaces) the script of `callId`: attempt N plays `attempts[N-1]`, later attempts repeat the last
   * entry. Resets the call id's attempt counter and forgets its recorded attempts. Throws on an invalid script, or
   * a call id that is not a non-empty string.
   */
  script(callId: string, attempts: readonly AttemptScriptInput[]): void {
    checkCallIdArgument('script', callId);
    const checked = validateAttemptScripts(attempts, `script("${callId}")`);
    this.checkCallId(callId, `script("${callId}")`, (m) => `scriptMethod("${m}", attempts)`);
    this.scripts.set(callId, checked);
    this.shipped.delete(callId);
    this.log.forget(callId);
  }

  /**
   * Registers (or replaces) the script of `method` (`"helloworld.Greeter/SayHello"`, with or without the leading
   * `/`): what the attempts of that method play when their call id has no script. Attempt N (see
   * {@link RecordedAttempt.attempt}: per call id, else `grpc-previous-rpc-attempts` + 1) plays `attempts[N-1]`,
   * later attempts repeat the last entry. Throws on an invalid script, a method the server does not serve, or a
   * `response` with a key that is not a field of the method's response message (when its type is known: protos
   * and proto-loader definitions), naming the field it likely meant.
   */
  scriptMethod(method: string, attempts: readonly AttemptScriptInput[]): void {
    const where = `scriptMethod("${method}")`;
    this.setMethodScript(method, validateAttemptScripts(attempts, where), 'scriptMethod', where);
  }

  private setMethodScript(method: string, script: AttemptScript[], caller: string, where: string): void {
    const path = resolveMethodPath(method, this.served, caller);
    const served = this.methods.get(path);
    if (served !== undefined) {
      script.forEach((entry, i) => {
        const misfit = scriptFitProblem(entry, served);
        if (misfit !== undefined) {
          throw new TypeError(`${where}[${i}]: ${misfit}`);
        }
      });
      checkScriptResponses(script, served, where);
    }
    this.methodScripts.set(path, script);
  }

  /**
   * Recorded attempts of `callId` in arrival order (live objects, updated while the attempts run). `Request` types
   * their `requests`. Attempts sent without a call id are under `""`.
   */
  attempts<Request = unknown>(callId: string): readonly RecordedAttempt<Request>[] {
    if (typeof callId !== 'string') {
      throw new TypeError(
        `FlakyServer.attempts: callId must be a string ("" for attempts sent without one), got ${describeValue(callId)}${wrongTypeHint(callId, 'string')}`,
      );
    }
    return this.log.attempts(callId) as RecordedAttempt<Request>[];
  }

  /** Recorded attempts of `method` (`"helloworld.Greeter/SayHello"` or its full path) in arrival order. */
  attemptsOf<Request = unknown>(method: string): readonly RecordedAttempt<Request>[] {
    return this.log.attemptsOf(
      resolveMethodPath(method, this.served, 'attemptsOf'),
    ) as RecordedAttempt<Request>[];
  }

  /** Every recorded attempt in arrival order. `Request` types their `requests`. */
  allAttempts<Request = unknown>(): readonly RecordedAttempt<Request>[] {
    return this.log.all() as RecordedAttempt<Request>[];
  }

  /**
   * Forgets every script (per call id and per method), attempt counter and record (attempts in progress keep
   * running), so that one server can serve many tests.
   */
  reset(): void {
    this.scripts.clear();
    this.shipped.clear();
    this.methodScripts.clear();
    this.log.clear();
  }

  /** Number of attempts in progress (arrived, neither ended by the server nor cancelled). */
  activeAttempts(): number {
    return this.running.size;
  }

  /**
   * Resolves once `callId` has at least `count` recorded attempts; rejects after `timeoutMs` (default 4000 ms).
   * Rejects at once with a TypeError or RangeError when `count` is not an integer >= 1 or `timeoutMs` not a finite
   * number >= 0, and with an Error when the server keeps no attempt log (`maxRecordedAttempts: 0`). `Request` types
   * the requests, as in {@link attempts}.
   */
  async waitForAttempts<Request = unknown>(
    callId: string,
    count: number,
    timeoutMs = DEFAULT_WAIT_MS,
  ): Promise<readonly RecordedAttempt<Request>[]> {
    if (typeof callId !== 'string') {
      throw new TypeError(
        `FlakyServer.waitForAttempts: callId must be a string ("" for attempts sent without one), got ${describeValue(callId)}`,
      );
    }
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) {
      const Problem = typeof count === 'number' && !Number.isNaN(count) ? RangeError : TypeError;
      throw new Problem(
        `FlakyServer.waitForAttempts: count must be an integer >= 1, got ${describeValue(count)}${wrongTypeHint(count, 'number')}`,
      );
    }
    checkTimeout('waitForAttempts', timeoutMs);
    if (this.options.maxRecordedAttempts === 0) {
      // No attempt is ever recorded: waiting would only time out.
      throw new Error(
        'FlakyServer.waitForAttempts: the attempt log is off (maxRecordedAttempts 0), so no attempt is ever recorded; count attempts with onAttemptEnd, or start the server with maxRecordedAttempts > 0',
      );
    }
    try {
      await this.waitFor(() => this.attempts(callId).length >= count, timeoutMs);
    } catch {
      const stopped = this.stopping === undefined ? '' : ' (the server was stopped)';
      throw new Error(
        `FlakyServer.waitForAttempts: call id "${callId}" has ${this.attempts(callId).length} of ${count} attempts after ${timeoutMs} ms${stopped}`,
      );
    }
    return this.attempts(callId);
  }

  /**
   * Resolves once `predicate()` is true (checked now and then every few ms); rejects with an Error after
   * `timeoutMs` (default 4,000 ms), or with the predicate's own error if it throws. Rejects at once
   * with a TypeError or RangeError when `predicate` is not a function or `timeoutMs` not a finite number >= 0.
   */
  waitFor(predicate: () => boolean, timeoutMs = DEFAULT_WAIT_MS): Promise<void> {
    try {
      if (typeof predicate !== 'function') {
        throw new TypeError(
          `FlakyServer.waitFor: predicate must be a function returning a boolean, got ${describeValue(predicate)}`,
        );
      }
      checkTimeout('waitFor', timeoutMs);
    } catch (err) {
      return Promise.reject(err);
    }
    // Timed by a timer, not by `Date.now()`, which a test may freeze (`vi.setSystemTime`, mockdate).
    let timedOut = timeoutMs === 0;
    const giveUp = realSetTimeout(() => {
      timedOut = true;
    }, timeoutMs);
    return new Promise<void>((resolve, reject) => {
      const check = (): void => {
        let ok: unknown;
        try {
          ok = predicate();
        } catch (err) {
          realClearTimeout(giveUp);
          reject(err);
          return;
        }
        if (typeof ok !== 'boolean') {
          // An async predicate gives a Promise, which is truthy: the wait would end at once, whatever it says.
          const thenable = isThenable(ok);
          realClearTimeout(giveUp);
          reject(
            new TypeError(
              `FlakyServer.waitFor: predicate must return true or false, got ${thenable ? 'a Promise (an async function is not waited on: check a value the server records instead)' : describeValue(ok)}`,
            ),
          );
          return;
        }
        if (ok) {
          realClearTimeout(giveUp);
          resolve();
        } else if (timedOut) {
          reject(new Error(`FlakyServer.waitFor: condition not met within ${timeoutMs} ms`));
        } else {
          realSetTimeout(check, 5);
        }
      };
      check();
    });
  }

  /**
   * Stops the server: lets calls in progress finish for up to `graceMs` (default 200 ms), then cancels the rest.
   * Idempotent: later calls return the same promise.
   */
  stop(graceMs = 200): Promise<void> {
    if (typeof graceMs !== 'number' || !Number.isFinite(graceMs) || graceMs < 0 || graceMs > MAX_TIMER_MS) {
      const Problem = typeof graceMs === 'number' && !Number.isNaN(graceMs) ? RangeError : TypeError;
      return Promise.reject(
        new Problem(
          `FlakyServer.stop: graceMs must be a number of ms from 0 to ${MAX_TIMER_MS} (forceStop() cancels at once), got ${describeValue(graceMs)}${wrongTypeHint(graceMs, 'number')}`,
        ),
      );
    }
    if (this.stopping === undefined) {
      this.stopping = new Promise<void>((resolve) => {
        let settled = false;
        const done = (): void => {
          if (settled) {
            return;
          }
          settled = true;
          realClearTimeout(timer);
          this.dropTimers();
          resolve();
        };
        const timer = realSetTimeout(() => {
          this.cutOffRunning();
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
    this.cutOffRunning();
    this.server.forceShutdown();
    this.dropTimers();
  }

  /** Records the attempts still running as cut off by the stop, before the shutdown cancels them. */
  private cutOffRunning(): void {
    for (const run of [...this.running]) {
      run.cutOff();
    }
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
  private begin(method: string, call: SurfaceCall): AttemptRun {
    const metadata = call.metadata;
    const callId = firstString(metadata, CALL_ID_METADATA_KEY) ?? '';
    const record = this.log.begin(callId, method, metadata, Date.now(), this.scripts.has(callId));
    const deadline = call.getDeadline();
    const deadlineMs = deadline instanceof Date ? deadline.getTime() : deadline;
    // What the client's grpc-timeout header told this server (grpc-js turns it into the call's deadline).
    if (Number.isFinite(deadlineMs)) {
      record.deadline = deadlineMs;
    }
    const run = new AttemptRun(
      record,
      (settled) => this.settled(settled),
      this.methods.get(method)?.serialize,
    );
    this.running.add(run);
    call.on('cancelled', () => run.cancel());
    if (call.cancelled) {
      run.cancel();
      return run;
    }
    this.resolveScript(run, metadata);
    if (run.script.sendHeaders && !run.failure) {
      const headers = new grpc.Metadata();
      headers.set(ATTEMPT_METADATA_KEY, String(record.attempt));
      try {
        call.sendMetadata(headers);
      } catch {
        // ignore: the call was torn down
      }
    }
    return run;
  }

  private resolveScript(run: AttemptRun, metadata: grpc.Metadata): void {
    this.pickScript(run, metadata);
    if (run.failure) {
      return;
    }
    // A call-id script, a shipped one or the hook's is given before the method is known: its response is checked
    // against the method's message here (a method script was checked when it was given).
    const method = this.methods.get(run.record.method);
    const problem =
      method === undefined
        ? undefined
        : (scriptFitProblem(run.script, method) ?? scriptResponseProblem(run.script, method));
    if (problem !== undefined) {
      run.failure = {
        code: grpc.status.INTERNAL,
        details: `flaky server: script of attempt ${run.record.attempt}: ${problem}`,
      };
    }
  }

  private pickScript(run: AttemptRun, metadata: grpc.Metadata): void {
    const { callId, attempt, method } = run.record;
    const shipped = firstString(metadata, SCRIPT_METADATA_KEY);
    if (shipped !== undefined) {
      let parsed: AttemptScript[];
      try {
        parsed = parseAttemptScriptsJson(shipped, `${SCRIPT_METADATA_KEY} metadata`);
      } catch (err) {
        run.failure = { code: grpc.status.INVALID_ARGUMENT, details: errorMessage(err) };
        return;
      }
      if (callId === '') {
        // Without a call id the script is this attempt's alone (numbered by grpc-previous-rpc-attempts, as every
        // attempt of the call ships it again): kept nowhere, it cannot script another call.
        run.script = parsed[Math.min(attempt, parsed.length) - 1]!;
        return;
      }
      const existing = this.scripts.get(callId) ?? this.shipped.get(callId);
      if (existing === undefined) {
        this.shipped.set(callId, parsed);
      } else if (scriptText(existing) !== scriptText(parsed)) {
        run.failure = {
          code: grpc.status.INVALID_ARGUMENT,
          details:
            `${SCRIPT_METADATA_KEY} metadata: call id "${callId}" already has a different script (the first one ` +
            'shipped or registered stays until reset()); use a new call id for each call',
        };
        return;
      }
    }
    const registered = this.scripts.get(callId) ?? this.shipped.get(callId) ?? this.methodScripts.get(method);
    if (registered !== undefined && registered.length > 0) {
      run.script = registered[Math.min(attempt, registered.length) - 1]!;
      return;
    }
    const hook = this.options.onAttempt;
    if (hook) {
      try {
        const answer: unknown = hook({ callId, attempt, method, metadata });
        if (isThenable(answer)) {
          // An async hook: its Promise has no script fields, so it would read as "succeed" for every attempt. The
          // attempt reports it; a rejection of it must not also be an unhandled rejection.
          Promise.resolve(answer).catch(() => undefined);
          throw new Error(
            'returned a Promise; it must return the attempt script itself (or undefined), synchronously: script ahead with script() or scriptMethod() for what needs awaiting',
          );
        }
        if (answer !== undefined) {
          run.script = validateAttemptScript(answer, 'onAttempt result');
        }
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
    this.log.settle(run.record);
    // A logging hook must not break the server: its first error is a warning (GRPC_RETRY_HEDGING_LISTENER_ERROR).
    this.onAttemptEnd?.(run.record);
  }

  private receive(run: AttemptRun, message: unknown): void {
    this.log.receive(run.record, message);
  }

  // ------------------------------------------------------------------------------------------------------------
  // Method handlers, one factory per method kind
  // ------------------------------------------------------------------------------------------------------------

  private handleUnary(path: string, respond: Respond): grpc.handleUnaryCall<unknown, unknown> {
    return (call, callback) => {
      const end = unaryEnder(callback);
      const run = this.begin(path, call);
      this.receive(run, call.request);
      run.record.halfClosed = true;
      const payload = readMessage(call.request).payload;
      const reply = (): void =>
        run.finish(end, () => respond(run, { payload, attempt: run.record.attempt }, 0));
      if (run.failure) {
        reply();
      } else {
        run.afterDelay(reply);
      }
    };
  }

  private handleServerStream(
    path: string,
    respond: Respond,
  ): grpc.handleServerStreamingCall<unknown, unknown> {
    return (call) => {
      const end = streamEnder(call);
      const run = this.begin(path, call);
      this.receive(run, call.request);
      run.record.halfClosed = true;
      if (run.failure) {
        run.finish(end);
        return;
      }
      const payload = readMessage(call.request).payload;
      run.afterDelay(() => {
        const count = run.script.responses ?? (run.succeeds ? 1 : 0);
        let next = 0;
        // Each response as the stream takes it (grpc-js's backpressure), then the status behind the last one.
        const writeRest = (): void => {
          for (; next < count && !run.done && !run.failure; next++) {
            if (!run.canWrite(call, writeRest)) {
              return;
            }
            const index = next;
            run.write(call, () => respond(run, { payload, attempt: run.record.attempt, index }, index));
          }
          run.finish(end);
        };
        writeRest();
      });
    };
  }

  private handleClientStream(
    path: string,
    respond: Respond,
  ): grpc.handleClientStreamingCall<unknown, unknown> {
    return (call, callback) => {
      const end = unaryEnder(callback);
      const run = this.begin(path, call);
      const response = (): unknown =>
        respond(
          run,
          {
            payload: run.record.messages.join(','),
            attempt: run.record.attempt,
            messagesReceived: run.record.messages.length,
          },
          0,
        );
      let delayOver = false;
      const maybeFinish = (): void => {
        if (!delayOver || run.done) {
          return;
        }
        if (
          run.record.halfClosed ||
          run.script.endBeforeHalfClose ||
          (run.script.failOnFirstMessage && run.record.messages.length > 0)
        ) {
          run.finish(end, response);
        }
      };
      this.follow(call, run, end, maybeFinish, () => {
        delayOver = true;
      });
    };
  }

  private handleBidi(path: string, respond: Respond): grpc.handleBidiStreamingCall<unknown, unknown> {
    return (call) => {
      const end = streamEnder(call);
      const run = this.begin(path, call);
      let delayOver = false;
      /** Echo: client messages answered. */
      let answered = 0;
      /** Without echo: responses written after the half-close. */
      let written = 0;
      /**
       * A response waits for the stream to drain (grpc-js's backpressure): what arrives meanwhile is recorded, and
       * answered in order once the writes go on.
       */
      let waiting = false;
      const resume = (): void => {
        waiting = false;
        progress();
      };
      const writable = (): boolean => {
        if (run.canWrite(call, resume)) {
          return true;
        }
        waiting = true;
        return false;
      };
      /** Answers the messages not answered yet; false when one waits for the stream to drain. */
      const echoPending = (): boolean => {
        const { messages, attempt } = run.record;
        while (answered < messages.length && !run.done && !run.failure) {
          if (!writable()) {
            return false;
          }
          const index = answered;
          const echo = { payload: messages[index]!, attempt, messagesReceived: messages.length, index };
          run.write(call, () => respond(run, echo, index));
          answered++;
        }
        return true;
      };
      const finishAfterHalfClose = (): void => {
        const { messages, attempt } = run.record;
        if (run.script.echo) {
          if (!echoPending()) {
            return;
          }
        } else {
          const count = run.script.responses ?? (run.succeeds ? messages.length : 0);
          while (written < count && !run.done && !run.failure) {
            if (!writable()) {
              return;
            }
            const index = written++;
            const payload = messages.length > 0 ? messages[index % messages.length]! : '';
            const echo = { payload, attempt, messagesReceived: messages.length, index };
            run.write(call, () => respond(run, echo, index));
          }
        }
        run.finish(end);
      };
      const progress = (): void => {
        if (!delayOver || run.done || waiting) {
          return;
        }
        if (run.script.failOnFirstMessage && run.record.messages.length > 0) {
          run.finish(end);
          return;
        }
        if (run.script.echo && !run.script.failOnFirstMessage && !echoPending()) {
          return;
        }
        if (run.record.halfClosed || run.failure || run.script.endBeforeHalfClose) {
          finishAfterHalfClose();
        }
      };
      this.follow(call, run, end, progress, () => {
        delayOver = true;
      });
    };
  }

  /**
   * Client streaming and bidi: record every client message and the half-close, calling `progress` after each;
   * after the scripted delay, `delayOver` then `progress` run once more.
   */
  private follow(
    call: grpc.ServerReadableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>,
    run: AttemptRun,
    end: Ender,
    progress: () => void,
    delayOver: () => void,
  ): void {
    call.on('data', (message: unknown) => {
      this.receive(run, message);
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

/** A call id given to `method`: a non-empty string (the `x-flaky-call-id` a client sends), else a TypeError. */
function checkCallIdArgument(method: string, callId: unknown): void {
  if (typeof callId !== 'string' || callId === '') {
    throw new TypeError(
      `FlakyServer.${method}: callId must be a non-empty string (the ${CALL_ID_METADATA_KEY} metadata your client sends), got ${describeValue(callId)}${wrongTypeHint(callId, 'string')}`,
    );
  }
}

/** The timeout of `waitFor` and `waitForAttempts`: undefined (the default) or a finite number >= 0. */
function checkTimeout(method: string, timeoutMs: unknown): void {
  if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs)) {
    throw new TypeError(
      `FlakyServer.${method}: timeoutMs must be a finite number of ms >= 0, got ${describeValue(timeoutMs)}${wrongTypeHint(timeoutMs, 'number')}`,
    );
  }
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0) {
    throw new RangeError(
      `FlakyServer.${method}: timeoutMs must be a finite number of ms >= 0, got ${describeValue(timeoutMs)}`,
    );
  }
}

/** FlakyTest's own answer: the script's `response` if it has one, else the echo. */
const flakyEcho: Respond = (run, echo) => run.script.response ?? echo;

/**
 * FlakyTest first (unless `serveFlakyTest` is false), then the user's services (a service named twice is served
 * once, the first time).
 * @internal exported for the CLI, which checks a script file against them before it starts the server
 */
export function servedServices(
  options: Pick<
    CheckedFlakyServerOptions,
    'proto' | 'includeDirs' | 'keepCase' | 'services' | 'serveFlakyTest'
  >,
): ServedService[] {
  const all = [
    ...(options.serveFlakyTest ? servicesIn(loadFlakyTestService(), 'FlakyTest') : []),
    ...servicesInProtos(options.proto, options.includeDirs, options.keepCase),
    ...options.services.flatMap((source, i) => servicesIn(source, `option "services"[${i}]`)),
  ];
  const byName = new Map<string, ServedService>();
  for (const service of all) {
    if (!byName.has(service.name)) {
      byName.set(service.name, service);
    }
  }
  return [...byName.values()];
}

/**
 * What is wrong with what the `respond` hook returned for an attempt of `method`, or undefined when it is an object
 * (a plain one, or an instance of a message class). A Promise (an `async` hook) would be serialized as an empty
 * message, as would `undefined` (a hook that forgets to `return`), `null`, a string or an array: each is refused,
 * for every method kind alike.
 */
function respondResultProblem(built: unknown, method: string): string | undefined {
  if (isThenable(built)) {
    // The attempt reports the Promise; a rejection of it must not also be an unhandled rejection.
    Promise.resolve(built).catch(() => undefined);
    return `returned a Promise for ${method}; it must return the response message itself, synchronously: build what needs awaiting before the call, or give it as the script's response with script() or scriptMethod()`;
  }
  if (typeof built === 'object' && built !== null && !Array.isArray(built)) {
    return undefined;
  }
  const got =
    built === undefined || built === null
      ? String(built)
      : Array.isArray(built)
        ? 'an array'
        : typeof built === 'function' || typeof built === 'symbol'
          ? `a ${typeof built}`
          : `a ${typeof built}, ${describeValue(built)}`;
  return `returned ${got} for ${method}; it must return the response message, an object (return {} for an empty message)`;
}

/** An object written as a literal (or from JSON), not an instance of a message class. */
function isObjectLiteral(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A script's JSON with every object's keys in one order: two clients shipping one script, each serializing it its
 * own way (keys in another order), ship the same script.
 */
function scriptText(scripts: readonly AttemptScript[]): string {
  return JSON.stringify(scripts, (_key, value: unknown) =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
}
