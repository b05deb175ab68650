/**
 * Client CPU per call, every call succeeding: the same number of calls through each variant in turn, against
 * bench/overhead-server.ts in its own process, the variants' order reversed every other round. Where
 * bench/overhead.ts times throughput over fixed durations, this counts the CPU time (`process.cpuUsage`) a fixed
 * count of calls takes, which reads smaller differences on a shared machine.
 *
 *   npm run bench:cpu                  (options: -- --rounds=8 --unary-calls=20000 --upload-calls=200)
 *   npm run bench:cpu -- --baseline=/path/to/other/build/dist/index.js
 *                                      (adds another build's interceptor, measured side by side)
 *
 * Cases: unary at concurrency 32 (a small protobuf request), and client-streaming uploads at concurrency 4, each
 * 64 protobuf messages of 16 KiB (1 MiB, inside the default replay buffer, so every message is held until the
 * answer) written by backpressure.
 */
import * as grpc from '@grpc/grpc-js';
import { createRetryInterceptor } from 'grpc-retry-hedging';
import { POSITIVE_COUNT, type Script, scriptArgs } from './lib/args.js';
import { baselinePath, loadBaseline } from './lib/baseline-build.js';
import { spawnBenchServer } from './lib/child-server.js';
import { machineInfo, machineLine } from './lib/env.js';
import { type BenchClient, clientStream, createClient, unary, waitForReady } from './lib/grpc-calls.js';
import { retryConfig } from './lib/overhead-policy.js';
import { median } from './lib/stats.js';
import { markdownTable } from './lib/table.js';

const SCRIPT: Script = {
  name: 'bench:cpu',
  about:
    "Client CPU per call of bare grpc-js, its built-in retries and this package's interceptor, the same calls " +
    'through each in turn. Writes no file.',
};
const args = scriptArgs(
  SCRIPT,
  { rounds: 8, unaryCalls: 20_000, uploadCalls: 200, uploadMessages: 64, uploadMessageBytes: 16_384 },
  {
    others: ['baseline'],
    limits: {
      rounds: POSITIVE_COUNT,
      unaryCalls: POSITIVE_COUNT,
      uploadCalls: POSITIVE_COUNT,
      uploadMessages: POSITIVE_COUNT,
      uploadMessageBytes: POSITIVE_COUNT,
    },
    notes: { baseline: "another build's dist/index.js, measured side by side" },
  },
);
const opts = args.options;
const BASELINE = baselinePath(SCRIPT, args.values.get('baseline'));

const upload = { blob: Buffer.alloc(opts.uploadMessageBytes, 7) };

interface Case {
  readonly name: string;
  readonly calls: number;
  readonly concurrency: number;
  readonly one: (client: BenchClient) => Promise<unknown>;
}
const CASES: readonly Case[] = [
  { name: 'unary, c=32', calls: opts.unaryCalls, concurrency: 32, one: (c) => unary(c, { payload: 'x' }) },
  {
    name: `uploads (${opts.uploadMessages} × ${opts.uploadMessageBytes} B), c=4`,
    calls: opts.uploadCalls,
    concurrency: 4,
    one: (c) => clientStream(c, upload, opts.uploadMessages),
  },
];

/** µs of this process's CPU per call, over `calls` calls made `concurrency` at a time. */
async function cpuPerCall(client: BenchClient, c: Case, calls: number): Promise<number> {
  let started = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: c.concurrency }, async () => {
      while (started < calls) {
        started++;
        await c.one(client);
      }
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

async function main(): Promise<void> {
  const server = await spawnBenchServer('bench/overhead-server.ts');
  const variants: { name: string; client: BenchClient }[] = [
    { name: 'bare grpc-js', client: createClient(server.address) },
    {
      name: 'grpc-js built-in retry policy',
      client: createClient(server.address, { 'grpc.service_config': JSON.stringify(retryConfig) }),
    },
    {
      // The floor under any interceptor: grpc-js's interceptor chain with one link that does nothing.
      name: 'a pass-through interceptor',
      client: createClient(server.address, {
        interceptors: [
          (options: grpc.InterceptorOptions, next: grpc.NextCall) => new grpc.InterceptingCall(next(options)),
        ],
      }),
    },
    {
      name: 'ours, retry policy',
      client: createClient(server.address, { interceptors: [createRetryInterceptor(retryConfig)] }),
    },
  ];
  if (BASELINE) {
    const create = await loadBaseline(SCRIPT, BASELINE);
    variants.push({
      name: 'baseline build, retry policy',
      client: createClient(server.address, { interceptors: [create(retryConfig) as grpc.Interceptor] }),
    });
  }
  console.log(machineLine(machineInfo()));
  console.log(
    `${opts.rounds} rounds; per round, each variant makes the same calls in turn (order reversed every other round)`,
  );
  try {
    for (const v of variants) await waitForReady(v.client);
    for (const c of CASES) {
      for (const v of variants) await cpuPerCall(v.client, c, Math.ceil(c.calls / 4)); // warm-up
      const perVariant = variants.map(() => [] as number[]);
      for (let round = 0; round < opts.rounds; round++) {
        const order = variants.map((_, i) => i);
        if (round % 2 === 1) order.reverse();
        for (const i of order) {
          (globalThis as { gc?: () => void }).gc?.();
          perVariant[i]!.push(await cpuPerCall(variants[i]!.client, c, c.calls));
        }
      }
      const bare = median(perVariant[0]!);
      console.log(`\n${c.name}, ${c.calls} calls a round:\n`);
      console.log(
        markdownTable(
          [
            'variant',
            'client CPU µs/call (median)',
            'ratio to bare',
            'paired ratio (median of rounds)',
            'rounds',
          ],
          variants.map((v, i) => {
            const m = median(perVariant[i]!);
            const paired = median(perVariant[i]!.map((x, round) => x / perVariant[0]![round]!));
            return [
              v.name,
              m.toFixed(1),
              (m / bare).toFixed(3),
              paired.toFixed(3),
              perVariant[i]!.map((x) => x.toFixed(0)).join(' '),
            ];
          }),
        ),
      );
    }
  } finally {
    for (const v of variants) v.client.close();
    await server.stop();
  }
}

await main();
