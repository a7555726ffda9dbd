/**
 * Form helpers shared by every console section: parse with the REST route's own zod schema (`parseForm`, from the
 * pages), Post/Redirect/Get with a flash code (`seeOther`, `flash`), and how time is written in tables (dollar inputs:
 * ../dollars.ts).
 */
import { escapeHtml } from '../../../core/html.js';
import type { AppContext } from '../../context.js';
import { banner } from './shell.js';

export { parseForm } from '../forms.js';

/** A 303 back to a console page, with a flash code (`?done=…`: a fixed code, never text) when given. */
export function seeOther(ctx: AppContext, path: string, done?: string): void {
  ctx.status = 303;
  ctx.redirect(done ? `${path}${path.includes('?') ? '&' : '?'}done=${encodeURIComponent(done)}` : path);
}

type FlashMessage = string | ['good' | 'warn' | 'bad', string];

/** The banner for `?done=<code>`, if the page knows the code (a plain string is a good-news banner). */
export function flash(ctx: AppContext, messages: Record<string, FlashMessage>): string[] {
  const code = typeof ctx.query.done === 'string' ? ctx.query.done : '';
  const hit = Object.hasOwn(messages, code) ? messages[code] : undefined;
  if (hit === undefined) return [];
  const [kind, text] = typeof hit === 'string' ? (['good', hit] as const) : hit;
  return [banner(kind, escapeHtml(text))];
}

/** A timestamp for a table: `2026-11-25 14:03 UTC`. */
export function when(iso: string | null | undefined): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : '—';
}
