/** Helpers of the robustness tests (in addition to test/helpers/harness.ts). */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import type * as grpc from '@grpc/grpc-js';
import type { RetryEvent } from '../../src/retry/events.js';
import { createRetryInterceptor, type RetryInterceptorOptions } from '../../src/retry/retry-interceptor.js';
import { loadFlakyTestService } from '../../src/testing/index.js';
import { seededRandom } from '../../src/testing/seeded-random.js';
import { type FlakyClient, testClient } from '../helpers/harness.js';
import type { Behaviour, ChildCommand, ChildMessage } from './fixtures/flaky-child.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const childScript = fileURLToPath(new URL('./fixtures/flaky-child.ts', import.meta.url));

/** Integer in [min, max]. */
export function randomInt(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

/** Polls `predicate` every few ms; rejects with `what` after `timeoutMs`. */
export async function waitUntil(
  predicate: () => boolean,
  timeoutMs: number,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Rejects after `ms` unless `promise` settles first (so a hung call fails the test instead of the runner). */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Number of active resources of one kind ('Timeout', 'TCPSocketWrap', ...). */
export function activeResources(kind: string): number {
  return process.getActiveResourcesInfo().filter((r) => r === kind).length;
}

/** `global.gc`, or one obtained through V8 flags when node was started without --expose-gc; undefined if neither. */
export function getGc(): (() => void) | undefined {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (typeof existing === 'function') return existing;
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

export interface RetryClient {
  client: FlakyClient;
  events: RetryEvent[];
  close(): void;
}

const _Service = loadFlakyTestService();

/**
 * A FlakyTest client with the retry interceptor and its own subchannel pool (so that one client's failed
 * connection attempts do not put another client's channel into reconnect backoff). grpc-js's own retries off, as
 * in the e2e harness, so every attempt is one the interceptor made.
 */
export function retryClient(
  address: string,
  config: object,
  options: RetryInterceptorOptions = {},
  channelOptions: grpc.ChannelOptions = {},
): RetryClient {
  const events: RetryEvent[] = [];
  const interceptor = createRetryInterceptor(config, { onEvent: (e) => events.push(e), ...options });
  const client = testClient(address, [interceptor], {
    'grpc.use_local_subchannel_pool': 1,
    ...channelOptions,
  });
  return { client, events, close: () => client.close() };
}

/** Groups call-end events by the interceptor's call number. */
/**
 * The call-end events of one interceptor's calls, by call number within that interceptor (1, 2, ... in the order
 * the calls started; call ids themselves are unique per process).
 */
export function callEnds(events: RetryEvent[]): Map<number, Extract<RetryEvent, { type: 'call-end' }>[]> {
  const ordinal = new Map<number, number>();
  const ends = new Map<number, Extract<RetryEvent, { type: 'call-end' }>[]>();
  for (const e of events) {
    if (!ordinal.has(e.callId)) ordinal.set(e.callId, ordinal.size + 1);
    if (e.type !== 'call-end') continue;
    const n = ordinal.get(e.callId) as number;
    const list = ends.get(n) ?? [];
    list.push(e);
    ends.set(n, list);
  }
  return ends;
}

export interface ChildAttempt {
  callId: string;
  attempt: number;
  method: string;
}

/** A FlakyServer in a child process (test/robustness/fixtures/flaky-child.ts), started with `node --import tsx`. */
export class ChildServer {
  readonly attempts: ChildAttempt[] = [];
  private exited = false;
  private readonly exit: Promise<void>;
  private readonly listeners: Array<(message: ChildMessage) => void> = [];
  private stdout = '';

  private constructor(readonly child: ChildProcess) {
    this.exit = new Promise((resolve) => {
      child.once('exit', () => {
        this.exited = true;
        resolve();
      });
    });
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'attempt') {
        this.attempts.push({ callId: message.callId, attempt: message.attempt, method: message.method });
      }
      for (const listener of this.listeners.slice()) listener(message);
    });
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      this.stdout += chunk;
    });
  }

  /** Spawns the child and waits until it has loaded (not yet bound). */
  static async spawn(timeoutMs = 20_000): Promise<ChildServer> {
    const child = spawn(process.execPath, ['--import', 'tsx', childScript], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    const server = new ChildServer(child);
    await within(
      server.next((m) => m.type === 'loaded'),
      timeoutMs,
      'flaky child start',
    );
    return server;
  }

  private next(match: (m: ChildMessage) => boolean): Promise<ChildMessage> {
    return new Promise((resolve, reject) => {
      const listener = (message: ChildMessage): void => {
        if (message.type === 'error') {
          this.listeners.splice(this.listeners.indexOf(listener), 1);
          reject(new Error(`flaky child: ${message.message}`));
        } else if (match(message)) {
          this.listeners.splice(this.listeners.indexOf(listener), 1);
          resolve(message);
        }
      };
      this.listeners.push(listener);
      void this.exit.then(() => reject(new Error('flaky child exited')));
    });
  }

  private send(command: ChildCommand): void {
    this.child.send(command);
  }

  /** Binds 127.0.0.1:`port` (0: any) and resolves with the port the child printed. */
  async bind(port: number, behaviour: Behaviour): Promise<number> {
    const listening = this.next((m) => m.type === 'listening');
    this.send({ type: 'bind', port, behaviour });
    await within(listening, 10_000, 'flaky child bind');
    await waitUntil(() => /PORT (\d+)/.test(this.stdout), 5000, 'the child to print its port');
    return Number(/PORT (\d+)/.exec(this.stdout)![1]);
  }

  attemptsOf(callId: string): ChildAttempt[] {
    return this.attempts.filter((a) => a.callId === callId);
  }

  async stats(): Promise<{ attempts: number; failed: number }> {
    const reply = this.next((m) => m.type === 'stats');
    this.send({ type: 'stats' });
    const message = await within(reply, 5000, 'flaky child stats');
    if (message.type !== 'stats') throw new Error('unexpected reply');
    return { attempts: message.attempts, failed: message.failed };
  }

  /** kill -9, and wait until the process is gone (its port is free then). */
  async kill9(): Promise<void> {
    if (!this.exited) this.child.kill('SIGKILL');
    await this.exit;
  }

  /** Ends the child whatever its state (for afterAll). */
  async stop(): Promise<void> {
    if (!this.exited) this.child.kill('SIGKILL');
    await this.exit;
  }
}

