/**
 * Validation messages written for people (issue 31, section 6): the pages' forms parse with the REST routes' own zod
 * schemas, whose issues read like `endpoints.0.price_cents: Too small: expected number to be >=0`. Here a form names
 * its fields (the input's id and its label, by the schema's top-level key, or a function for list items such as a
 * textarea's lines), a per-parse error map words zod's default messages as instructions (the schemas' own messages,
 * already written for people, win), and a refusal becomes a `FormError` carrying one message per field. The pages then
 * re-render the form with what was typed, each message beside its field (`aria-invalid`, `aria-describedby`) and a
 * summary at the top linking to the fields.
 */
import type { z } from 'zod';
import { AppError, ValidationError } from '../../core/errors.js';
import { escapeHtml } from '../../core/html.js';

/** Where a message is shown (the input's id) and the field's name as the person reads it (its label). */
export interface FieldSpec {
  id: string;
  label: string;
}

/**
 * A form's fields by the schema's top-level key: a spec, a label (the id is then the key), or a function of the rest
 * of the issue's path (list items: `endpoints.2.price_cents` → the textarea's line 3, price).
 */
export type FormFields = Record<string, string | FieldSpec | ((rest: readonly PropertyKey[]) => FieldSpec)>;

/** What a refused form shows: the summary, and per input id its message. */
export interface FormProblems {
  message: string;
  fields: Record<string, string>;
}

/** A refused form: a 400 whose message lists every problem, with the message of each field by input id. */
export class FormError extends ValidationError {
  constructor(readonly fields: Record<string, string>) {
    super(Object.values(fields).join(' '), { details: { fields } });
  }
}

const count = (n: number | bigint, one: string, many = `${one}s`) => `${n} ${Number(n) === 1 ? one : many}`;

const TYPE_WORDS: Record<string, string> = {
  number: 'a number',
  int: 'a whole number',
  string: 'text',
  boolean: 'yes or no',
  array: 'a list',
  object: 'a set of fields',
};

const FORMAT_WORDS: Record<string, string> = {
  email: 'enter an email address, like name@example.com.',
  url: 'enter a full URL, like https://api.example.com.',
  datetime: 'enter a date and time, like 2026-12-01T09:00:00Z.',
  date: 'enter a date, like 2026-12-01.',
};

type RawIssue = z.core.$ZodRawIssue;

