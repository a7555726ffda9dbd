/**
 * What a refused admission answers: the error code, message and details for each spend-governance outcome of
 * SpendStore.admit. Written once, used by the gateway (the real call) and the quote (would this call be admitted?).
 */
import { AppError, PaymentRequiredError } from '../errors.js';
import type { KeyAuth } from '../keys/keys.service.js';
import type { Admission, AdmitInput } from './spend-store.js';

/**
 * What a key may spend in total: its budget, and for an approval-mode key no more than people have approved (the
 * lower of the two).
 */
export function spendLimit(key: KeyAuth): number | null {
  if (!key.approvalMode) return key.budgetCents;
  return key.budgetCents === null ? key.approvedCents : Math.min(key.budgetCents, key.approvedCents);
}

/**
 * The part of an admission a key decides: its caps and its ancestors' budgets and daily caps. The gateway and the quote build their
 * admissions from this one rule.
 */
export function keyGovernance(
  key: KeyAuth,
): Pick<AdmitInput, 'keyId' | 'rateKey' | 'perCallMaxCents' | 'budgetCents' | 'dailyCapCents' | 'ancestors'> {
  return {
    keyId: key.keyId,
    rateKey: key.keyPrefix,
    perCallMaxCents: key.perCallMaxCents,
    budgetCents: spendLimit(key),
    dailyCapCents: key.dailyCapCents,
    ancestors: key.ancestors,
  };
}

/** The approval, not the budget, is what stopped the call. */
export function approvalBinds(key: KeyAuth): boolean {
  return key.budgetCents === null || key.approvedCents < key.budgetCents;
}

export type RefusalOutcome = Extract<
  Admission,
  { outcome: 'suspended' | 'per_call' | 'budget' | 'daily_cap' | 'funds' | 'credit_limit' }
>;

type RefusalInput = Pick<
  AdmitInput,
  'keyId' | 'priceCents' | 'perCallMaxCents' | 'budgetCents' | 'dailyCapCents' | 'ancestors' | 'day'
>;

/** Cents for people: `$1.23` (`-$0.40` for an overdrawn balance). */
export function usd(cents: number): string {
  return `${cents < 0 ? '-' : ''}$${(Math.abs(cents) / 100).toFixed(2)}`;
}

/** When a daily cap of UTC day `day` (YYYY-MM-DD) resets: the next UTC midnight, ISO 8601. */
export function capResetsAt(day: string): string {
  const next = new Date(`${day}T00:00:00.000Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return next.toISOString();
}

const leftOf = (limit: number, spent: number): number => Math.max(0, limit - spent);

/**
 * The error a spend-governance refusal answers: each says what stopped the call, what is spent and what is left (in
 * the message and, in integer cents, in `details`: `spent_cents`, `left_cents`, and for a daily cap `resets_at`).
 * `approval` is the key when it is in approval mode.
 */
export function refusalError(
  admission: RefusalOutcome,
  input: RefusalInput,
  approval: KeyAuth | undefined,
  publicBaseUrl: string,
): AppError {
  switch (admission.outcome) {
    case 'suspended':
      return suspendedRefusal(input, publicBaseUrl);
    case 'per_call':
      return perCallRefusal(admission, input);
    case 'budget':
      return budgetRefusal(admission, input, approval, publicBaseUrl);
    case 'daily_cap':
      return dailyCapRefusal(admission, input);
    case 'funds': {
      const left = Math.max(0, admission.availableCents);
      return new PaymentRequiredError(
        `Prepaid credits are exhausted: ${usd(left)} left (after calls in flight) and this call costs ` +
          `${usd(input.priceCents)}; this key has spent ${usd(admission.spentCents)} in all. Buy credits or add a card.`,
        {
          details: {
            price_cents: input.priceCents,
            reason: 'insufficient_credits',
            spent_cents: admission.spentCents,
            left_cents: left,
          },
        },
      );
    }
    case 'credit_limit':
      return new PaymentRequiredError(
        "This organization's card credit limit is reached: paid calls resume once the unpaid usage is charged to the " +
          `card (or an operator raises the limit). ${usd(Math.max(0, admission.availableCents))} of the limit is ` +
          `left and this call costs ${usd(input.priceCents)}.`,
        {
          details: {
            price_cents: input.priceCents,
            reason: 'credit_limit_reached',
            spent_cents: admission.spentCents,
            left_cents: Math.max(0, admission.availableCents),
          },
        },
      );
  }
}

/**
 * A suspended org (docs/decisions.md, suspension): the gateway refuses every call, free ones too, with 402
 * `payment_required` and `details.reason: suspended`. The message says so (it used to say "paid calls are refused"
 * even to a free call) and where a person sees why and what lifts it.
 */
function suspendedRefusal(input: RefusalInput, publicBaseUrl: string): AppError {
  const call = input.priceCents === 0 ? 'this free endpoint included' : 'free and paid alike';
  const billingUrl = `${publicBaseUrl}/console/billing`;
  return new PaymentRequiredError(
    `This organization is suspended, so the gateway refuses all of its calls (${call}). An owner sees why and what ` +
      `lifts it at ${billingUrl}: a successful payment lifts a suspension for a failed payment; the operator lifts ` +
      'the others.',
    { details: { reason: 'suspended', price_cents: input.priceCents, billing_url: billingUrl } },
  );
}

function perCallRefusal(admission: Extract<RefusalOutcome, { outcome: 'per_call' }>, input: RefusalInput): AppError {
  const { budgetCents } = input;
  const spent = admission.spentCents;
  const budget =
    budgetCents === null
      ? ' (it has no budget)'
      : ` of its ${usd(budgetCents)} budget, ${usd(leftOf(budgetCents, spent))} left`;
  return new AppError(
    'per_call_limit_exceeded',
    `This call costs ${usd(input.priceCents)}, more than this key may spend on one call ` +
      `(${usd(input.perCallMaxCents ?? 0)}). The key has spent ${usd(spent)}${budget}.`,
    {
      details: {
        price_cents: input.priceCents,
        per_call_max_cents: input.perCallMaxCents,
        spent_cents: spent,
        left_cents: budgetCents === null ? null : leftOf(budgetCents, spent),
      },
    },
  );
}

/** Over a budget: the key's own, an ancestor's, or (approval mode) the spend a person approved. */
function budgetRefusal(
  admission: Extract<RefusalOutcome, { outcome: 'budget' }>,
  input: RefusalInput,
  approval: KeyAuth | undefined,
  publicBaseUrl: string,
): AppError {
  const spent = admission.spentCents;
  const price = usd(input.priceCents);
  if (approval && approvalBinds(approval) && admission.ancestorKeyId === undefined) {
    const left = leftOf(approval.approvedCents, spent);
    return new PaymentRequiredError(
      `This key is in approval mode: a person must approve more spend before this paid call (it costs ${price}; ` +
        `${usd(spent)} of the ${usd(approval.approvedCents)} approved is spent, ${usd(left)} left).`,
      {
        details: {
          reason: 'approval_required',
          approval_url: `${publicBaseUrl}/approve/${input.keyId}`,
          approved_cents: approval.approvedCents,
          price_cents: input.priceCents,
          spent_cents: spent,
          left_cents: left,
        },
      },
    );
  }
  if (admission.ancestorKeyId !== undefined) {
    const budget = input.ancestors.find((a) => a.keyId === admission.ancestorKeyId)?.budgetCents ?? null;
    const left = budget === null ? 0 : leftOf(budget, spent);
    return new AppError(
      'insufficient_budget',
      `The call (${price}) would exceed the budget of a key above this one (${admission.ancestorKeyId}): ` +
        `${usd(spent)} of its ${usd(budget ?? 0)} is spent, ${usd(left)} left (a child's spend counts against its parents).`,
      {
        details: {
          price_cents: input.priceCents,
          budget_cents: budget,
          key_id: admission.ancestorKeyId,
          spent_cents: spent,
          left_cents: left,
        },
      },
    );
  }
  const budget = input.budgetCents ?? 0;
  const left = leftOf(budget, spent);
  return new AppError(
    'insufficient_budget',
    `The call (${price}) would exceed this key's budget: ${usd(spent)} of ${usd(budget)} is spent (counting the keys ` +
      `it minted), ${usd(left)} left.`,
    {
      details: { price_cents: input.priceCents, budget_cents: input.budgetCents, spent_cents: spent, left_cents: left },
    },
  );
}

