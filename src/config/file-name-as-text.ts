/**
 * A file name passed where JSON text goes (`createRetryInterceptor('service-config.json')`): strings are read as
 * the config itself, so the name fails to parse as JSON. The syntax error then says what was meant.
 */

const JSON_FILE = /^[^\s{}[\]"]+\.json5?$/i;
const PATH_START = /^(\.{1,2}[\\/]|[\\/]|~[\\/]|[A-Za-z]:[\\/])/;

/**
 * Advice for `text` when it looks like a file name rather than JSON: one line naming `loadServiceConfig`;
 * undefined otherwise.
 */
export function fileNameAdvice(text: string): string | undefined {
  const name = text.trim();
  if (name.includes('\n') || !(JSON_FILE.test(name) || (PATH_START.test(name) && !/[{}[\]"]/.test(name)))) {
    return undefined;
  }
  return `a string is read as the service config's JSON text, and ${JSON.stringify(name)} looks like a file name: read the file with loadServiceConfig(${JSON.stringify(name)}) and pass what it returns`;
}
