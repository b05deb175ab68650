import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { main as hedgedReads } from '../../examples/hedged-reads.js';
import { main as retryClient } from '../../examples/retry-client.js';

const quiet = () => {};

describe('examples', () => {
  it('quick-start (the README example, a script): the Greeter call is retried once and succeeds', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'examples/quick-start.ts'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toBe("{ message: 'Hello world' } after 2 attempts\n");
  }, 40_000);

  it('retry-client: the call fails twice, then succeeds on the third attempt after a backoff', async () => {
    const result = await retryClient(quiet);
    expect(result.finalStatus).toBe('OK');
    expect(result.response?.attempt).toBe(3);
    expect(result.attempts.map((a) => a.status)).toEqual(['UNAVAILABLE', 'UNAVAILABLE', 'OK']);
    // initialBackoff 100 ms then 200 ms, each x [0.8, 1.2]: at least 240 ms of waiting in total
    expect(result.retryDelayMs).toBeGreaterThanOrEqual(235);
    expect(result.attempts[1]!.atMs - result.attempts[0]!.atMs).toBeGreaterThanOrEqual(75);
  });

  it('hedged-reads: hedging cuts p99 of a long-tail server for a few percent more attempts', async () => {
    const { plain, hedged } = await hedgedReads({ calls: 300, print: quiet });
    expect(plain.p99).toBeGreaterThan(150);
    // Under no load the hedged p99 is about a tenth of the plain one; a loaded 2-core machine still shows the cut.
    expect(hedged.p99).toBeLessThan(plain.p99 * 0.75);
    expect(plain.attemptsPerCall).toBe(1);
    expect(hedged.attemptsPerCall).toBeGreaterThan(1);
    expect(hedged.attemptsPerCall).toBeLessThan(1.3);
  });
});
