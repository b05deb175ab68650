/**
 * A step-scripted `grpc.testing.TestService` server for go-java-retry-cases.e2e.test.ts.
 *
 * A case hands the server one list of steps. Every attempt of the case's call (found by its `x-retry-case` header)
 * runs the list from where the previous attempt stopped: a step that ends the attempt (`fail`) hands the rest of
 * the list to the next attempt, and an attempt that runs out of steps ends OK. So a script reads as one timeline of
 * what the server does across all attempts, and the test can check afterwards that the whole timeline ran.
 * A step whose expectation does not hold (another message, a missing header) ends the attempt with INTERNAL and is
 * recorded in `problems`. Implemented: EmptyCall (unary), StreamingInputCall (client streaming) and FullDuplexCall
 * (bidi). Listens on 127.0.0.1, port 0.
 */
import * as grpc from '@grpc/grpc-js';
import { bindLocal } from '../helpers/bind-local.js';
import {
  type Empty,
  PREVIOUS_ATTEMPTS_KEY,
  type StreamingInputCallRequest,
  type StreamingInputCallResponse,
  type StreamingOutputCallRequest,
  type StreamingOutputCallResponse,
  testServiceDefinition,
} from './interop-service.js';

/** The header naming the case a call belongs to. */
export const CASE_KEY = 'x-retry-case';
/** The trailer that asks the client to push back its retry. */
export const PUSHBACK_KEY = 'grpc-retry-pushback-ms';

export type Step =
  /** Read the next request message; its payload body must equal `body`. */
  | { readonly op: 'recv'; readonly body: Buffer }
  /** Read the client's half-close (no more messages). */
  | { readonly op: 'recv-end' }
  /** The attempt's `grpc-previous-rpc-attempts` must be `n` (absent when 0). */
  | { readonly op: 'attempts'; readonly n: number }
  /** Send response headers (with `x-scripted-header: sent`). */
  | { readonly op: 'headers' }
  /** Send a response message whose payload body is `body` (bidi only). */
  | { readonly op: 'send'; readonly body: Buffer }
  /** Add a `grpc-retry-pushback-ms` value to the trailers the attempt ends with. */
  | { readonly op: 'pushback'; readonly value: string }
  /** End the attempt OK now (the steps left are for the next attempt of the case). */
  | { readonly op: 'ok' }
  /** End the attempt with `code` and `details`. */
  | { readonly op: 'fail'; readonly code: number; readonly details: string }
  /** Wait until the client cancels the attempt; the attempt then ends there. */
  | { readonly op: 'hang' };

/** One attempt as the server ran it. */
export interface ServedAttempt {
  /** Every value of its `grpc-previous-rpc-attempts` header. */
  readonly previousAttempts: string[];
  /** Its request messages' payload bodies, in order. */
  readonly received: Buffer[];
  halfClosed: boolean;
  /** How it ended: the status the server sent, or `cancelled`. */
  end: number | 'cancelled' | undefined;
}

export interface CaseState {
  readonly steps: readonly Step[];
  /** Steps run so far, across attempts. */
  position: number;
  readonly attempts: ServedAttempt[];
  readonly problems: string[];
}

export interface RetryCaseServer {
  readonly address: string;
  /** Sets the steps of case `id` (a new case, or a fresh start of one). */
  script(id: string, steps: readonly Step[]): CaseState;
  stop(): Promise<void>;
}

const EOF = Symbol('eof');
const CANCELLED = Symbol('cancelled');
type Incoming = { payload?: { body?: Buffer } | null } | typeof EOF | typeof CANCELLED;

/** The request stream of a call, read one item at a time. */
class Inbox {
  private readonly items: Incoming[] = [];
  private waiter: ((item: Incoming) => void) | undefined;

