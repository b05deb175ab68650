/**
 * A server that deduplicates on an AIP-155 request id, and a client whose retries carry one id per call.
 *
 * `AddStock` in protos/catalog_demo.proto adds to a counter: running it twice is not the same as running it once, so
 * the proto does not mark it idempotent. Here the server applies a write, then loses its reply (as when a
 * connection drops after the write). The client retries:
 * - with `createRequestIdInterceptor` before the retry interceptor, the retry carries the same `request_id`, the
 *   server recognizes it and sends back the first response: the stock grows once;
 * - without request ids, the retry is a new write: the stock grows twice.
 *
 * Run: npm run build && node --import tsx examples/request-id-dedupe.ts
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createRequestIdInterceptor, createRetryInterceptor } from 'grpc-retry-hedging';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

interface Item {
  id: string;
  name: string;
  stock: string; // int64, as a decimal string (proto-loader longs: String)
}
interface AddStockRequest {
  id: string;
  amount: string;
  requestId: string;
}
type Callback = (error: grpc.ServiceError | null, item?: Item) => void;
interface CatalogClient extends grpc.Client {
  AddStock(request: Partial<AddStockRequest>, callback: Callback): grpc.ClientUnaryCall;
}

/** What the server saw, per attempt. */
export interface ServerAttempt {
  requestId: string;
  /** `applied`: a new write; `duplicate`: answered from the first response; `reply-lost`: applied, reply dropped. */
  outcome: 'applied' | 'duplicate' | 'reply-lost';
}

export interface DedupeResult {
  /** Stock after one AddStock(5) call whose first reply was lost. */
  stock: number;
  attempts: ServerAttempt[];
}

/**
 * The catalog server. `AddStock` answers a repeated `request_id` with the response it gave the first time, for as
 * long as it remembers the id (a real server bounds this, AIP-155 suggests at least an hour). `loseReplies` drops
 * that many replies after applying the write.
 */
export class CatalogServer {
  readonly attempts: ServerAttempt[] = [];
  loseReplies = 0;
  private readonly stock = new Map<string, bigint>();
  private readonly responses = new Map<string, Item>();
  private server: grpc.Server | undefined;

  async start(service: grpc.ServiceDefinition): Promise<string> {
    const server = new grpc.Server();
    server.addService(service, {
      AddStock: (call: grpc.ServerUnaryCall<AddStockRequest, Item>, callback: grpc.sendUnaryData<Item>) =>
        this.addStock(call.request, callback),
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, p) =>
        error ? reject(error) : resolve(p),
      ),
    );
    this.server = server;
    return `127.0.0.1:${port}`;
  }

  stockOf(id: string): number {
    return Number(this.stock.get(id) ?? 0n);
  }

  stop(): void {
    this.server?.forceShutdown();
  }

  private addStock(request: AddStockRequest, callback: grpc.sendUnaryData<Item>): void {
    const requestId = request.requestId;
    const first = requestId === '' ? undefined : this.responses.get(requestId);
    if (first !== undefined) {
      this.attempts.push({ requestId, outcome: 'duplicate' });
      callback(null, first);
      return;
    }
    const stock = (this.stock.get(request.id) ?? 0n) + BigInt(request.amount);
    this.stock.set(request.id, stock);
    const item: Item = { id: request.id, name: request.id, stock: String(stock) };
    if (requestId !== '') this.responses.set(requestId, item);
    if (this.loseReplies > 0) {
      this.loseReplies -= 1;
      this.attempts.push({ requestId, outcome: 'reply-lost' });
      callback({ code: grpc.status.UNAVAILABLE, details: 'connection lost after the write' });
      return;
    }
    this.attempts.push({ requestId, outcome: 'applied' });
    callback(null, item);
  }
}

/** Retry AddStock on UNAVAILABLE: safe only because the server deduplicates on request_id. */
const serviceConfig = {
  methodConfig: [
    {
      name: [{ service: 'catalog_demo.v1.Catalog', method: 'AddStock' }],
      retryPolicy: {
        maxAttempts: 3,
        initialBackoff: '0.02s',
        maxBackoff: '0.1s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
};

export async function main(
  print: (line: string) => void = console.log,
): Promise<{ withIds: DedupeResult; withoutIds: DedupeResult }> {
  const definition = protoLoader.loadSync(here('../protos/catalog_demo.proto'), {
    longs: String,
    defaults: true,
  });
  const proto = grpc.loadPackageDefinition(definition) as unknown as {
    catalog_demo: { v1: { Catalog: grpc.ServiceClientConstructor } };
  };
  const Catalog = proto.catalog_demo.v1.Catalog;

  const run = async (
    label: string,
    interceptors: grpc.Interceptor[],
    item: string,
  ): Promise<DedupeResult> => {
    const server = new CatalogServer();
    const address = await server.start(Catalog.service);
    server.loseReplies = 1;
    const client = new Catalog(address, grpc.credentials.createInsecure(), {
      interceptors,
    }) as unknown as CatalogClient;
    try {
      const reply = await new Promise<Item | undefined>((resolve, reject) =>
        client.AddStock({ id: item, amount: '5' }, (error, response) =>
          error ? reject(error) : resolve(response),
        ),
      );
      const result = { stock: server.stockOf(item), attempts: server.attempts };
      print(`${label}: AddStock(5) answered stock=${reply?.stock}; the server holds ${result.stock}`);
      for (const attempt of result.attempts) {
        print(`  attempt with request_id ${JSON.stringify(attempt.requestId)}: ${attempt.outcome}`);
      }
      return result;
    } finally {
      client.close();
      server.stop();
    }
  };

  // The request-id interceptor goes first: it runs once per call, outside the retries.
  const withIds = await run(
    'with request ids',
    [
      createRequestIdInterceptor({ field: 'requestId', methods: (path) => path.endsWith('/AddStock') }),
      createRetryInterceptor(serviceConfig),
    ],
    'apples',
  );
  const withoutIds = await run('without request ids', [createRetryInterceptor(serviceConfig)], 'pears');
  return { withIds, withoutIds };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
