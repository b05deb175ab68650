import { describe, it } from 'vitest';
import { main } from '../../examples/integrations/protobuf-ts.js';
import { expectRetriedAndHedged } from './integration-result.js';

describe('protobuf-ts client over a GrpcTransport, the interceptor in its clientOptions', () => {
  it('retries a call that fails twice and hedges a read, as the server saw', async () => {
    expectRetriedAndHedged(await main(() => {}));
  });
});