  constructor(call: grpc.ServerReadableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>) {
    call.on('data', (message: Incoming) => this.push(message));
    // A reset also ends the request stream; only a live call's end is a half-close.
    call.on('end', () => setImmediate(() => this.push(call.cancelled ? CANCELLED : EOF)));
    call.on('cancelled', () => this.push(CANCELLED));
  }

  private push(item: Incoming): void {
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      waiter(item);
    } else {
      this.items.push(item);
    }
  }

  next(): Promise<Incoming> {
    const item = this.items.shift();
    if (item !== undefined) {
      return Promise.resolve(item);
    }
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }
}

type AnyCall =
  | grpc.ServerUnaryCall<unknown, unknown>
  | grpc.ServerReadableStream<unknown, unknown>
  | grpc.ServerDuplexStream<unknown, unknown>;

/** How an attempt's run of steps ended. */
type Outcome =
  | { kind: 'status'; code: number; details: string; trailers: grpc.Metadata }
  | { kind: 'cancelled' };

/** Calls `then` when the client cancels `call` (every kind of server call emits it). */
function onCancelled(call: AnyCall, then: () => void): void {
  (call as grpc.ServerUnaryCall<unknown, unknown>).on('cancelled', then);
}

function bodyOf(item: Incoming): Buffer | undefined {
  if (item === EOF || item === CANCELLED) {
    return undefined;
  }
  return Buffer.from(item.payload?.body ?? Buffer.alloc(0));
}

function describe(item: Incoming): string {
  if (item === EOF) return 'the half-close';
  if (item === CANCELLED) return 'a cancellation';
  return `a message of body ${bodyOf(item)?.toString('hex') || '(empty)'}`;
}

/** Runs the case's steps for one attempt, from where the last attempt stopped. */
async function runSteps(
  state: CaseState,
  call: AnyCall,
  attempt: ServedAttempt,
  inbox: Inbox | undefined,
): Promise<Outcome> {
  const trailers = new grpc.Metadata();
  const problem = (text: string): Outcome => {
    state.problems.push(`attempt ${state.attempts.indexOf(attempt) + 1}: ${text}`);
    return { kind: 'status', code: grpc.status.INTERNAL, details: `script: ${text}`, trailers };
  };
  while (state.position < state.steps.length) {
    const step = state.steps[state.position++] as Step;
    switch (step.op) {
      case 'recv':
      case 'recv-end': {
        const item = inbox ? await inbox.next() : EOF;
        if (item === CANCELLED) {
          return { kind: 'cancelled' };
        }
        if (step.op === 'recv-end') {
          if (item !== EOF) return problem(`expected the half-close, got ${describe(item)}`);
          attempt.halfClosed = true;
          break;
        }
        const body = bodyOf(item);
        if (!body?.equals(step.body)) {
          return problem(`expected a message of body ${step.body.toString('hex')}, got ${describe(item)}`);
        }
        attempt.received.push(body);
        break;
      }
      case 'attempts': {
        const want = step.n === 0 ? [] : [String(step.n)];
        if (JSON.stringify(attempt.previousAttempts) !== JSON.stringify(want)) {
          return problem(
            `expected ${PREVIOUS_ATTEMPTS_KEY} ${JSON.stringify(want)}, got ${JSON.stringify(attempt.previousAttempts)}`,
          );
        }
        break;
      }
      case 'headers': {
        const headers = new grpc.Metadata();
        headers.set('x-scripted-header', 'sent');
        call.sendMetadata(headers);
        break;
      }
      case 'send':
        (call as grpc.ServerDuplexStream<unknown, StreamingOutputCallResponse>).write({
          payload: { body: step.body },
        });
        break;
      case 'pushback':
        trailers.add(PUSHBACK_KEY, step.value);
        break;
      case 'ok':
        return { kind: 'status', code: grpc.status.OK, details: '', trailers };
      case 'fail':
        return { kind: 'status', code: step.code, details: step.details, trailers };
      case 'hang':
        if (!call.cancelled) {
          await new Promise<void>((resolve) => onCancelled(call, resolve));
        }
        return { kind: 'cancelled' };
    }
    if (call.cancelled) {
      return { kind: 'cancelled' };
    }
  }
  return { kind: 'status', code: grpc.status.OK, details: '', trailers };
}

