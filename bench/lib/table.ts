/** Markdown table formatting for benchmark output. */

export type Cell = string | number;
export type Align = 'left' | 'right';

/** Formats a number with a fixed number of decimals ("–" for NaN/undefined). */
export function fmt(value: number | undefined, decimals = 1): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  return value.toFixed(decimals);
}

/** Formats an integer with thousands separators (e.g. 12 345). */
export function fmtInt(value: number): string {
  if (!Number.isFinite(value)) return '–';
  return Math.round(value)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
}

/**
 * Renders a GitHub-flavoured markdown table with padded columns. Columns are right-aligned except those listed
 * as 'left' in `align` (default: the first column left, the others right).
 */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly Cell[])[],
  align?: Align[],
): string {
  const aligns: Align[] = header.map((_, i) => align?.[i] ?? (i === 0 ? 'left' : 'right'));
  const text = rows.map((row) => header.map((_, i) => String(row[i] ?? '')));
  const widths = header.map((h, i) => Math.max(h.length, 3, ...text.map((r) => (r[i] as string).length)));
  const pad = (s: string, i: number): string =>
    aligns[i] === 'left' ? s.padEnd(widths[i] as number) : s.padStart(widths[i] as number);
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => pad(c, i)).join(' | ')} |`;
  const rule = `|${widths
    .map((w, i) => (aligns[i] === 'left' ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`))
    .join('|')}|`;
  return [line(header), rule, ...text.map(line)].join('\n');
}
