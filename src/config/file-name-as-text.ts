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

/**
 * Advice for text that is UTF-16 read as UTF-8 (as Windows PowerShell 5's `>` and `Out-File` write files): its
 * byte-order mark reads as two U+FFFD, and every ASCII character comes with a NUL, which JSON text never holds
 * raw. Undefined for any other text.
 */
export function encodingAdvice(text: string): string | undefined {
  const start = text.startsWith('\uFFFD\uFFFD') ? 2 : 0;
  const first = text.charCodeAt(start);
  const second = text.charCodeAt(start + 1);
  if (Number.isNaN(second) || (first === 0) === (second === 0)) {
    return undefined;
  }
  return 'the text is UTF-16, not UTF-8 (every other byte is a NUL): save the file as UTF-8 (in Windows PowerShell 5, `Out-File -Encoding utf8` or `Set-Content -Encoding utf8` rather than `>`)';
}
