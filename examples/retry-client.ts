/**
 * Attach the retry interceptor to a client loaded with @grpc/proto-loader, with the policy from
 * examples/service-config.json, and make a call that fails twice before it succeeds.
 *
 * Run: npm run build && node --import tsx examples/retry-client.ts
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createRetryInterceptor, loadServiceConfig, type RetryEvent } from 'grpc-retry-hedging';
import { CALL_ID_METADATA_KEY, FlakyServer } from 'grpc-retry-hedging/testing';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export interface AttemptLine {
  attempt: number;
  atMs: number;
  status: string;
}

export interface RetryDemoResult {
  attempts: AttemptLine[];
  response: { payload: string; attempt: number } | undefined;
  finalStatus: string;
  retryDelayMs: number;
}

type Callback = (error: grpc.ServiceError | null, response?: { payload: string; attempt: number }) => void;
interface FlakyTestClient extends grpc.Client {
  Unary(request: { payload: string }, metadata: grpc.Metadata, callback: Callback): grpc.ClientUnaryCall;
}

export async function main(print: (line: string) => void = console.log): Promise<RetryDemoResult> {
  // 1. A flaky server to talk to (in your project: your own server).
  const server = await FlakyServer.start();

  // 2. The client, as users build it: proto-loader + the interceptor, policy from the service config file.
  const definition = protoLoader.loadSync(here('../protos/flaky_test.proto'), {
    longs: String,
    defaults: true,
  });
  const proto = grpc.loadPackageDefinition(definition) as unknown as {
    grpc_retry_hedging: { testing: { v1: { FlakyTest: grpc.ServiceClientConstructor } } };
  };
  const started = performance.now();
  const attempts: AttemptLine[] = [];
  let retryDelayMs = 0;
  const onEvent = (event: RetryEvent) => {
    const at = `  +${String(Math.round(performance.now() - started)).padStart(4)} ms  ${event.type.padEnd(15)}`;
    switch (event.type) {
      case 'call-start': {
        // deadline is ms since the epoch, Infinity for none (JSON.stringify would print Infinity as null)
        const deadline = Number.isFinite(event.deadline)
          ? new Date(event.deadline).toISOString()
          : 'Infinity';
        print(`${at} ${event.policy} policy, maxAttempts ${event.maxAttempts}, deadline ${deadline}`);
        break;
      }
      case 'attempt-start':
        print(`${at} attempt ${event.attempt} (${event.kind})`);
        break;
      case 'attempt-end': {
        const status = grpc.status[event.code] ?? String(event.code);
        attempts.push({ attempt: event.attempt, atMs: Math.round(performance.now() - started), status });
        print(`${at} attempt ${event.attempt}: ${status} after ${Math.round(event.durationMs)} ms`);
        break;
      }
      case 'retry-scheduled':
        print(`${at} attempt ${event.attempt} in ${Math.round(event.delayMs)} ms (${event.reason})`);
        break;
      case 'committed':
        print(`${at} to attempt ${event.attempt} (${event.reason})`);
        break;
      case 'call-end':
        retryDelayMs = event.retryDelayMs;
        print(
          `${at} ${grpc.status[event.code]} after ${event.attempts} attempts, ${Math.round(event.retryDelayMs)} ms waiting`,
        );
        break;
      default:
        print(`${at} ${JSON.stringify(event)}`);
    }
  };
  const interceptor = createRetryInterceptor(loadServiceConfig(here('service-config.json')), { onEvent });
  const Client = proto.grpc_retry_hedging.testing.v1.FlakyTest;
  const client = new Client(server.address, grpc.credentials.createInsecure(), {
    interceptors: [interceptor],
  }) as unknown as FlakyTestClient;

  // 3. Script the server: this call fails twice with UNAVAILABLE, then succeeds.
  server.script('demo-call', [{ status: grpc.status.UNAVAILABLE }, { status: grpc.status.UNAVAILABLE }, {}]);
  const metadata = new grpc.Metadata();
  metadata.set(CALL_ID_METADATA_KEY, 'demo-call');

  print('Unary call, scripted to fail twice, under retryPolicy {maxAttempts 4, initialBackoff 0.1s, x2}:');
  try {
    const response = await new Promise<{ payload: string; attempt: number } | undefined>(
      (resolve, reject) => {
        client.Unary({ payload: 'hello' }, metadata, (error, reply) =>
          error ? reject(error) : resolve(reply),
        );
      },
    );
    print(`  => OK: ${JSON.stringify(response)} after ${Math.round(retryDelayMs)} ms of backoff`);
    return { attempts, response, finalStatus: 'OK', retryDelayMs };
  } catch (error) {
    const status = grpc.status[(error as grpc.ServiceError).code] ?? 'UNKNOWN';
    print(`  => failed: ${status}`);
    return { attempts, response: undefined, finalStatus: status, retryDelayMs };
  } finally {
    client.close();
    await server.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
