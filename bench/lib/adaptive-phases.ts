/**
 * What bench:adaptive, its server and the trace recorder share: the three phases and their latency regimes, the
 * request header naming an attempt's regime, the hedging policy under test and each call's metadata.
 */
import * as grpc from '@grpc/grpc-js';
import { FLAKY_TEST_SERVICE } from 'grpc-retry-hedging/testing';
import { a6Duration } from './a6-duration.js';
import { VARIANT_METADATA_KEY } from './grpc-calls.js';
import { SCRIPT_CALL_METADATA_KEY } from './latency-script.js';

/** Regime A, then B (the shift up), then A again (the shift down). */
export const ADAPTIVE_PHASES = [
  { key: 'a1', regime: 'a', title: 'Regime A' },
  { key: 'b', regime: 'b', title: 'Regime B, after the shift up' },
  { key: 'a2', regime: 'a', title: 'Regime A again, after the shift down' },
] as const;

/** Request header naming the latency regime of an attempt (`a` or `b`). */
export const REGIME_METADATA_KEY = 'x-bench-regime';

/** The service config under test: hedging of the flaky server's Unary, two attempts, `delayMs` apart. */
export function adaptiveBenchConfig(delayMs: number): object {
  return {
    methodConfig: [
      {
        name: [{ service: FLAKY_TEST_SERVICE, method: 'Unary' }],
        hedgingPolicy: {
          maxAttempts: 2,
          hedgingDelay: a6Duration(delayMs),
          nonFatalStatusCodes: ['UNAVAILABLE'],
        },
      },
    ],
  };
}

/** A call's metadata: its variant's label (the server counts attempts by it), its regime and its script call. */
export function adaptiveCallMetadata(label: string, regime: string, scriptCall: string): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set(VARIANT_METADATA_KEY, label);
  md.set(REGIME_METADATA_KEY, regime);
  md.set(SCRIPT_CALL_METADATA_KEY, scriptCall);
  return md;
}
