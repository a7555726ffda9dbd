// Words for people (issue 31, sections 5 and 6): zod's refusals as messages naming the field's label (and a
// textarea's line from 1), the pricing form's fee and net at any PLATFORM_FEE_PERCENT with the rounding said where it
// changes a cent, and history rows booked in one instant put back in the order their balances chain.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { FormError, parseFormFields, problemsOf } from '../../api/pages/form-errors.js';
import { feeFigures } from '../../api/pages/console/provider-pricing-form.js';
import { endpointsField, readEndpointLines } from '../../api/pages/console/provider-endpoints.js';
import { ValidationError } from '../../core/errors.js';
import { chainOrder } from '../../core/billing/ledger-words.js';
import { CreateApiBody } from '../../core/providers/providers.schemas.js';
import { splitPrice } from '../../core/money/split.js';

function refusal(fn: () => unknown): FormError {
  try {
    fn();
  } catch (err) {
    if (err instanceof FormError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('parseFormFields', () => {
  const Schema = z
    .object({
      name: z.string().trim().min(1).max(5),
      budget_cents: z.number().int().min(500),
      scopes: z.array(z.enum(['a', 'b'])).min(1),
      slug: z.string().regex(/^[a-z]+$/, 'must be lower-case letters'),
    })
    .strict();

  it('words zod’s defaults for people, keeps a schema’s own message, names each field by its label and input', () => {
    const err = refusal(() =>
      parseFormFields(
        Schema,
        { name: '  ', budget_cents: 100, scopes: [], slug: 'X' },
        { name: { id: 'new-name', label: 'Name' }, budget_cents: 'Budget', scopes: 'Scopes' },
      ),
    );
    expect(err.status).toBe(400);
    expect(err.fields).toEqual({
      'new-name': 'Name: this field is required.',
      budget_cents: 'Budget: must be $5.00 or more.',
      scopes: 'Scopes: choose at least one.',
      slug: 'Slug: must be lower-case letters.',
    });
  });

  it('names a textarea’s list items by the line they were written on, counted from 1', () => {
    const lines = readEndpointLines('# comment\n\nGET /a\nGET no-slash 0.05');
    expect(lines.lineOf).toEqual([3, 4]);
    const err = refusal(() =>
      parseFormFields(
        CreateApiBody,
        { name: 'x', slug: 'x', summary: 'x', base_url: 'https://x.example', endpoints: lines.endpoints },
        { endpoints: endpointsField(lines.lineOf) },
      ),
    );
    expect(err.fields).toEqual({
      endpoints: 'Endpoints, line 4, path: must start with / and use URL path characters.',
    });
    expect(err.message).not.toMatch(/endpoints\.\d/);
  });

  it('puts a service’s refusal that names a field (`base_url: …`) beside that field, with its label', () => {
    const problems = problemsOf(new ValidationError('base_url: must not carry a query or fragment.'), {
      base_url: 'Upstream base URL',
    });
    expect(problems.fields).toEqual({ base_url: 'Upstream base URL: must not carry a query or fragment.' });
    expect(problemsOf(new ValidationError('Something else.'), {}).fields).toEqual({});
  });
});

describe('feeFigures', () => {
  it('is the fee split rule, with the rounding said only when the percentage is not a whole cent', () => {
    expect(feeFigures(3, 20)).toEqual({ fee: '$0.01', net: '$0.02', rounding: '20% of 3¢ is 0.6¢, rounded to 1¢' });
    expect(feeFigures(1, 20)).toEqual({ fee: '$0.00', net: '$0.01', rounding: '20% of 1¢ is 0.2¢, rounded to 0¢' });
    expect(feeFigures(10, 20)).toEqual({ fee: '$0.02', net: '$0.08', rounding: '' });
    expect(feeFigures(0, 20)).toEqual({ fee: '$0.00', net: '$0.00', rounding: '' });
    // PLATFORM_FEE_PERCENT is configurable: the same rule at 25% (half a cent rounds up).
    expect(feeFigures(2, 25)).toEqual({ fee: '$0.01', net: '$0.01', rounding: '25% of 2¢ is 0.5¢, rounded to 1¢' });
    expect(feeFigures(1234, 15)).toMatchObject({ fee: '$1.85', net: '$10.49' });
    for (const [price, pct] of [
      [3, 20],
      [7, 30],
      [999, 12],
    ] as const) {
      const split = splitPrice(price, pct);
      expect(feeFigures(price, pct).fee).toBe(`$${(split.platformFeeCents / 100).toFixed(2)}`);
    }
  });
});

describe('chainOrder', () => {
  it('orders rows of one instant by how their balances chain, newest first', () => {
    const at = '2026-11-28 10:00:00+00';
    const fee = { id: 'fee', created_at: at, amount_cents: '-1', balance_after_cents: '8' };
    const earning = { id: 'earning', created_at: at, amount_cents: '3', balance_after_cents: '9' };
    const older = { id: 'older', created_at: '2026-11-28 09:00:00+00', amount_cents: '6', balance_after_cents: '6' };
    expect(chainOrder([earning, fee, older]).map((r) => r.id)).toEqual(['fee', 'earning', 'older']);
    expect(chainOrder([fee, earning, older]).map((r) => r.id)).toEqual(['fee', 'earning', 'older']);
    // Balances that do not chain (a row missing from the page): the order given.
    const stray = { id: 'stray', created_at: at, amount_cents: '5', balance_after_cents: '50' };
    expect(chainOrder([stray, fee]).map((r) => r.id)).toEqual(['stray', 'fee']);
  });
});
