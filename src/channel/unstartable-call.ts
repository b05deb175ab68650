import { type InterceptingListener, Metadata, status as Status, type StatusObject } from '@grpc/grpc-js';
import { emptyMetadataLike } from '../shared/callers-metadata.js';
import type { InterceptingCallInterface, MessageContext } from '../shared/grpc-types.js';
import { errorMessage } from '../util/error-message.js';

/**
 * A call whose chain could not be made when it started: the channel was closed after the call was created (an
 * interceptor above held the start back meanwhile), or an interceptor threw. It ends once, with `UNAVAILABLE` and
 * the error's message (or the caller's cancel, when that came first), on the next tick: the error would otherwise
 * be thrown out of `start`, often from a timer of the interceptor above, where nothing catches it and the process
 * exits. Writes are called back (after the status), so that no writer waits. The status's trailers are of the
 * caller's Metadata class, as the retry interceptor's own statuses are: with nice-grpc on its own copy of grpc-js,
 * its `ClientError` takes only that copy's Metadata for trailers.
 * @internal
 */
export class UnstartableCall implements InterceptingCallInterface {
  private status: StatusObject;
  private listener: Partial<InterceptingListener> | undefined;
  private ended = false;

  constructor(error: unknown) {
    this.status = { code: Status.UNAVAILABLE, details: errorMessage(error), metadata: new Metadata() };
  }

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    if (this.ended) {
      return;
    }
    this.ended = true;
    this.listener = listener;
    // The trailers are empty: new ones of the caller's class hold the same.
    this.status = { ...this.status, metadata: emptyMetadataLike(metadata) };
    process.nextTick(() => this.listener?.onReceiveStatus?.(this.status));
  }

  cancelWithStatus(code: Status, details: string): void {
    if (!this.ended) {
      // Cancelled before the start: the status it then reports is the caller's.
      this.status = { code, details, metadata: new Metadata() };
    }
  }

  sendMessageWithContext(context: MessageContext, _message: unknown): void {
    const callback = context.callback;
    if (callback) {
      process.nextTick(callback);
    }
  }

  sendMessage(_message: unknown): void {}

  startRead(): void {}

  halfClose(): void {}

  getPeer(): string {
    return '';
  }

  getAuthContext(): null {
    return null;
  }
}
