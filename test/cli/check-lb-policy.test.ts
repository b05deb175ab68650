/**
 * `check` judges the replica-avoiding policy's config as `createChannelOptions` does (one function, in src/lb): a
 * config the channel options would reject fails the check, with the JSON path and its line and column.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CheckReport, runCheck } from '../../src/cli/check.js';
import { createChannelOptions } from '../../src/config/channel-options.js';
import { captureRun } from '../helpers/check-run.js';

const SCRATCH = mkdtempSync(join(tmpdir(), 'grh-check-lb-'));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

const AVOID = 'grpc_retry_hedging.avoid_tried_replicas';
const hedged = {
  name: [{ service: 'grpc_retry_hedging.testing.v1.FlakyTest' }],
  hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.02s' },
};

async function check(config: object, ...flags: string[]) {
  const file = join(mkdtempSync(join(SCRATCH, 'config-')), 'config.json');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return { ...(await captureRun((io) => runCheck([file, ...flags], io))), file };
}

async function report(config: object): Promise<CheckReport> {
  return JSON.parse((await check(config, '--json')).stdout) as CheckReport;
}

/** The message createChannelOptions throws for the same config. */
function channelOptionsError(config: object): string {
  try {
    createChannelOptions(config, { onWarning: () => {} });
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('test: createChannelOptions accepted the config');
}

describe("check: the replica-avoiding policy's config", () => {
  it('fails a misspelled childPolicy, at its path, line and column, as createChannelOptions does', async () => {
    const config = {
      loadBalancingConfig: [{ [AVOID]: { childPolicy: [{ round_robbin: {} }] } }],
      methodConfig: [hedged],
    };
    const run = await check(config);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `config.json:5:24: loadBalancingConfig[0]["${AVOID}"].childPolicy: childPolicy names no load-balancing policy this grpc-js knows (round_robbin: did you mean round_robin?)`,
    );
    expect(run.stderr).toContain('invalid service config (1 error)');
    // the child list is wrong, not pick_first: no warning of hedging around pick_first beside the error
    expect(run.stderr).not.toContain('pick_first');
    const json = await report(config);
    expect(json).toMatchObject({ valid: false, status: 'invalid' });
    expect(json.errors).toEqual([
      {
        path: `loadBalancingConfig[0]["${AVOID}"].childPolicy`,
        message:
          'childPolicy names no load-balancing policy this grpc-js knows (round_robbin: did you mean round_robin?)',
        line: 5,
        column: 24,
      },
    ]);
    expect(channelOptionsError(config)).toContain(json.errors[0]?.message);
  });

  it('fails a child config grpc-js refuses, an unknown field and the policy as its own child', async () => {
    const outlier = {
      loadBalancingConfig: [{ [AVOID]: { childPolicy: [{ outlier_detection: { interval: 'soon' } }] } }],
    };
    const outlierReport = await report(outlier);
    expect(outlierReport.errors.map((e) => e.path)).toEqual([
      `loadBalancingConfig[0]["${AVOID}"].childPolicy[0]`,
    ]);
    expect(outlierReport.errors[0]?.message).toMatch(/^childPolicy\[0\] \(outlier_detection\) is invalid: /);
    expect(channelOptionsError(outlier)).toContain(outlierReport.errors[0]?.message);

    const unknownField = await report({
      loadBalancingConfig: [{ [AVOID]: { child: [{ round_robin: {} }] } }],
    });
    expect(unknownField.errors).toMatchObject([
      {
        path: `loadBalancingConfig[0]["${AVOID}"].child`,
        message: 'unknown field child (known: childPolicy)',
      },
    ]);

    const itself = await report({ loadBalancingConfig: [{ [AVOID]: { child_policy: [{ [AVOID]: {} }] } }] });
    expect(itself.errors).toMatchObject([
      {
        path: `loadBalancingConfig[0]["${AVOID}"].child_policy[0]`,
        message: `childPolicy cannot be ${AVOID} itself`,
      },
    ]);
  });

  it('reports it beside the validator errors, in file order', async () => {
    const json = await report({
      loadBalancingConfig: [{ round_robin: {} }, { [AVOID]: { childPolicy: 'round_robin' } }],
      methodConfig: [{ ...hedged, hedgingPolicy: { maxAttempts: 1, hedgingDelay: '0.02s' } }],
    });
    expect(json.errors.map((e) => e.path)).toEqual([
      `loadBalancingConfig[1]["${AVOID}"].childPolicy`,
      'methodConfig[0].hedgingPolicy.maxAttempts',
    ]);
  });

  it('passes valid configs of the policy, and a fallback list after it', async () => {
    for (const loadBalancingConfig of [
      [{ [AVOID]: {} }],
      [{ [AVOID]: { childPolicy: [{ round_robin: {} }] } }, { round_robin: {} }],
      [{ [AVOID]: { child_policy: [{ grpclb: {} }, { round_robin: {} }] } }],
    ]) {
      const run = await check({ loadBalancingConfig, methodConfig: [hedged] }, '--json');
      expect(run.code).toBe(0);
      expect((JSON.parse(run.stdout) as CheckReport).errors).toEqual([]);
    }
  });
});
