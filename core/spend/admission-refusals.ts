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
  'keyId' | 'priceCents' | 'perCallMaxCents' | 'budgetCents' | 'dailyCapCents' | 'ancestors'
>;

/** The error a spend-governance refusal answers. `approval` is the key when it is in approval mode. */
export function refusalError(
  admission: RefusalOutcome,
  input: RefusalInput,
  approval: KeyAuth | undefined,
  publicBaseUrl: string,
): AppError {
  switch (admission.outcome) {
    case 'suspended':
      return new PaymentRequiredError('This organization is suspended; paid calls are refused.', {
        details: { reason: 'suspended' },
      });
    case 'per_call':
      return new AppError('per_call_limit_exceeded', 'The call costs more than this key may spend per call.', {
        details: { price_cents: input.priceCents, per_call_max_cents: input.perCallMaxCents },
      });
    case 'budget':
      return budgetRefusal(admission, input, approval, publicBaseUrl);
    case 'daily_cap':
      return dailyCapRefusal(admission, input);
    case 'funds':
      return new PaymentRequiredError('Prepaid credits are exhausted; buy credits or add a card.', {
        details: { price_cents: input.priceCents, reason: 'insufficient_credits' },
      });
    case 'credit_limit':
      return new PaymentRequiredError(
        "This organization's card credit limit is reached: paid calls resume once the unpaid usage is charged to the card (or an operator raises the limit).",
        { details: { price_cents: input.priceCents, reason: 'credit_limit_reached' } },
      );
  }
}

/** Over a budget: the key's own, an ancestor's, or (approval mode) the spend a person approved. */
function budgetRefusal(
  admission: Extract<RefusalOutcome, { outcome: 'budget' }>,
  input: RefusalInput,
  approval: KeyAuth | undefined,
  publicBaseUrl: string,
): AppError {
  if (approval && approvalBinds(approval)) {
    return new PaymentRequiredError(
      'This key is in approval mode: a person must approve more spend before this paid call.',
      {
        details: {
          reason: 'approval_required',
          approval_url: `${publicBaseUrl}/approve/${input.keyId}`,
          approved_cents: approval.approvedCents,
          price_cents: input.priceCents,
        },
      },
    );
  }
  if (admission.ancestorKeyId !== undefined) {
    const parent = input.ancestors.find((a) => a.keyId === admission.ancestorKeyId);
    return new AppError(
      'insufficient_budget',
      "The call would exceed the budget of a key above this one (a child's spend counts against its parents).",
      {
        details: {
          price_cents: input.priceCents,
          budget_cents: parent?.budgetCents ?? null,
          key_id: admission.ancestorKeyId,
        },
      },
    );
  }
  return new AppError(
    'insufficient_budget',
    "The call would exceed this key's budget, which counts the spend of the keys it minted too.",
    { details: { price_cents: input.priceCents, budget_cents: input.budgetCents } },
  );
}

/** Over a daily cap (UTC day): the key's own or an ancestor's. */
function dailyCapRefusal(admission: Extract<RefusalOutcome, { outcome: 'daily_cap' }>, input: RefusalInput): AppError {
  if (admission.ancestorKeyId !== undefined) {
    const parent = input.ancestors.find((a) => a.keyId === admission.ancestorKeyId);
    return new AppError(
      'daily_cap_exceeded',
      "The call would exceed the daily cap (UTC day) of a key above this one (a child's spend counts against its parents).",
      {
        details: {
          price_cents: input.priceCents,
          daily_cap_cents: parent?.dailyCapCents ?? null,
          key_id: admission.ancestorKeyId,
        },
      },
    );
  }
  return new AppError(
    'daily_cap_exceeded',
    "The call would exceed this key's daily cap (UTC day), which counts the spend of the keys it minted too.",
    { details: { price_cents: input.priceCents, daily_cap_cents: input.dailyCapCents } },
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
