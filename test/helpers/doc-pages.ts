/** The repository's root, and the markdown pages users read: the README and every page of docs/. */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export const REPO_ROOT = join(import.meta.dirname, '..', '..');

/** `README.md` and `docs/*.md`, relative to {@link REPO_ROOT}. */
export const DOC_PAGES: readonly string[] = [
  'README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
