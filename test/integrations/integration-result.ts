import { expect } from 'vitest';
import type { IntegrationResult } from '../../examples/integrations/flaky-backend.js';

/**
 * What every integration example must show: the unary call was answered by its third attempt after two
 * UNAVAILABLE ones, and the hedged read by the hedge (attempt 2) while the hung first attempt was cancelled.
 */
export function expectRetriedAndHedged(result: IntegrationResult): void {
  expect(result.retriedAttempts).toEqual(['UNAVAILABLE', 'UNAVAILABLE', 'OK']);
  expect(result.retried).toMatchObject({ payload: 'write', attempt: 3 });
  expect(result.hedgedAttempts).toEqual(['CANCELLED', 'OK']);
  expect(result.hedged).toHaveLength(1);
  expect(result.hedged[0]).toMatchObject({ payload: 'read', attempt: 2 });
}
