import { Metadata } from '@grpc/grpc-js';

/**
 * New empty trailers of the class of `like`, the caller's request metadata, for a status the package makes itself:
 * when the client runs on another copy of grpc-js (nice-grpc's own under an application on an older one), code that
 * checks `instanceof Metadata` with its copy (nice-grpc's `ClientError`) takes only that copy's for trailers. This
 * package's copy's when `like` is not a Metadata.
 * @internal
 */
export function emptyMetadataLike(like: unknown): Metadata {
  if (typeof like !== 'object' || like === null) {
    return new Metadata();
  }
  const { constructor: Callers, getMap, clone } = like as Record<string, unknown>;
  if (
    Callers === Metadata ||
    typeof Callers !== 'function' ||
    typeof getMap !== 'function' ||
    typeof clone !== 'function'
  ) {
    return new Metadata();
  }
  try {
    const made: unknown = new (Callers as new () => unknown)();
    // Only a Metadata of that copy: a stand-in object (a test double's class) has not its methods.
    const { set, get, getMap: madeGetMap } = made as Record<string, unknown>;
    if (typeof set === 'function' && typeof get === 'function' && typeof madeGetMap === 'function') {
      return made as Metadata;
    }
  } catch {
    // a class that cannot be made without arguments: this package's copy's
  }
  return new Metadata();
}