/** Over a daily cap (UTC day): the key's own or an ancestor's; it resets at the next UTC midnight. */
function dailyCapRefusal(admission: Extract<RefusalOutcome, { outcome: 'daily_cap' }>, input: RefusalInput): AppError {
  const spent = admission.spentCents;
  const resetsAt = capResetsAt(input.day);
  const price = usd(input.priceCents);
  if (admission.ancestorKeyId !== undefined) {
    const cap = input.ancestors.find((a) => a.keyId === admission.ancestorKeyId)?.dailyCapCents ?? null;
    const left = cap === null ? 0 : leftOf(cap, spent);
    return new AppError(
      'daily_cap_exceeded',
      `The call (${price}) would exceed the daily cap of a key above this one (${admission.ancestorKeyId}): ` +
        `${usd(spent)} of its ${usd(cap ?? 0)} is spent today (UTC), ${usd(left)} left; it resets at ${resetsAt} ` +
        "(a child's spend counts against its parents).",
      {
        details: {
          price_cents: input.priceCents,
          daily_cap_cents: cap,
          key_id: admission.ancestorKeyId,
          spent_cents: spent,
          left_cents: left,
          resets_at: resetsAt,
        },
      },
    );
  }
  const cap = input.dailyCapCents ?? 0;
  const left = leftOf(cap, spent);
  return new AppError(
    'daily_cap_exceeded',
    `The call (${price}) would exceed this key's daily cap: ${usd(spent)} of ${usd(cap)} is spent today (UTC, ` +
      `counting the keys it minted), ${usd(left)} left; it resets at ${resetsAt}.`,
    {
      details: {
        price_cents: input.priceCents,
        daily_cap_cents: input.dailyCapCents,
        spent_cents: spent,
        left_cents: left,
        resets_at: resetsAt,
      },
    },
  );
}

/** 428: required provider terms in force that the caller's org has not accepted (the first one is named). */
export function termsRequiredError(
  slug: string,
  missing: { approval_url: string; snapshot_url: string; document_id: string; content_hash: string },
): AppError {
  return new AppError('terms_acceptance_required', `Accept the provider's terms for ${slug} before calling it.`, {
    details: {
      approval_url: missing.approval_url,
      snapshot_url: missing.snapshot_url,
      document_id: missing.document_id,
      content_hash: missing.content_hash,
    },
  });
}

/** A reused Idempotency-Key with another request (method, path or body). */
export function idempotencyMismatch(): AppError {
  return new AppError(
    'idempotency_mismatch',
    'This Idempotency-Key was used for a different request (method, path or body).',
  );
}
