/**
 * Script fields that only some kinds of method can play: `responses` needs a response stream, `failOnFirstMessage`
 * a request stream, `echo` both (bidi). Given for another kind, they would be ignored and the attempt would play
 * something other than the test meant, so they are an error naming the method's kind.
 */
import type { AttemptScript } from './flaky-script.js';

interface MethodKind {
  readonly path: string;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
}

/** `unary`, `server streaming`, `client streaming` or `bidi streaming`. */
function kindOf(method: MethodKind): string {
  if (method.requestStream) {
    return method.responseStream ? 'bidi streaming' : 'client streaming';
  }
  return method.responseStream ? 'server streaming' : 'unary';
}

/** The first field of `script` that `method`'s kind cannot play, as one line; undefined when every field fits. */
export function scriptFitProblem(script: AttemptScript, method: MethodKind): string | undefined {
  const kind = kindOf(method);
  const misfit = (field: string, needs: string): string =>
    `"${field}" is for ${needs}, and ${method.path} is ${kind}: it would be ignored`;
  if (script.responses !== undefined && !method.responseStream) {
    return misfit('responses', 'methods that stream responses (server streaming, bidi)');
  }
  if (script.failOnFirstMessage === true && !method.requestStream) {
    return misfit('failOnFirstMessage', 'methods that stream requests (client streaming, bidi)');
  }
  if (script.endBeforeHalfClose === true && !method.requestStream) {
    return misfit('endBeforeHalfClose', 'methods that stream requests (client streaming, bidi)');
  }
  if (script.echo === true && !(method.requestStream && method.responseStream)) {
    return misfit('echo', 'bidi streaming methods');
  }
  return undefined;
}
