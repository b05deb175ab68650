/**
 * Options renamed before 1.0: an old name is a hard error that names the new one, so that code written against an
 * older release fails at once and says what to write instead.
 */

/** Old option name → what to write instead (a new name, or a sentence when the shape changed too). @internal */
export type Renames = Readonly<Record<string, { readonly now: string; readonly hint?: string }>>;

/**
 * Throws a TypeError when `value` has a key listed in `renames`:
 * `createRetryInterceptor: option "throttle" was renamed to "gate" (...)`.
 * @internal
 */
export function rejectRenamedKeys(value: object, renames: Renames, where: string): void {
  for (const key of Object.keys(value)) {
    const renamed = Object.hasOwn(renames, key) ? renames[key] : undefined;
    if (renamed !== undefined) {
      const hint = renamed.hint === undefined ? '' : ` (${renamed.hint})`;
      throw new TypeError(`${where}: option "${key}" was renamed to "${renamed.now}"${hint}`);
    }
  }
}
