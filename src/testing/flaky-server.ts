/**
 * The flaky test server: a real grpc-js server of `grpc_retry_hedging.testing.v1.FlakyTest` whose every attempt
 * plays a script (see `flaky-script.ts`). Script checks, recording and the playing of one attempt live in their own
 * modules; this one binds the server, keeps the scripts and dispatches the four method kinds.
 */

import * as grpc from '@grpc/grpc-js';
import { errorMessage } from '../util/error-message.js';
import { formatHostPort } from '../util/host-port.js';
import { AttemptLog, firstString, readMessage } from './attempt-recording.js';
import { AttemptRun, type Ender, type OutgoingResponse, streamEnder, unaryEnder } from './attempt-run.js';
import {
  parseAttemptScriptsJson,
  validateAttemptScript,
  validateAttemptScripts,
} from './attempt-script-validation.js';
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
  type FlakyServerOptions,
} from './flaky-server-options.js';
import { type FlakyMethodName, flakyMethodPath, loadFlakyTestService } from './flaky-test-service.js';

/** The parts of a grpc-js server call the server uses before dispatching on the method kind. */
interface SurfaceCall {
  readonly metadata: grpc.Metadata;
  readonly cancelled: boolean;
  sendMetadata(metadata: grpc.Metadata): void;
  getDeadline(): grpc.Deadline;
  on(event: 'cancelled', listener: () => void): unknown;
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
  private readonly log: AttemptLog;
  private readonly running = new Set<AttemptRun>();
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly server: grpc.Server,
    port: number,
    private readonly options: CheckedFlakyServerOptions,
  ) {
    this.port = port;
    this.address = formatHostPort(options.host, port);
    this.log = new AttemptLog(options.requestIds);
  }

  /**
   * Starts a server on `host:port` (default `127.0.0.1:0`) with insecure credentials.
   *
   * @throws TypeError or RangeError naming an unknown or invalid option; Error when a script is invalid or the
   *   address cannot be bound.
   */
  static async start(options: FlakyServerOptions = {}): Promise<FlakyServer> {
    const checked = checkFlakyServerOptions(options);
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
    for (const [callId, script] of checked.scripts) {
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
  script(callId: string, attempts: AttemptScriptInput[]): void {
    const checked = validateAttemptScripts(attempts, `script("${callId}")`);
    this.scripts.set(callId, checked);
    this.log.forget(callId);
  }

  /** Recorded attempts of `callId` in arrival order (live objects, updated while the attempts run). */
  attempts(callId: string): readonly RecordedAttempt[] {
    return this.log.attempts(callId);
  }

  /** Every recorded attempt in arrival order. */
  allAttempts(): readonly RecordedAttempt[] {
    return this.log.all();
  }

  /** Forgets every script, attempt counter and record (attempts in progress keep running). */
  reset(): void {
    this.scripts.clear();
    this.log.clear();
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
        if (ok) {
          resolve();
        } else if (Date.now() >= deadline) {
          reject(new Error(`FlakyServer.waitFor: condition not met within ${timeoutMs} ms`));
        } else {
          setTimeout(check, 5);
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
    if (this.stopping === undefined) {
      this.stopping = new Promise<void>((resolve) => {
        let settled = false;
        const done = (): void => {
          if (settled) {
            return;
          }
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
    const record = this.log.begin(callId, flakyMethodPath(method), metadata, Date.now());
    const deadline = call.getDeadline();
    const deadlineMs = deadline instanceof Date ? deadline.getTime() : deadline;
    // What the client's grpc-timeout header told this server (grpc-js turns it into the call's deadline).
    if (Number.isFinite(deadlineMs)) {
      record.deadline = deadlineMs;
    }
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
    const { callId, attempt, method } = run.record;
    const shipped = firstString(metadata, SCRIPT_METADATA_KEY);
    if (shipped !== undefined) {
      try {
        const parsed = parseAttemptScriptsJson(shipped, `${SCRIPT_METADATA_KEY} metadata`);
        if (!this.scripts.has(callId)) {
          this.scripts.set(callId, parsed);
        }
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
    const hook = this.options.onAttemptEnd;
    if (hook) {
      try {
        hook(run.record);
      } catch {
        // a logging hook must not break the server
      }
    }
  }

  private receive(run: AttemptRun, message: unknown): void {
    this.log.receive(run.record, message);
  }

  // ------------------------------------------------------------------------------------------------------------
  // Method handlers (arrow properties so they can be handed to addService)
  // ------------------------------------------------------------------------------------------------------------

  private readonly handleUnary: grpc.handleUnaryCall<unknown, OutgoingResponse> = (call, callback) => {
    const end = unaryEnder(callback);
    const run = this.begin('Unary', call);
    this.receive(run, call.request);
    run.record.halfClosed = true;
    const payload = readMessage(call.request).payload;
    const reply = (): void => run.finish(end, () => ({ payload, attempt: run.record.attempt }));
    if (run.failure) {
      reply();
    } else {
      run.afterDelay(reply);
    }
  };

  private readonly handleServerStream: grpc.handleServerStreamingCall<unknown, OutgoingResponse> = (call) => {
    const end = streamEnder(call);
    const run = this.begin('ServerStream', call);
    this.receive(run, call.request);
    run.record.halfClosed = true;
    if (run.failure) {
      run.finish(end);
      return;
    }
    const payload = readMessage(call.request).payload;
    run.afterDelay(() => {
      const count = run.script.responses ?? (run.succeeds ? 1 : 0);
      for (let index = 0; index < count; index++) {
        run.write(call, { payload, attempt: run.record.attempt, index });
      }
      run.finish(end);
    });
  };

  private readonly handleClientStream: grpc.handleClientStreamingCall<unknown, OutgoingResponse> = (
    call,
    callback,
  ) => {
    const end = unaryEnder(callback);
    const run = this.begin('ClientStream', call);
    const respond = (): OutgoingResponse => ({
      payload: run.record.messages.join(','),
      attempt: run.record.attempt,
      messagesReceived: run.record.messages.length,
    });
    let delayOver = false;
    const maybeFinish = (): void => {
      if (!delayOver || run.done) {
        return;
      }
      if (run.record.halfClosed || (run.script.failOnFirstMessage && run.record.messages.length > 0)) {
        run.finish(end, respond);
      }
    };
    this.follow(call, run, end, maybeFinish, () => {
      delayOver = true;
    });
  };

  private readonly handleBidi: grpc.handleBidiStreamingCall<unknown, OutgoingResponse> = (call) => {
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
        const count = run.script.responses ?? (run.succeeds ? messages.length : 0);
        for (let index = 0; index < count; index++) {
          const payload = messages.length > 0 ? messages[index % messages.length]! : '';
          run.write(call, { payload, attempt, messagesReceived: messages.length, index });
        }
      }
      run.finish(end);
    };
    const progress = (): void => {
      if (!delayOver || run.done) {
        return;
      }
      if (run.script.failOnFirstMessage && run.record.messages.length > 0) {
        run.finish(end);
        return;
      }
      if (run.script.echo && !run.script.failOnFirstMessage) {
        echoPending();
      }
      if (run.record.halfClosed) {
        finishAfterHalfClose();
      }
    };
    this.follow(call, run, end, progress, () => {
      delayOver = true;
    });
  };

  /**
   * Client streaming and bidi: record every client message and the half-close, calling `progress` after each;
   * after the scripted delay, `delayOver` then `progress` run once more.
   */
  private follow(
    call: grpc.ServerReadableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, OutgoingResponse>,
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