/** A number as the field shows it: dollars for a `…_cents` field (the forms take dollars), else as it is. */
function amount(iss: RawIssue, n: number | bigint): string {
  if (!String(iss.path?.at(-1) ?? '').endsWith('_cents')) return String(n);
  return `$${(Number(n) / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

function tooSmall(iss: Extract<RawIssue, { code: 'too_small' }>): string {
  const min = iss.minimum;
  if (iss.origin === 'string')
    return Number(min) <= 1 ? 'this field is required.' : `enter at least ${count(min, 'character')}.`;
  if (iss.origin === 'array' || iss.origin === 'set')
    return Number(min) <= 1 ? 'choose at least one.' : `choose at least ${min}.`;
  return iss.inclusive === false ? `must be more than ${amount(iss, min)}.` : `must be ${amount(iss, min)} or more.`;
}

function tooBig(iss: Extract<RawIssue, { code: 'too_big' }>): string {
  const max = iss.maximum;
  if (iss.origin === 'string') return `use at most ${count(max, 'character')}.`;
  if (iss.origin === 'array' || iss.origin === 'set') return `at most ${max} are allowed.`;
  return iss.inclusive === false ? `must be less than ${amount(iss, max)}.` : `must be ${amount(iss, max)} or less.`;
}

/** zod's default messages, as instructions (undefined: keep zod's). A schema's own message takes precedence. */
export function humanIssue(iss: RawIssue): string | undefined {
  switch (iss.code) {
    case 'invalid_type':
      return iss.input === undefined || iss.input === null || iss.input === ''
        ? 'this field is required.'
        : `enter ${TYPE_WORDS[iss.expected] ?? 'a valid value'}.`;
    case 'too_small':
      return tooSmall(iss);
    case 'too_big':
      return tooBig(iss);
    case 'invalid_format':
      return FORMAT_WORDS[iss.format] ?? 'is not in the expected format.';
    case 'invalid_value':
      return `choose one of ${iss.values.map(String).join(', ')}.`;
    case 'unrecognized_keys':
      return `this form does not take ${iss.keys.join(', ')}.`;
    default:
      return 'is not valid.';
  }
}

/** `price_cents` → `Price`; `2` → `item 3` (a fallback when the form names no label). */
function words(segment: PropertyKey): string {
  if (typeof segment === 'number') return `item ${segment + 1}`;
  const text = String(segment)
    .replace(/_cents$/, '')
    .replace(/_/g, ' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The field an issue path belongs to: the form's name for its top-level key, else one made of the path's words. */
export function fieldOf(path: readonly PropertyKey[], fields: FormFields = {}): FieldSpec {
  const [head, ...rest] = path;
  if (head === undefined) return { id: '', label: '' };
  const named = Object.hasOwn(fields, String(head)) ? fields[String(head)] : undefined;
  if (typeof named === 'function') return named(rest);
  const spec =
    typeof named === 'string'
      ? { id: String(head), label: named }
      : (named ?? { id: String(head), label: words(head) });
  return rest.length
    ? { id: spec.id, label: [spec.label, ...rest.map((s) => words(s).toLowerCase())].join(', ') }
    : spec;
}

const sentence = (label: string, message: string) => {
  const text = message.trim().replace(/[.]?$/, '.');
  return label ? `${label}: ${text}` : text.charAt(0).toUpperCase() + text.slice(1);
};

/** Parse with a route's own schema; a refusal is a `FormError` worded for people, one message per field. */
export function parseFormFields<S extends z.ZodType>(schema: S, value: unknown, fields?: FormFields): z.output<S> {
  const r = schema.safeParse(value, { error: humanIssue });
  if (r.success) return r.data;
  const out: Record<string, string> = {};
  for (const issue of r.error.issues) {
    const field = fieldOf(issue.path, fields);
    const key = field.id || 'form';
    if (!out[key]) out[key] = sentence(field.label, issue.message);
  }
  throw new FormError(out);
}

/** One field's refusal (a rule a page checks itself, like a textarea line): a `FormError` for that input. */
export function fieldError(id: string, label: string, message: string): FormError {
  return new FormError({ [id]: sentence(label, message) });
}

/**
 * What a refused form shows for `err`: a `FormError`'s fields; a domain error naming a field (`details.field`, or a
 * message starting `base_url: `, as the services write them for the API) under that field with its label; anything
 * else as the summary alone.
 */
export function problemsOf(err: AppError, fields: FormFields = {}): FormProblems {
  if (err instanceof FormError) return { message: err.message, fields: err.fields };
  const named = typeof err.details?.field === 'string' ? err.details.field : undefined;
  const prefix = /^([a-z_]+): (.+)$/s.exec(err.message);
  const key = named ?? (prefix && Object.hasOwn(fields, prefix[1]!) ? prefix[1] : undefined);
  if (key === undefined || !Object.hasOwn(fields, key)) return { message: err.message, fields: {} };
  const field = fieldOf([key], fields);
  const text = prefix && prefix[1] === key ? sentence(field.label, prefix[2]!) : err.message;
  return { message: text, fields: { [field.id]: text } };
}

/** `err` as a form's problems when it is a refusal a person can fix (a 4xx other than 403), else undefined. */
export function fixable(err: unknown, fields?: FormFields): FormProblems | undefined {
  if (!(err instanceof AppError) || err.status >= 500 || err.status === 403) return undefined;
  return problemsOf(err, fields);
}

/** The attributes of an input: `aria-invalid` and its message's id when refused, plus its own help text's id. */
export function invalidAttrs(p: FormProblems | undefined, id: string, help?: string): string {
  const bad = p?.fields[id] !== undefined;
  const describedBy = [bad ? `${id}-error` : '', help ?? ''].filter(Boolean).join(' ');
  return `${bad ? ' aria-invalid="true"' : ''}${describedBy ? ` aria-describedby="${escapeHtml(describedBy)}"` : ''}`;
}

/** The message beside a refused field (empty when it is fine). */
export function fieldMessage(p: FormProblems | undefined, id: string): string {
  const message = p?.fields[id];
  return message === undefined
    ? ''
    : `<p id="${escapeHtml(id)}-error" class="error field-error">${escapeHtml(message)}</p>`;
}

/**
 * The summary above a refused form (role=alert): one problem as a line, several as a list linking to their fields;
 * a problem tied to no field (a domain refusal) is its message alone.
 */
export function problemSummary(p: FormProblems | undefined): string {
  if (!p) return '';
  const entries = Object.entries(p.fields);
  if (entries.length <= 1) return `<p class="error" role="alert">${escapeHtml(p.message)}</p>`;
  const items = entries
    .map(([id, m]) =>
      id === 'form' ? `<li>${escapeHtml(m)}</li>` : `<li><a href="#${escapeHtml(id)}">${escapeHtml(m)}</a></li>`,
    )
    .join('');
  return `<div class="error" role="alert"><p>Please correct ${entries.length} fields:</p><ul>${items}</ul></div>`;
}
