/**
 * Dollars in the human pages' forms ↔ integer cents: what people type in a money input (`5`, `5.5`, `$5.00`, `1,000`)
 * read as cents, with an error naming the field for a negative amount, more than two decimals or text; and cents
 * written back as the value of a dollar input or a CSV cell. Money is integer cents everywhere else.
 */
import { ValidationError } from '../../core/errors.js';

const DOLLARS = /^\$?\s*(\d{1,10})(?:\.(\d{1,2}))?$/;

/** A dollar amount from a form as integer cents; blank is null (no cap); anything else is a 400 naming the field. */
export function centsFromDollars(value: string | undefined, field: string): number | null {
  const text = (value ?? '').trim().replace(/,/g, '');
  if (text === '') return null;
  const m = DOLLARS.exec(text);
  if (m) return Number(m[1]) * 100 + Number((m[2] ?? '0').padEnd(2, '0'));
  if (/^-\s*\$?\s*\d|^\$\s*-/.test(text)) {
    throw new ValidationError(
      `${field}: cannot be negative; enter zero or more dollars, like 5.00 (or leave it blank).`,
    );
  }
  if (/^\$?\s*\d+\.\d{3,}$/.test(text)) {
    throw new ValidationError(`${field}: at most 2 decimals (whole cents), like 5.25 (or leave it blank).`);
  }
  throw new ValidationError(`${field}: enter an amount in dollars, like 5 or 5.00 (or leave it blank).`);
}

/** Integer cents as the value of a dollar input or a CSV cell (`5` → `0.05`), empty for null. */
export function dollarsValue(cents: number | null | undefined): string {
  if (cents == null) return '';
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Integer cents as text on a page: `$12.34`. */
export const usd = (cents: number) => `$${(cents / 100).toFixed(2)}`;
