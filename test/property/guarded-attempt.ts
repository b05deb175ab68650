import { type InterceptorOptions, Metadata } from '@grpc/grpc-js';
import { FakeAttempt } from '../helpers/engine.js';

/**
 * A scripted attempt whose headers and messages go into the engine through `guard`, which records what they throw
 * instead of letting it escape (the property harnesses' attempts build on it).
 */
export class GuardedFakeAttempt extends FakeAttempt {
  headersSent = false;

  constructor(
    index: number,
    options: InterceptorOptions,
    protected readonly guard: (where: string, f: () => void) => void,
  ) {
    super(index, options);
  }
  override headers(md: Metadata = new Metadata()): void {
    this.headersSent = true;
    this.guard(`attempt ${this.index} headers`, () => super.headers(md));
  }
  override message(message: unknown): void {
    this.guard(`attempt ${this.index} message`, () => super.message(message));
  }
}
