/**
 * Hedged low-latency reads: the same reads against a long-tail server (most attempts fast, a few very slow),
 * without and with a hedgingPolicy. Prints p50/p99 and the extra load hedging costs: after a warm-up, the median of
 * a few rounds, so that a cold start (JIT, first connections, a GC pause) does not decide the result.
 *
 * Run: npm run build && node --import tsx examples/hedged-reads.ts
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { createRetryInterceptor } from 'grpc-retry-hedging';
import { FlakyServer, loadFlakyTestService, seededRandom } from 'grpc-retry-hedging/testing';

export interface ReadStats {
  p50: number;
  p99: number;
  attemptsPerCall: number;
}

export interface HedgedReadsResult {
  plain: ReadStats;
  hedged: ReadStats;
}

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? Number.NaN;
}

type Unary = (request: { payload: string }, callback: (error: grpc.ServiceError | null) => void) => void;

async function measure(client: grpc.Client, calls: number, concurrency: number): Promise<number[]> {
  const unary = (client as unknown as { Unary: Unary }).Unary.bind(client);
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < calls) {
      next += 1;
      const started = performance.now();
      await new Promise<void>((resolve, reject) =>
        unary({ payload: 'read' }, (error) => (error ? reject(error) : resolve())),
      );
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return latencies.sort((a, b) => a - b);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

function medianStats(rounds: ReadStats[]): ReadStats {
  return {
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    attemptsPerCall: median(rounds.map((r) => r.attemptsPerCall)),
  };
}

export async function main(
  options: {
    calls?: number;
    concurrency?: number;
    slowFraction?: number;
    rounds?: number;
    print?: (line: string) => void;
  } = {},
): Promise<HedgedReadsResult> {
  const { calls = 1000, concurrency = 4, slowFraction = 0.05, rounds = 3, print = console.log } = options;
  const random = seededRandom(42);
  // Each attempt independently: usually ~2 ms, sometimes 200 ms more.
  const server = await FlakyServer.start({
    onAttempt: () => ({ delayMs: random() < slowFraction ? 202 : 2 }),
  });
  const Service = loadFlakyTestService();
  const hedging = createRetryInterceptor({
    methodConfig: [
      {
        name: [{ service: 'grpc_retry_hedging.testing.v1.FlakyTest', method: 'Unary' }],
        hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.02s', nonFatalStatusCodes: ['UNAVAILABLE'] },
      },
    ],
  });
  const plainClient = new Service(server.address, grpc.credentials.createInsecure());
  const hedgedClient = new Service(server.address, grpc.credentials.createInsecure(), {
    interceptors: [hedging],
  });
  try {
    const stats = async (client: grpc.Client): Promise<ReadStats> => {
      const before = server.allAttempts().length;
      const latencies = await measure(client, calls, concurrency);
      return {
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        attemptsPerCall: (server.allAttempts().length - before) / calls,
      };
    };
    const row = (name: string, s: ReadStats) =>
      `${name.padEnd(12)} p50 ${s.p50.toFixed(1).padStart(6)} ms   p99 ${s.p99.toFixed(1).padStart(6)} ms   attempts/call ${s.attemptsPerCall.toFixed(3)}`;
    print(
      `${calls} reads, ${slowFraction * 100}% of attempts 200 ms slower; hedgingDelay 20 ms, maxAttempts 2` +
        ` (median of ${rounds} rounds, after a warm-up)`,
    );
    // Warm up both connections and the code paths, then alternate the two clients round by round.
    await measure(plainClient, 100, concurrency);
    await measure(hedgedClient, 100, concurrency);
    const plainRounds: ReadStats[] = [];
    const hedgedRounds: ReadStats[] = [];
    for (let round = 0; round < rounds; round++) {
      plainRounds.push(await stats(plainClient));
      hedgedRounds.push(await stats(hedgedClient));
      const [p, h] = [plainRounds.at(-1), hedgedRounds.at(-1)] as [ReadStats, ReadStats];
      print(
        `  round ${round + 1} of ${rounds}: p99 ${p.p99.toFixed(1)} ms without hedging, ${h.p99.toFixed(1)} ms with`,
      );
    }
    const plain = medianStats(plainRounds);
    const hedged = medianStats(hedgedRounds);
    print(row('no hedging', plain));
    print(row('hedging', hedged));
    print(`extra load: +${((hedged.attemptsPerCall - 1) * 100).toFixed(1)}% attempts`);
    return { plain, hedged };
  } finally {
    plainClient.close();
    hedgedClient.close();
    await server.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
