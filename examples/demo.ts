/**
 * `npm run demo`: validate the example service config with the check CLI, then watch a call survive two failures,
 * then see hedging cut tail latency. Everything runs on 127.0.0.1 against the bundled flaky server.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { main as hedgedReads } from './hedged-reads.js';
import { main as retryClient } from './retry-client.js';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

console.log('== 1. grpc-retry-hedging check examples/service-config.json\n');
console.log(
  execFileSync(process.execPath, [here('../dist/cli/main.js'), 'check', here('service-config.json')], {
    encoding: 'utf8',
  }),
);

console.log('== 2. A call that fails twice, then succeeds (events from the interceptor)\n');
await retryClient();

console.log('\n== 3. Hedged reads against a long-tail server\n');
await hedgedReads({ calls: 400 });
