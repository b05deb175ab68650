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

  it('makes nothing of a class whose instances lack set, get or getMap, nor of a like without getMap or clone', () => {
    // A test double standing in for request metadata: trailers of its class would break the first set() on them.
    const shaped = (missing: string) =>
      class StandIn {
        constructor() {
          for (const name of ['set', 'get', 'getMap', 'clone']) {
            if (name !== missing) Object.assign(this, { [name]: () => undefined });
          }
        }
      };
    const likes: unknown[] = [
      new (shaped('set'))(),
      new (shaped('get'))(),
      Object.assign(new (shaped('none'))(), { constructor: shaped('getMap') }),
      // The like itself lacks getMap or clone, though its class makes something with them all.
      Object.assign(new (shaped('getMap'))(), { constructor: shaped('none') }),
      Object.assign(new (shaped('clone'))(), { constructor: shaped('none') }),
    ];
    for (const like of likes) {
      expect(emptyMetadataLike(like).constructor).toBe(Metadata);
    }
  });
});
