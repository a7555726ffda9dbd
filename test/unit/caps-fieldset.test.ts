// The one caps fieldset and parser (api/pages/caps-fieldset.ts, api/pages/dollars.ts): dollars in, cents out, the
// legacy cent-valued names read when the dollar field is not sent, and an error naming the field for a bad amount.
import { describe, expect, it } from 'vitest';
import { capsFieldset, capsFromForm } from '../../api/pages/caps-fieldset.js';
import { centsFromDollars } from '../../api/pages/dollars.js';

describe('centsFromDollars', () => {
  it('reads dollars as integer cents; blank is null', () => {
    expect(centsFromDollars('5', 'Budget')).toBe(500);
    expect(centsFromDollars('5.5', 'Budget')).toBe(550);
    expect(centsFromDollars(' $1,000.05 ', 'Budget')).toBe(100_005);
    expect(centsFromDollars('0', 'Budget')).toBe(0);
    expect(centsFromDollars('', 'Budget')).toBeNull();
    expect(centsFromDollars(undefined, 'Budget')).toBeNull();
  });

  it('refuses a negative amount, more than two decimals and text, naming the field', () => {
    expect(() => centsFromDollars('-5', 'Budget')).toThrow('Budget: cannot be negative');
    expect(() => centsFromDollars('$-0.50', 'Daily cap')).toThrow('Daily cap: cannot be negative');
    expect(() => centsFromDollars('1.234', 'Per-call maximum')).toThrow('Per-call maximum: at most 2 decimals');
    expect(() => centsFromDollars('lots', 'Budget')).toThrow('Budget: enter an amount in dollars');
  });
});

describe('capsFromForm', () => {
  it('reads the dollar fields (blank = no cap) and the approval box', () => {
    expect(capsFromForm({ budget: '12.50', daily_cap: '', per_call_max: '0.05', approval_mode: 'on' })).toEqual({
      budget_cents: 1250,
      daily_cap_cents: null,
      per_call_max_cents: 5,
      approval_mode: true,
    });
  });

  it('reads the legacy cent-valued names when the dollar field is not sent; the dollar field wins when it is', () => {
    expect(capsFromForm({ budget_cents: '1500', daily_cap_cents: '400', per_call_max_cents: '' })).toEqual({
      budget_cents: 1500,
      daily_cap_cents: 400,
      per_call_max_cents: null,
      approval_mode: false,
    });
    expect(capsFromForm({ budget: '2', budget_cents: '1500' }).budget_cents).toBe(200);
    expect(capsFromForm({ budget: '', budget_cents: '1500' }).budget_cents).toBeNull();
    expect(() => capsFromForm({ budget_cents: '12.5' })).toThrow('budget_cents: whole cents');
    expect(() => capsFromForm({ budget: '-1' })).toThrow('Budget: cannot be negative');
  });
});

describe('capsFieldset', () => {
  it('shows the caps in dollars under the given id prefix', () => {
    const html = capsFieldset('consent', {
      budget_cents: 1000,
      daily_cap_cents: null,
      per_call_max_cents: 5,
      approval_mode: true,
    });
    expect(html).toMatch(/id="consent-budget" name="budget"[^>]* value="10\.00"/);
    expect(html).toMatch(/id="consent-daily_cap" name="daily_cap"[^>]* value=""/);
    expect(html).toMatch(/id="consent-per_call_max" name="per_call_max"[^>]* value="0\.05"/);
    expect(html).toContain('id="consent-approval" name="approval_mode" checked');
  });
});
