import type { Metadata } from '@grpc/grpc-js';

/**
 * The method config's `waitForReady` on a call's metadata, under the application's own: the service-config spec
 * lets a value set through the client API win over the config's. Only the one option is filled in; the others the
 * application set (`corked`, `idempotentRequest`, ...) stay as they are.
 * @internal
 */
export function applyConfigWaitForReady(metadata: Metadata, waitForReady: boolean): void {
  const options = metadata.getOptions();
  if (options.waitForReady === undefined) {
    metadata.setOptions({ ...options, waitForReady });
  }
}

/**
 * {@link applyConfigWaitForReady} without touching the application's object: the same metadata when the call set
 * `waitForReady` itself, else a copy with the config's. (An application may reuse its Metadata for other calls, of
 * methods the config says nothing about.)
 * @internal
 */
export function withConfigWaitForReady(metadata: Metadata, waitForReady: boolean): Metadata {
  if (metadata.getOptions().waitForReady !== undefined) {
    return metadata;
  }
  const copy = metadata.clone();
  applyConfigWaitForReady(copy, waitForReady);
  return copy;
}
