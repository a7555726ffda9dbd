/**
 * A key's money caps in a form, one fieldset and one parser for every page that sets them: the console's key forms
 * (create, edit caps) and the OAuth consent page. People type dollars (`5`, `5.00`; blank = no cap); the parser turns
 * them into the key routes' cent fields. For outside clients that post the consent form by hand, the old cent-valued
 * names (`budget_cents`, `daily_cap_cents`, `per_call_max_cents`, whole cents) are still read when the dollar field
 * of the same cap is not sent at all (docs/console.md, "Caps in forms").
 */
import { ValidationError } from '../../core/errors.js';
import { centsFromDollars, dollarsValue } from './dollars.js';
import { escapeHtml } from './layout.js';

/** The four governance fields of a key, in cents (null = no cap). */
export interface CapsValues {
  budget_cents: number | null;
  daily_cap_cents: number | null;
  per_call_max_cents: number | null;
  approval_mode: boolean;
}

type CentsField = 'budget_cents' | 'daily_cap_cents' | 'per_call_max_cents';

/** Each cap: its dollar input's name, the cent-valued name it replaced, its label and hint. */
const CAPS: readonly { name: string; cents: CentsField; label: string; hint: string }[] = [
  { name: 'budget', cents: 'budget_cents', label: 'Budget', hint: 'total; blank for none' },
  { name: 'daily_cap', cents: 'daily_cap_cents', label: 'Daily cap', hint: 'per UTC day; blank for none' },
  { name: 'per_call_max', cents: 'per_call_max_cents', label: 'Per-call maximum', hint: 'blank for none' },
];

/**
 * The three dollar inputs and the approval-mode box, filled from `caps` (ids `<prefix>-budget`, `<prefix>-daily_cap`,
 * `<prefix>-per_call_max`, `<prefix>-approval`).
 */
export function capsFieldset(prefix: string, caps?: Partial<CapsValues>): string {
  const id = escapeHtml(prefix);
  const input = (c: (typeof CAPS)[number]) =>
    `<div><label for="${id}-${c.name}">${c.label} (USD)</label>
<input id="${id}-${c.name}" name="${c.name}" type="text" inputmode="decimal" size="9" value="${dollarsValue(caps?.[c.cents])}" aria-describedby="${id}-${c.name}-hint">
<div id="${id}-${c.name}-hint" class="muted">${c.hint}</div></div>`;
  return `<div class="cap-fields">
${CAPS.map(input).join('\n')}
<div><label for="${id}-approval"><input type="checkbox" id="${id}-approval" name="approval_mode"${caps?.approval_mode ? ' checked' : ''}> Approval mode</label>
<div class="muted">paid calls wait for an owner or admin to approve spend</div></div>
</div>`;
}

/** Whole cents from a legacy cent-valued field; blank is null (no cap). */
function legacyCents(form: Record<string, string>, name: CentsField): number | null {
  const raw = (form[name] ?? '').trim();
  if (raw === '') return null;
  if (!/^\d{1,12}$/.test(raw)) throw new ValidationError(`${name}: whole cents, like 500 (or leave it blank).`);
  return Number(raw);
}

/**
 * The caps a form sent, in cents: each cap from its dollar field, or (that field not sent at all) from its legacy
 * cent-valued field, else null. A bad amount is a 400 naming the field.
 */
export function capsFromForm(form: Record<string, string>): CapsValues {
  const caps = { approval_mode: form.approval_mode === 'on' } as CapsValues;
  for (const c of CAPS) {
    caps[c.cents] = Object.hasOwn(form, c.name) ? centsFromDollars(form[c.name], c.label) : legacyCents(form, c.cents);
  }
  return caps;
}
