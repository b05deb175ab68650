/** Trailers of the caller's Metadata class for statuses the package makes (src/shared/callers-metadata.ts). */
import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { emptyMetadataLike } from '../../src/shared/callers-metadata.js';

describe('emptyMetadataLike', () => {
  it("makes empty trailers of the caller's class, a Metadata of another copy of grpc-js", () => {
    /** Stands for another copy's Metadata. */
    class ForeignMetadata extends Metadata {}
    const like = new ForeignMetadata();
    like.set('k', 'v');
    const made = emptyMetadataLike(like);
    expect(made).toBeInstanceOf(ForeignMetadata);
    expect(made).not.toBe(like);
    expect(made.getMap()).toEqual({});
  });

  it("is this package's Metadata for one of its own, nothing, a stand-in, or a class that cannot be made bare", () => {
    class NeedsArgument extends Metadata {
      constructor(required: { ok: true }) {
        super();
        if (!required.ok) throw new Error('unreachable');
      }
    }
    const standIn = { getMap: () => ({}), clone: () => standIn };
    for (const like of [
      new Metadata(),
      undefined,
      null,
      'metadata',
      standIn,
      new NeedsArgument({ ok: true }),
    ]) {
      const made = emptyMetadataLike(like);
      expect(made.constructor).toBe(Metadata);
    }
  });
});
