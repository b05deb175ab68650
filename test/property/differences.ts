import { isDeepStrictEqual } from 'node:util';

/**
 * The places where two plain JSON-like values differ, one line each (`path: expected → actual`), so that a
 * property failure says what differed rather than only that something did.
 */
export function differences(expected: unknown, actual: unknown, path = '$'): string[] {
  if (isDeepStrictEqual(expected, actual)) {
    return [];
  }
  const bothObjects =
    typeof expected === 'object' && expected !== null && typeof actual === 'object' && actual !== null;
  if (bothObjects && Array.isArray(expected) === Array.isArray(actual)) {
    if (Array.isArray(expected) && Array.isArray(actual) && expected.length !== actual.length) {
      return [`${path}: ${show(expected)} → ${show(actual)}`];
    }
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
    return [...keys].flatMap((key) =>
      differences(
        (expected as Record<string, unknown>)[key],
        (actual as Record<string, unknown>)[key],
        `${path}.${key}`,
      ),
    );
  }
  return [`${path}: ${show(expected)} → ${show(actual)}`];
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
