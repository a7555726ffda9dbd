/**
 * The control plane's view of our workflows: type names, ids, signal names and payload types. Workflow code
 * defines the same names with @temporalio/workflow (workflows/*.messages.ts); a unit test keeps the two in step,
 * since core/ never imports workflows/ (DESIGN.md, Layers).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { VerificationEvidence } from '../../db/entities/index.js';

export const WORKFLOW_TYPES = {
  signupCredits: 'signupCreditsWorkflow',
  verifyAndPublish: 'verifyAndPublishWorkflow',
  priceChange: 'priceChangeWorkflow',
  connectOnboarding: 'connectOnboardingWorkflow',
  autoReload: 'autoReloadWorkflow',
  reconcileBooks: 'reconcileBooksWorkflow',
  billingCycle: 'billingCycleWorkflow',
  usageCharge: 'usageChargeWorkflow',
  catalogRollups: 'catalogRollupsWorkflow',
  usagePartitions: 'usagePartitionsWorkflow',
  demandEmailCleanup: 'demandEmailCleanupWorkflow',
  endpointRemoval: 'endpointRemovalWorkflow',
} as const;

/** Temporal Schedules the worker makes sure exist at start. */
export const SCHEDULES = {
  reconcileBooks: { id: 'reconcile-books', every: '1 hour' },
  /** Card-on-file orgs whose unpaid usage passed the threshold are charged. */
  billingThreshold: { id: 'billing-threshold', every: '1 hour' },
  /** 00:05 UTC on the 1st: every card-on-file balance owed is charged, and providers are paid out. */
  billingPeriodClose: { id: 'billing-period-close', calendar: { dayOfMonth: 1, hour: 0, minute: 5 } },
  /**
   * Stats, merit scores, ranks, score history and market events, fresh within 60 s of a call: one run an hour that
   * makes a pass every 30 s (issue 22: a run every 30 s buried every other flow in the Temporal UI under ~2,900 runs a
   * day; now 24).
   */
  catalogRollups: {
    id: 'catalog-rollups',
    every: '1 hour',
    loop: { forMs: 59 * 60_000 + 30_000, everyMs: 30_000 },
  },
  /** usage_events partitions: months ahead created, months past USAGE_RETENTION_DAYS retired (daily, 02:30 UTC). */
  usagePartitions: { id: 'usage-partitions', calendar: { hour: 2, minute: 30 } },
  /** The demand board forgets addresses left unconfirmed past their 7-day link (issue 31; daily, 03:15 UTC). */
  demandEmailCleanup: { id: 'demand-email-cleanup', calendar: { hour: 3, minute: 15 } },
} as const;

export const SIGNALS = {
  emailVerified: 'emailVerified',
  accountUpdated: 'accountUpdated',
  paymentSettled: 'paymentSettled',
  reloadRequested: 'reloadRequested',
} as const;

export const QUERIES = {
  signupCreditsStatus: 'signupCreditsStatus',
} as const;

export const SEARCH_ATTRIBUTES = {
  orgId: defineSearchAttributeKey('OrgId', SearchAttributeType.KEYWORD),
  apiSlug: defineSearchAttributeKey('ApiSlug', SearchAttributeType.KEYWORD),
} as const;

export const workflowIds = {
  signupCredits: (orgId: string) => `signup-credits:${orgId}`,
  publish: (apiId: string) => `publish:${apiId}`,
  priceChange: (apiId: string, endpointId: string) => `price:${apiId}:${endpointId}`,
  endpointRemoval: (apiId: string, endpointId: string) => `removal:${apiId}:${endpointId}`,
  connect: (orgId: string) => `connect:${orgId}`,
  autoReload: (orgId: string) => `reload:${orgId}`,
  usageCharge: (orgId: string) => `usage-charge:${orgId}`,
} as const;

/** The trial credit of a human signup (spec: Limits, Trial credit). */
export const STARTER_CREDIT_CENTS = 100;
/** How long a signup's trial credit waits for the email to be verified. */
export const SIGNUP_CREDIT_HOLD = '30 days';
/** Ledger idempotency key of the starter grant: one per org, whatever path grants it. */
export const STARTER_CREDIT_IDEMPOTENCY_KEY = 'starter-credits';

export interface SignupCreditsInput {
  orgId: string;
  amountCents: number;
  /** How long the credit is held waiting for verification, as a Temporal duration string ('30 days'). */
  holdFor: string;
}

export type SignupCreditsResult =
  { outcome: 'granted'; ledgerEntryId: string; balanceAfterCents: number } | { outcome: 'expired' };

export interface SignupCreditsStatus {
  state: 'holding' | 'granting' | 'granted' | 'expired';
  amountCents: number;
}

