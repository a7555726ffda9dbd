/**
 * A key's money caps in a form, one fieldset and one parser for every page that sets them: the console's key forms
 * (create, edit caps) and the OAuth consent page. People type dollars (`5`, `5.00`; blank = no cap); the parser turns
 * them into the key routes' cent fields. For outside clients that post the consent form by hand, the old cent-valued
 * names (`budget_cents`, `daily_cap_cents`, `per_call_max_cents`, whole cents) are still read when the dollar field
 * of the same cap is not sent at all (docs/console.md, "Caps in forms").
 */
import { ValidationError } from '../../core/errors.js';
import { centsFromDollars, dollarsValue } from './dollars.js';
import { fieldMessage, FormError, type FormFields, type FormProblems, invalidAttrs } from './form-errors.js';
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

/** A refused form shown again: the fields as typed, and the messages by input id (form-errors.ts). */
export interface CapsShown {
  typed?: Record<string, string>;
  problems?: FormProblems;
}

/**
 * The three dollar inputs and the approval-mode box, filled from `caps` or, for a refused form, as typed with each
 * message beside its input (ids `<prefix>-budget`, `<prefix>-daily_cap`, `<prefix>-per_call_max`, `<prefix>-approval`).
 */
export function capsFieldset(prefix: string, caps?: Partial<CapsValues>, shown: CapsShown = {}): string {
  const id = escapeHtml(prefix);
  const { typed, problems } = shown;
  const input = (c: (typeof CAPS)[number]) =>
    `<div><label for="${id}-${c.name}">${c.label} (USD)</label>
<input id="${id}-${c.name}" name="${c.name}" type="text" inputmode="decimal" size="9" value="${escapeHtml(typed?.[c.name] ?? dollarsValue(caps?.[c.cents]))}"${invalidAttrs(problems, `${prefix}-${c.name}`, `${prefix}-${c.name}-hint`)}>
<div id="${id}-${c.name}-hint" class="muted">${c.hint}</div>${fieldMessage(problems, `${prefix}-${c.name}`)}</div>`;
  const approval = typed ? typed.approval_mode === 'on' : caps?.approval_mode;
  return `<div class="cap-fields">
${CAPS.map(input).join('\n')}
<div><label for="${id}-approval"><input type="checkbox" id="${id}-approval" name="approval_mode"${approval ? ' checked' : ''}> Approval mode</label>
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
 * cent-valued field, else null. A bad amount is a 400 naming the field; with the fieldset's `prefix`, a `FormError`
 * whose message shows beside that input.
 */
export function capsFromForm(form: Record<string, string>, prefix?: string): CapsValues {
  const caps = { approval_mode: form.approval_mode === 'on' } as CapsValues;
  const problems: Record<string, string> = {};
  for (const c of CAPS) {
    try {
      caps[c.cents] = Object.hasOwn(form, c.name)
        ? centsFromDollars(form[c.name], c.label)
        : legacyCents(form, c.cents);
    } catch (err) {
      if (prefix === undefined || !(err instanceof ValidationError)) throw err;
      problems[`${prefix}-${c.name}`] = err.message;
    }
  }
  if (Object.keys(problems).length) throw new FormError(problems);
  return caps;
}

/** The caps' fields by the key routes' schema, for a fieldset of ids `<prefix>-…` (form-errors.ts). */
export function capsFields(prefix: string): FormFields {
  return Object.fromEntries([
    ...CAPS.map((c) => [c.cents, { id: `${prefix}-${c.name}`, label: c.label }]),
    ['approval_mode', { id: `${prefix}-approval`, label: 'Approval mode' }],
  ]) as FormFields;
}
