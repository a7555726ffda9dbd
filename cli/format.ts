/**
 * Human output of the CLI: money as `$1.23`, aligned text tables and `key: value` blocks. Pure functions over
 * strings, so they are unit-tested without a terminal.
 */

/** Integer cents as dollars: 123 → `$1.23`, -5 → `-$0.05`, null/undefined → `none` (no cap, no price). */
export function money(cents: number | null | undefined): string {
  if (cents === null || cents === undefined) return 'none';
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(cents));
  const dollars = Math.floor(abs / 100).toLocaleString('en-US');
  return `${sign}$${dollars}.${String(abs % 100).padStart(2, '0')}`;
}

/** `free`, `$0.05`, or a range whose free end says `free` (`free-$0.05`); `-` without priced endpoints. */
export function priceRange(min: number | null, max: number | null): string {
  if (min === null || max === null) return '-';
  const one = (c: number) => (c === 0 ? 'free' : money(c));
  return min === max ? one(min) : `${one(min)}-${one(max)}`;
}

export interface Column<T> {
  header: string;
  value: (row: T) => string | number | boolean | null | undefined;
  /** Numbers and money read best right-aligned. */
  align?: 'left' | 'right';
  /** Longer cells are cut with `…` (summaries). */
  max?: number;
}

export function cell(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined || value === '') return '-';
  return String(value).replace(/\s+/g, ' ');
}

function clip(text: string, max: number | undefined): string {
  return max !== undefined && text.length > max ? `${text.slice(0, Math.max(0, max - 1))}…` : text;
}

/** Rows under a header line, columns separated by two spaces, no trailing spaces. An empty list says so. */
export function table<T>(rows: readonly T[], columns: readonly Column<T>[], empty = '(none)'): string {
  if (rows.length === 0) return `${empty}\n`;
  const cells = rows.map((row) => columns.map((c) => clip(cell(c.value(row)), c.max)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (columns[i]!.align === 'right' ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(columns.map((c) => c.header)), ...cells.map(line)].join('\n')}\n`;
}

/** `label: value` lines with the values aligned; null/undefined values are left out. */
export function fields(pairs: readonly [string, string | number | boolean | null | undefined][]): string {
  const shown = pairs.filter(([, v]) => v !== null && v !== undefined);
  const width = Math.max(0, ...shown.map(([k]) => k.length + 1));
  return (
    shown.map(([k, v]) => `${`${k}:`.padEnd(width)}  ${cell(v)}`.trimEnd()).join('\n') + (shown.length ? '\n' : '')
  );
}

/** Any JSON value for a person: strings as they are, everything else indented JSON. */
export function pretty(value: unknown): string {
  if (typeof value === 'string') return value.endsWith('\n') ? value : `${value}\n`;
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** A timestamp in its ISO form without milliseconds, `-` when absent. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '-';
  return iso.replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The search's count line: `5 of 57`, or `50 of 10000+` with a note when the total is a lower bound (more results
 * than the result window holds, and only its first `total` can be paged through; docs/decisions.md, issue 33).
 */
export function searchCount(shown: number, meta: { total?: unknown; total_exact?: unknown }): string {
  if (typeof meta.total !== 'number') return '';
  if (meta.total_exact !== false) return `${shown} of ${meta.total}\n`;
  const n = meta.total;
  return `${shown} of ${n}+ (at least ${n}; results page within the first ${n}: refine the query to reach the rest)\n`;
}
