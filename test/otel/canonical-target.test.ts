import { describe, expect, it } from 'vitest';
import { canonicalTarget } from '../../src/otel/canonical-target.js';

describe('canonicalTarget (A66 grpc.target from grpc-js getTarget())', () => {
  it('spells out the empty authority of a dns target', () => {
    expect(canonicalTarget('dns:localhost:50051')).toBe('dns:///localhost:50051');
    expect(canonicalTarget('dns:127.0.0.1:50051')).toBe('dns:///127.0.0.1:50051');
    expect(canonicalTarget('dns:[::1]:50051')).toBe('dns:///[::1]:50051');
  });

  it('keeps a target that has an authority or another scheme as it is', () => {
    for (const target of [
      'dns:///db.example:443',
      'dns://8.8.8.8/db.example:443',
      'dns:/db.example:443', // grpc-js resolves the host `/db.example`: not the working target's label
      'ipv4:10.0.0.1:50051',
      'ipv6:[::1]:50051',
      'unix:/run/app.sock',
      'unix:///run/app.sock',
      'xds:///app',
      '',
    ]) {
      expect(canonicalTarget(target)).toBe(target);
    }
  });
});