function statusError(outcome: Extract<Outcome, { kind: 'status' }>): grpc.ServerErrorResponse {
  return Object.assign(new Error(outcome.details), {
    code: outcome.code,
    details: outcome.details,
    metadata: outcome.trailers,
  });
}

export async function startRetryCaseServer(options: grpc.ServerOptions = {}): Promise<RetryCaseServer> {
  const cases = new Map<string, CaseState>();

  /** The case and this attempt's record, or undefined (after ending the call) when the case is unknown. */
  function begin(call: AnyCall): { state: CaseState; attempt: ServedAttempt } | undefined {
    const id = String(call.metadata.get(CASE_KEY)[0] ?? '');
    const state = cases.get(id);
    if (!state) {
      return undefined;
    }
    const attempt: ServedAttempt = {
      previousAttempts: call.metadata.get(PREVIOUS_ATTEMPTS_KEY).map(String),
      received: [],
      halfClosed: false,
      end: undefined,
    };
    state.attempts.push(attempt);
    onCancelled(call, () => {
      attempt.end ??= 'cancelled';
    });
    return { state, attempt };
  }

  const unknownCase: grpc.ServerErrorResponse = Object.assign(new Error('no such case'), {
    code: grpc.status.FAILED_PRECONDITION,
    details: 'no such case',
  });

  const implementation: grpc.UntypedServiceImplementation = {
    EmptyCall(call: grpc.ServerUnaryCall<Empty, Empty>, callback: grpc.sendUnaryData<Empty>) {
      const started = begin(call);
      if (!started) {
        callback(unknownCase);
        return;
      }
      void runSteps(started.state, call, started.attempt, undefined).then((outcome) => {
        if (outcome.kind === 'cancelled') return;
        started.attempt.end ??= outcome.code;
        if (outcome.code === grpc.status.OK) callback(null, {}, outcome.trailers);
        else callback(statusError(outcome));
      });
    },
    StreamingInputCall(
      call: grpc.ServerReadableStream<StreamingInputCallRequest, StreamingInputCallResponse>,
      callback: grpc.sendUnaryData<StreamingInputCallResponse>,
    ) {
      const started = begin(call);
      if (!started) {
        callback(unknownCase);
        return;
      }
      const inbox = new Inbox(call);
      void runSteps(started.state, call, started.attempt, inbox).then((outcome) => {
        if (outcome.kind === 'cancelled') return;
        started.attempt.end ??= outcome.code;
        if (outcome.code === grpc.status.OK) {
          const size = started.attempt.received.reduce((sum, body) => sum + body.length, 0);
          callback(null, { aggregatedPayloadSize: size }, outcome.trailers);
        } else {
          callback(statusError(outcome));
        }
      });
    },
    FullDuplexCall(call: grpc.ServerDuplexStream<StreamingOutputCallRequest, StreamingOutputCallResponse>) {
      const started = begin(call);
      if (!started) {
        call.emit('error', unknownCase);
        return;
      }
      const inbox = new Inbox(call);
      void runSteps(started.state, call, started.attempt, inbox).then((outcome) => {
        if (outcome.kind === 'cancelled' || call.cancelled) return;
        started.attempt.end ??= outcome.code;
        if (outcome.code === grpc.status.OK) call.end(outcome.trailers);
        else call.emit('error', statusError(outcome));
      });
    },
  };

  const server = new grpc.Server(options);
  server.addService(testServiceDefinition, implementation);
  const port = await bindLocal(server);
  return {
    address: `127.0.0.1:${port}`,
    script(id, steps) {
      const state: CaseState = { steps, position: 0, attempts: [], problems: [] };
      cases.set(id, state);
      return state;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1000).unref();
      }),
  };
}
