/**
 * Small pieces the Catalog and Provider console pages share: dollars in forms ↔ integer cents, query strings from
 * GET forms (empty fields dropped), and `<option>` lists. The form helpers every section uses
 * (zod parsing, Post/Redirect/Get with flash codes, dates, dollar inputs) are in forms.ts.
 */
import { escapeHtml } from '../../../core/html.js';
import { ValidationError } from '../../../core/errors.js';
import type { AppContext } from '../../context.js';
import { fieldError } from '../form-errors.js';

const DOLLARS = /^\$?(\d{1,10})(?:\.(\d{1,2}))?$/;

/**
 * `0.05`, `$1`, `12.5` → cents; anything else (negative, more than 2 decimals, text) → 400 naming the field (`field`,
 * its label); with the input's `id`, a `FormError` whose message shows beside that input.
 */
export function dollarsToCents(raw: string, field: string, id?: string): number {
  const m = DOLLARS.exec(raw.trim());
  if (!m) {
    const negative = /^-/.test(raw.trim().replace('$', ''));
    const message = negative
      ? 'a price cannot be negative; enter zero or more dollars, like 0.05.'
      : 'enter a price in dollars with at most 2 decimals, like 0.05.';
    if (id !== undefined) throw fieldError(id, field, message);
    throw new ValidationError(`${field}: ${message}`, { details: { field } });
  }
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

/** The query of a GET form without its empty fields (an empty select means "any"). */
export function formQuery(ctx: AppContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(ctx.query)) {
    const value = Array.isArray(v) ? v[0] : v;
    if (typeof value === 'string' && value.trim() !== '') out[k] = value.trim();
  }
  return out;
}

/** `<option>`s with one selected. */
export function options(items: readonly { value: string; label: string }[], selected: string | undefined): string {
  return items
    .map(
      (o) =>
        `<option value="${escapeHtml(o.value)}"${o.value === selected ? ' selected' : ''}>${escapeHtml(o.label)}</option>`,
    )
    .join('');
}
