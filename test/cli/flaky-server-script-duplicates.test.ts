/**
 * The flaky-server command's script file: a key written twice in one object, and one method written with and
 * without its leading `/`, are warned of as `check` warns of a config's duplicate keys (the server still starts);
 * one method named two ways, and a method name two served services share, too.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { formatAttemptLine } from '../../src/cli/flaky-server-command.js';
import { CALL_ID_METADATA_KEY, loadFlakyTestService, type RecordedAttempt } from '../../src/testing/index.js';
import { startCommand as start, stopRuns } from '../helpers/flaky-server-command-run.js';

const SHOP = 'test/testing/fixtures/shop-orders.proto';
const BILLING = 'test/testing/fixtures/billing-orders.proto';
let dir: string;

function unaryCode(address: string, callId: string): Promise<number> {
  const Service = loadFlakyTestService();
  const client = new Service(address, grpc.credentials.createInsecure(), { 'grpc.enable_retries': 0 });
  const metadata = new grpc.Metadata();
  metadata.set(CALL_ID_METADATA_KEY, callId);
  const method = (client as unknown as Record<string, (...args: unknown[]) => unknown>).Unary!.bind(client);
  return new Promise((resolve) => {
    method({ payload: 'x' }, metadata, (error: grpc.ServiceError | null) => {
      client.close();
      resolve(error?.code ?? grpc.status.OK);
    });
  });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'flaky-cli-dup-'));
});

afterEach(async () => {
  await stopRuns();
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('flaky-server --script: keys written twice', () => {
  it('warns of each, at the one that counts, as check does, and starts with the last one', async () => {
    const file = join(dir, 'duplicates.json');
    const unary = 'grpc_retry_hedging.testing.v1.FlakyTest/Unary';
    writeFileSync(
      file,
      [
        '{',
        `  "${unary}": [{"status": "ABORTED"}],`,
        '  "c1": [{"status": "UNAVAILABLE"}],',
        '  "c1": [{"status": "NOT_FOUND", "status": "INTERNAL"}],',
        `  "/${unary}": [{"status": "DATA_LOSS"}]`,
        '}',
      ].join('\n'),
    );
    const { io, exit } = start(['--script', file]);
    const [, address] = await io.waitForOut(/^flaky server listening on (\S+)$/m);
    expect(io.err.trimEnd().split('\n')).toEqual([
      `flaky-server: warning: ${file}:4:3: c1: is written more than once in its object (first at line 3, column 3): JSON keeps only the last one, so the one at line 3 is ignored`,
      `flaky-server: warning: ${file}:4:34: c1[0].status: is written more than once in its object (first at line 4, column 11): JSON keeps only the last one, so the one at line 4 is ignored`,
      `flaky-server: warning: ${file}:5:3: "/${unary}" scripts the same method as "${unary}" (line 2, column 3): only the last one is used, so the one at line 2 is ignored`,
    ]);
    expect(await unaryCode(address!, 'c1')).toBe(grpc.status.INTERNAL);
    expect(await unaryCode(address!, 'other')).toBe(grpc.status.DATA_LOSS);
    io.controller.abort();
    expect(await exit).toBe(0);
  });

  it('shows them with the errors of a file that is refused', async () => {
    const file = join(dir, 'duplicates-and-errors.json');
    writeFileSync(file, '{\n  "c1": [{}],\n  "c1": [{"status": "UNAVAILBLE"}]\n}');
    const { io, exit } = start(['--script', file]);
    expect(await exit).toBe(1);
    expect(io.err).toContain(
      `flaky-server: warning: ${file}:3:3: c1: is written more than once in its object (first at line 2, column 3)`,
    );
  });

  it("judges retryInfoMs with the entry's own status: a failed status and another bad field give one error", async () => {
    const file = join(dir, 'retry-info.json');
    const unary = 'grpc_retry_hedging.testing.v1.FlakyTest/Unary';
    writeFileSync(
      file,
      `{"${unary}": [{"status": 14, "retryInfoMs": 5, "delayMs": "x"}], "c2": [{"retryInfoMs": 5}]}`,
    );
    const { io, exit } = start(['--script', file]);
    expect(await exit).toBe(1);
    const errors = io.err.trimEnd().split('\n');
    expect(errors.filter((line) => line.includes(`"${unary}"[0]`))).toEqual([
      expect.stringContaining('"delayMs" must be a number'),
    ]);
    expect(errors.filter((line) => line.includes('"c2"[0]'))).toEqual([
      expect.stringContaining('"retryInfoMs" requires a non-OK status'),
    ]);
  });

  it('names every method a call-id key fits when two served services have it', async () => {
    const file = join(dir, 'ambiguous.json');
    writeFileSync(file, '{\n  "GetOrder": [{}]\n}');
    const { io } = start(['--proto', SHOP, '--proto', BILLING, '--script', file]);
    await io.waitForOut(/^flaky server listening on/m);
    expect(io.err).toBe(
      `flaky-server: warning: ${file}:2:3: "GetOrder" scripts the calls whose x-flaky-call-id is "GetOrder", not a method; several served methods fit it: to script one, write its key, "acme.shop.v1.OrderService/GetOrder" or "acme.billing.v1.OrderService/GetOrder"\n`,
    );
  });
});

describe('formatAttemptLine', () => {
  it('logs an attempt the server stop cut off as such, whenever it is logged', () => {
    const attempt = {
      callId: 'c1',
      attempt: 1,
      method: '/a.B/C',
      arrivedAt: 0,
      endedAt: 5,
      previousRpcAttempts: undefined,
      cancelled: true,
      cutOffByStop: true,
    } as unknown as RecordedAttempt;
    expect(formatAttemptLine(attempt)).toContain('-> cut off by the server stopping 5ms');
  });
});
