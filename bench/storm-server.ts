/**
 * Load-shedding server for `bench/storm.ts`, run in its own process:
 *
 *   node --import tsx bench/storm-server.ts [--capacity 8] [--work-ms 5] [--reject-cpu-ms 0]
 *
 * It serves FlakyTest/Unary. At most `capacity` calls are worked on at once (each takes `workMs` of simulated
 * work, a timer); any call arriving while the server is full is shed with UNAVAILABLE, after `rejectCpuMs` of busy
 * CPU (what a real server spends on a request before it sheds it: decoding, auth, logging). Every arriving
 * call is one attempt as far as the client's retry policy is concerned, so the counters below measure the load
 * the clients really put on the server.
 *
 * Control is over the Node IPC channel (spawn with stdio 'ipc'):
 *   child → parent  { type: 'ready', port }
 *   parent → child  { type: 'reset' } | { type: 'stats' }  →  reply { type: 'stats', stats }
 */
import { performance } from 'node:perf_hooks';
import * as grpc from '@grpc/grpc-js';
import { loadFlakyTestService } from 'grpc-retry-hedging/testing';

export interface StormServerStats {
  /** Calls that arrived (served + shed). */
  attempts: number;
  /** Calls answered OK after the simulated work. */
  served: number;
  /** Calls shed with UNAVAILABLE because the server was full. */
  shed: number;
  /** Calls the client cancelled while they were being worked on. */
  cancelled: number;
  /** Highest number of calls worked on at once since the last reset. */
  peakInFlight: number;
}

export type StormControlMessage = { type: 'reset' } | { type: 'stats' } | { type: 'exit' };
export type StormServerMessage = { type: 'ready'; port: number } | { type: 'stats'; stats: StormServerStats };

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`);
  return value;
}

const capacity = flag('--capacity', 8);
const workMs = flag('--work-ms', 5);
const rejectCpuMs = flag('--reject-cpu-ms', 0);

/** Keep the CPU busy for `ms` (the event loop is blocked meanwhile, as it would be by real work). */
function burnCpu(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

let inFlight = 0;
let stats: StormServerStats = { attempts: 0, served: 0, shed: 0, cancelled: 0, peakInFlight: 0 };

interface Request {
  payload?: string;
}

const unary: grpc.handleUnaryCall<Request, unknown> = (call, callback) => {
  stats.attempts += 1;
  if (inFlight >= capacity) {
    stats.shed += 1;
    if (rejectCpuMs > 0) burnCpu(rejectCpuMs);
    callback({ code: grpc.status.UNAVAILABLE, details: 'overloaded: request shed' });
    return;
  }
  inFlight += 1;
  if (inFlight > stats.peakInFlight) stats.peakInFlight = inFlight;
  let done = false;
  const timer = setTimeout(() => {
    done = true;
    inFlight -= 1;
    stats.served += 1;
    callback(null, { payload: call.request.payload ?? '', attempt: 1 });
  }, workMs);
  call.on('cancelled', () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    inFlight -= 1;
    stats.cancelled += 1;
  });
};

// Only Unary is served; grpc-js answers the other methods with UNIMPLEMENTED.
const server = new grpc.Server();
server.addService(loadFlakyTestService().service, { Unary: unary });

function send(message: StormServerMessage): void {
  process.send?.(message);
}

server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) => {
  if (error) {
    console.error(`storm-server: cannot bind: ${error.message}`);
    process.exit(1);
  }
  if (process.send) send({ type: 'ready', port });
  else
    console.log(
      `storm-server listening on 127.0.0.1:${port} (capacity ${capacity}, work ${workMs} ms, ${rejectCpuMs} ms of CPU per shed call)`,
    );
});

process.on('message', (message: StormControlMessage) => {
  if (message.type === 'reset') {
    stats = { attempts: 0, served: 0, shed: 0, cancelled: 0, peakInFlight: inFlight };
    send({ type: 'stats', stats });
  } else if (message.type === 'stats') {
    send({ type: 'stats', stats: { ...stats } });
  } else if (message.type === 'exit') {
    server.forceShutdown();
    process.exit(0);
  }
});
// The parent went away: do not linger.
process.on('disconnect', () => {
  server.forceShutdown();
  process.exit(0);
});
