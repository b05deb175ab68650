/**
 * Loading a .proto file with protobufjs's process warnings folded into the error, not printed: an import it cannot
 * find is a warning ("missing/dep.proto not found in any of the include paths ...") printed apart from the ENOENT
 * that follows it, which names only the path it tried last.
 */
import { errorMessage } from './error-message.js';

/**
 * Runs `load` (synchronous) with process warnings captured. If it throws, the error becomes one line naming the
 * warnings too: `<error>` alone, or `<error> (<warnings>; <hint>)`. Warnings of a load that succeeds are dropped.
 */
export function loadWithWarningsFolded<T>(load: () => T, hint: string): T {
  const warnings: string[] = [];
  const original = process.emitWarning;
  process.emitWarning = ((warning: string | Error) => {
    warnings.push(typeof warning === 'string' ? warning.trim() : warning.message.trim());
  }) as typeof process.emitWarning;
  try {
    return load();
  } catch (error) {
    const folded = warnings.length > 0 ? ` (${warnings.join('; ')}; ${hint})` : '';
    throw new Error(`${oneLine(errorMessage(error))}${folded}`);
  } finally {
    process.emitWarning = original;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
