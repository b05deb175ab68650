import { dirname, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The directory of the running module, read when asked, never at load time: the package's files (protos, package.json)
 * are found by walking up from it.
 *
 * - The CJS build and any CommonJS bundle have `__dirname` (a bundle's: the directory the bundle runs from).
 * - The ESM build has `import.meta.url`.
 * - An ESM build bundled into CommonJS output (esbuild's default for Node) has an empty `import.meta`, and
 *   `__dirname` from the bundle's wrapper. So nothing here may read `import.meta.url` while the module loads:
 *   tsup's `shims` did (`fileURLToPath(undefined)`), and such a bundle threw before its first line ran.
 * - A module's own `__dirname` is absolute. The ESM build has none, and `__dirname` there is a global when it is
 *   anything: `node -e` and `node -p` set it to `'.'`, and the ESM build imported from them looked for its protos in
 *   the working directory (`FlakyServer.start()` threw "cannot find protos/flaky_test.proto"). A relative one is not
 *   taken.
 *
 * @returns The directory, or `undefined` when neither is known.
 * @internal
 */
export function moduleDir(): string | undefined {
  if (typeof __dirname === 'string' && isAbsolute(__dirname)) {
    return __dirname;
  }
  const url: unknown = import.meta.url;
  return typeof url === 'string' && url.startsWith('file:') ? dirname(fileURLToPath(url)) : undefined;
}
