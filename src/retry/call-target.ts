import type { InterceptingCallInterface } from '../shared/grpc-types.js';

/**
 * What a call not yet started says of its peer: its channel's target (after the start, grpc-js names the address
 * once a response came, `unknown` until then); '' if a layer under this one cannot say.
 * @internal
 */
export function targetOf(call: InterceptingCallInterface): string {
  try {
    return call.getPeer();
  } catch {
    return '';
  }
}