/** `publish_revision`: a live listing's open revision (its new and changed endpoints smoke-tested, then applied). */
export type PublishAction = 'verify' | 'publish' | 'unpublish' | 'publish_revision';

export interface PublishInput {
  apiId: string;
  action: PublishAction;
  skipVerify: boolean;
  /** The revision `publish_revision` publishes. */
  revisionId?: string;
}

/** The smoke test's evidence, as stored on the listing. */
export type VerificationResult = VerificationEvidence;

export interface PublishResult {
  action: PublishAction;
  status: 'draft' | 'live';
  verification: VerificationResult | null;
  /** `publish_revision`: whether the revision was applied (false when its smoke test failed). */
  revision_published?: boolean;
}

export interface PriceChangeInput {
  apiId: string;
  endpointId: string;
  priceCents: number;
  /** ISO instant the new price takes effect. */
  effectiveAt: string;
}

export interface PriceChangeResult {
  applied: boolean;
}

/** An announced endpoint removal: a durable timer to the sunset, then the endpoint leaves the listing. */
export interface EndpointRemovalInput {
  apiId: string;
  endpointId: string;
  /** ISO instant of the sunset. */
  sunsetAt: string;
}

export interface EndpointRemovalResult {
  /** False when the removal was withdrawn (the endpoint added again) or had already happened. */
  removed: boolean;
}

export interface ConnectOnboardingInput {
  orgId: string;
  accountId: string;
}

/** The fields of Stripe's account.updated event the onboarding waits on (mapped by the billing adapter). */
export interface AccountUpdate {
  charges_enabled: boolean;
  payouts_enabled: boolean;
  details_submitted: boolean;
}

export interface ConnectOnboardingResult {
  status: 'enabled';
}

export interface AutoReloadInput {
  orgId: string;
}

/** Sent by the billing webhook when a charge a workflow is waiting on settles. */
export interface PaymentSettled {
  paymentId: string;
  succeeded: boolean;
  reason?: string;
}

export type ChargeAttempt =
  | { status: 'skipped'; reason: string }
  | { status: 'succeeded' | 'pending'; paymentId: string }
  | { status: 'failed'; paymentId: string | null; reason: string };

export type AutoReloadResult =
  | { outcome: 'skipped'; reason: string }
  | { outcome: 'credited'; paymentId: string }
  | { outcome: 'failed'; paymentId: string | null; reason: string };

export type BillingCycleReason = 'threshold' | 'period_end';

export interface BillingCycleInput {
  reason: BillingCycleReason;
  /** The period to close (`YYYY-MM`); by default the month before the run (period_end) or the current one. */
  period?: string;
}

export interface BillingCyclePlan {
  period: string;
  usageChargeOrgIds: string[];
  payoutOrgIds: string[];
}

export interface BillingCycleResult {
  period: string;
  usageChargesStarted: string[];
  usageChargesAlreadyRunning: string[];
  payouts: { orgId: string; status: 'skipped' | 'paid' | 'failed'; amountCents?: number; reason?: string }[];
}

export interface UsageChargeInput {
  orgId: string;
}

export type UsageChargeResult =
  | { outcome: 'skipped'; reason: string }
  | { outcome: 'charged'; paymentId: string }
  | { outcome: 'failed'; paymentId: string | null; reason: string };

/** What one run of demandEmailCleanupWorkflow did: how many unconfirmed addresses it forgot. */
export interface DemandEmailCleanupResult {
  forgotten: number;
}

/** What one run of usagePartitionsWorkflow did (core/usage/usage-partitions.ts). */
export interface UsagePartitionsResult {
  created: string[];
  /** Rows moved out of the default partition into a partition created for their month. */
  moved_from_default: number;
  retired: string[];
  /** Partitions past retention that still hold calls the rollups have not folded in for good: kept for now. */
  kept_unprocessed: string[];
  /** now - USAGE_RETENTION_DAYS: a partition ending at or before it is past retention. */
  retention_cutoff: string;
  rollups_watermark: string | null;
}

/**
 * catalogRollupsWorkflow's input: with `loop`, a pass every `everyMs` for `forMs` of workflow time (the hourly
 * schedule's run); without, one pass (operators, tests, `runRollupsNow`).
 */
export interface CatalogRollupsInput {
  loop?: { forMs: number; everyMs: number };
}

/** What one pass of catalogRollupsWorkflow did, step by step (core/catalog/rollups/rollups.service.ts); the last pass's. */
export interface CatalogRollupsResult {
  /** Passes made by this run (1 without `loop`). */
  passes?: number;
  usage: { from: string; watermark: string; listings_touched: number; full_refresh: boolean };
  scores: { listings_scored: number; day: string };
  ranks: { ranks_written: number; movers: number };
  market: { price_changes: number };
}
