import { describe, it } from 'vitest';
import { main } from '../../examples/integrations/nestjs.js';
import { expectRetriedAndHedged } from './integration-result.js';

describe('NestJS ClientsModule (Transport.GRPC) with the interceptor in channelOptions', () => {
  it('retries a call that fails twice and hedges a read, as the server saw', async () => {
    expectRetriedAndHedged(await main(() => {}));
  });
});
