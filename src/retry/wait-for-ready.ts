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
