import { describe, it } from 'vitest';
import { main } from '../../examples/integrations/ts-proto.js';
import { expectRetriedAndHedged } from './integration-result.js';

describe('ts-proto client generated with outputServices=grpc-js, the interceptor in its client options', () => {
  it('retries a call that fails twice and hedges a read, as the server saw', async () => {
    expectRetriedAndHedged(await main(() => {}));
  });
});
