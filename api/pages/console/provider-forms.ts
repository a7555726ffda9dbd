/**
 * Small pieces the Catalog and Provider console pages share: dollars in forms ↔ integer cents, query strings from
 * GET forms (empty fields dropped), zod parsing into a 400 with the field named, and flash banners after a POST
 * (Post/Redirect/Get: the redirect carries a fixed code, never text, so a link cannot put words on the page).
 */
import type { z } from 'zod';
import { escapeHtml } from '../../../core/html.js';
import { ValidationError } from '../../../core/errors.js';
import type { AppContext } from '../../context.js';
import { formatIssues } from '../../middleware/body.js';
import { banner } from './shell.js';

const DOLLARS = /^\$?(\d{1,10})(?:\.(\d{1,2}))?$/;

/** `0.05`, `$1`, `12.5` → cents; anything else (negative, more than 2 decimals, text) → 400 naming the field. */
export function dollarsToCents(raw: string, field: string): number {
  const m = DOLLARS.exec(raw.trim());
  if (!m) {
    const negative = /^-/.test(raw.trim().replace('$', ''));
    throw new ValidationError(
      negative
        ? `${field}: a price cannot be negative; enter zero or more dollars, like 0.05.`
        : `${field}: enter a price in dollars with at most 2 decimals, like 0.05.`,
      { details: { field } },
    );
  }
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

/** Cents as the value of a price input (`5` → `0.05`). */
export function centsToDollars(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
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

/** Parse with a route's own schema; a failure is a 400 whose message names the fields. */
export function parseForm<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ValidationError(formatIssues(parsed.error).message);
  return parsed.data;
}

/** A 303 back to a console page with a flash code. */
export function seeOther(ctx: AppContext, path: string, done?: string): void {
  ctx.status = 303;
  ctx.redirect(done ? `${path}${path.includes('?') ? '&' : '?'}done=${encodeURIComponent(done)}` : path);
}

/** The banner for `?done=<code>`, if the page knows the code. */
export function flash(ctx: AppContext, messages: Record<string, ['good' | 'warn' | 'bad', string]>): string[] {
  const code = typeof ctx.query.done === 'string' ? ctx.query.done : '';
  const hit = Object.hasOwn(messages, code) ? messages[code] : undefined;
  return hit ? [banner(hit[0], escapeHtml(hit[1]))] : [];
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

/** An inline error next to a form (role=alert so it is announced). */
export const formError = (message?: string) =>
  message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : '';

/** `2026-11-25T10:00:00.000Z` → `2026-11-25 10:00 UTC`. */
export function when(iso: string | null | undefined): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : '—';
}