/**
 * A bare HTTP/2 server speaking just enough gRPC to answer any call: attempt n (counted per server) gets
 * `answers[n-1]` (the last one repeats): either a Trailers-Only error with raw header values, sent as given (so a
 * test can send what a grpc-js server would refuse to), or OK with one empty message.
 */
export interface RawAnswer {
  status: number;
  /** Extra response header fields of a Trailers-Only error; an array sends the field once per value. */
  headers?: Record<string, string | string[]>;
}

export interface RawGrpcServer {
  readonly address: string;
  readonly requests: number;
  answer(answers: RawAnswer[]): void;
  close(): Promise<void>;
}

export async function startRawGrpcServer(): Promise<RawGrpcServer> {
  const http2 = await import('node:http2');
  let answers: RawAnswer[] = [{ status: 0 }];
  let requests = 0;
  const server = http2.createServer();
  server.on('stream', (stream) => {
    requests += 1;
    stream.on('error', () => {});
    const answer = answers[Math.min(requests, answers.length) - 1]!;
    if (answer.status === 0) {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.alloc(5)); // one empty, uncompressed message
    } else {
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': String(answer.status),
          'grpc-message': 'raw',
          ...answer.headers,
        },
        { endStream: true },
      );
    }
    // Drain the request so the client's writes complete.
    stream.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    answer(next) {
      answers = next;
      requests = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
  };
}

export { seededRandom };
