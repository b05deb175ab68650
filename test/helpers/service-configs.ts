/** Service configs for tests: one methodConfig entry naming a whole service, with one policy. */
export function oneEntryConfig(
  service: string,
  policy: { retryPolicy: object } | { hedgingPolicy: object },
  entry: Record<string, unknown> = {},
  root: Record<string, unknown> = {},
): object {
  return { methodConfig: [{ name: [{ service }], ...policy, ...entry }], ...root };
}
