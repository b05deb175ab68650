/**
 * Records the gRPC A96 retry metrics (`grpc.client.call.retries`, `.hedges`, `.retry_delay`) of a few calls to
 * the flaky test server, then prints what an OpenTelemetry exporter would receive.
 *
 *   npm run build && node --import tsx examples/otel-metrics.ts
 */

import { pathToFileURL } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import {
  AggregationTemporality,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { createRetryInterceptor } from 'grpc-retry-hedging';
import { createRetryMetrics } from 'grpc-retry-hedging/otel';
import { CALL_ID_METADATA_KEY, FlakyServer, loadFlakyTestService } from 'grpc-retry-hedging/testing';

const SERVICE = 'grpc_retry_hedging.testing.v1.FlakyTest';

/** One histogram data point, as the exporter saw it. */
export interface MetricPoint {
  attributes: Record<string, unknown>;
  count: number;
  sum: number;
}

/** Data points by instrument name, e.g. `summary['grpc.client.call.retries']`. */
export type MetricsSummary = Record<string, MetricPoint[]>;

const retryConfig = {
  methodConfig: [
    {
      name: [{ service: SERVICE }],
      retryPolicy: {
        maxAttempts: 4,
        initialBackoff: '0.02s',
        maxBackoff: '0.1s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
};

const hedgingConfig = {
  methodConfig: [
    {
      name: [{ service: SERVICE }],
      hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.05s', nonFatalStatusCodes: ['UNAVAILABLE'] },
    },
  ],
};

type UnaryFn = (
  request: object,
  metadata: grpc.Metadata,
  callback: (error: grpc.ServiceError | null) => void,
) => void;

function call(client: grpc.Client, callId: string): Promise<string> {
  const metadata = new grpc.Metadata();
  metadata.set(CALL_ID_METADATA_KEY, callId);
  return new Promise((resolve) => {
    (client as unknown as { Unary: UnaryFn }).Unary({ payload: 'hi' }, metadata, (error) =>
      resolve(error ? grpc.status[error.code] : 'OK'),
    );
  });
}

/** Runs the example and returns the collected data points. */
export async function main(): Promise<MetricsSummary> {
  const server = await FlakyServer.start();
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // A long interval: the example exports once, on forceFlush().
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });

  const FlakyTest = loadFlakyTestService();
  const clients: grpc.Client[] = [];
  const newClient = (config: object) => {
    // One RetryMetrics per interceptor; both feed the same instruments.
    const retryMetrics = createRetryMetrics({ meterProvider });
    const client = new FlakyTest(server.address, grpc.credentials.createInsecure(), {
      interceptors: [createRetryInterceptor(config, { onEvent: retryMetrics.onEvent })],
      'grpc.enable_retries': 0, // the interceptor replaces grpc-js's own retries
    });
    clients.push(client);
    return client;
  };

  try {
    const retrying = newClient(retryConfig);
    const hedging = newClient(hedgingConfig);

    server.script('fails-twice', [
      { status: grpc.status.UNAVAILABLE },
      { status: grpc.status.UNAVAILABLE },
      {},
    ]);
    server.script('always-down', [{ status: grpc.status.UNAVAILABLE }]);
    server.script('slow-first', [{ delayMs: 2_000 }, {}]);

    await call(retrying, 'fails-twice'); // OK after 2 retries
    await call(retrying, 'always-down'); // UNAVAILABLE after 3 retries
    await call(retrying, 'fine'); // OK at once: no retries, retry_delay 0
    await call(hedging, 'slow-first'); // OK: the hedge sent after 50 ms wins

    await meterProvider.forceFlush();
    const summary: MetricsSummary = {};
    const exported = exporter.getMetrics().at(-1);
    for (const scope of exported?.scopeMetrics ?? []) {
      for (const metric of scope.metrics) {
        summary[metric.descriptor.name] = metric.dataPoints.map((dp) => {
          const value = dp.value as Histogram;
          return { attributes: { ...dp.attributes }, count: value.count, sum: value.sum ?? 0 };
        });
      }
    }
    return summary;
  } finally {
    for (const client of clients) client.close();
    await meterProvider.shutdown();
    await server.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (summary) => {
      for (const [name, points] of Object.entries(summary)) {
        console.log(name);
        for (const p of points) {
          console.log(`  count=${p.count} sum=${p.sum.toFixed(3)} ${JSON.stringify(p.attributes)}`);
        }
      }
    },
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
