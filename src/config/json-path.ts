/**
 * JSON paths as used in service-config diagnostics: `methodConfig[1].retryPolicy.maxAttempts`.
 */

/** A path into a JSON document: object keys and array indexes, outermost first. */
export type JsonPath = readonly (string | number)[];

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Renders a path as `a.b[0].c`; `` for the root. Keys that are not identifiers are quoted: `a["x y"]`.
 */
export function formatJsonPath(path: JsonPath): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') {
      text += `[${segment}]`;
    } else if (IDENTIFIER.test(segment)) {
      text += text === '' ? segment : `.${segment}`;
    } else {
      text += `[${JSON.stringify(segment)}]`;
    }
  }
  return text;
}
