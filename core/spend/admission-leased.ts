/**
 * The gateway's lease paths (core/spend/leases.ts): a call without an Idempotency-Key is admitted in process, against
 * its key's own lease, or, for a paid call of a key without governance of its own, against its org's shared lease with
 * one of the key's rate tokens (core/spend/rate-tokens.ts, issue 32). Undefined when the call is to be admitted call by
 * call (exact mode, or the store could not lease); `input` (and `req.key`) get a reloaded key's governance when a lease
 * found the cached key stale.
 */
import { newId } from '../ids.js';
import type { KeyAuth } from '../keys/keys.service.js';
import { keyGovernance } from './admission-refusals.js';
import { leaseInput, sharesOrgLease, type AdmitRequest } from './admission-input.js';
import { LeaseBook, type Lease } from './leases.js';
import type { RateTokens } from './rate-tokens.js';
import type { Reservation } from './settlement.js';
import type { AdmitInput, LeaseGrant } from './spend-store.js';

/** What the lease paths use of the admission (core/spend/admission.ts). */
export interface LeasingContext {
  book: LeaseBook;
  tokens: RateTokens;
  /** The key's version matched the shared state just now. */
  vouch(keyId: string): void;
  /** Re-read the org's balance (the lease said it is stale). */
  refresh(orgId: string, generation: number | undefined): void;
  /** Rebuild the fast state's org or key from Postgres. */
  hydrate(input: AdmitInput, generation: number | undefined): Promise<void>;
  reloadKey(key: KeyAuth, version: string): Promise<KeyAuth>;
  reservation(req: AdmitRequest, input: AdmitInput, leased: { lease: Lease; book: LeaseBook }): Reservation;
}

/** Enough for the longest path: tokens after a hydration, then the shared lease after a key reload. */
const ATTEMPTS = 6;

export async function admitLeased(
  ctx: LeasingContext,
  req: AdmitRequest,
  input: AdmitInput,
): Promise<Reservation | undefined> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const shared = sharesOrgLease(input);
    const outcome = shared ? await sharedStep(ctx, req, input) : await ownStep(ctx, req, input);
    if (outcome === undefined || outcome === 'exact') return undefined;
    if (typeof outcome !== 'string') return outcome;
  }
  return undefined;
}

/** One try on the key's own lease: the reservation, or what to do next. */
async function ownStep(
  ctx: LeasingContext,
  req: AdmitRequest,
  input: AdmitInput,
): Promise<Reservation | 'exact' | 'again'> {
  const { book } = ctx;
  const slot = LeaseBook.slotKey(input.orgId, input.keyId, input.day, req.key.version);
  const lease = book.take(slot, input.priceCents);
  // No Idempotency-Key on a leased call: its scoped and client keys are null.
  if (lease) return ctx.reservation(req, input, { lease, book });
  if (book.exact(slot)) return 'exact';
  return handle(ctx, req, input, await book.acquire(slot, input.orgId, leaseInput(input), newId('lease', input.nowMs)));
}

/**
 * One try on the org's shared lease (money) with one of the key's rate tokens. A key that gains a cap changes the org's
 * key version: its next call is decided under the new version, and, having governance of its own now, on its own lease
 * or call by call.
 */
async function sharedStep(
  ctx: LeasingContext,
  req: AdmitRequest,
  input: AdmitInput,
): Promise<Reservation | 'exact' | 'again'> {
  const { book, tokens } = ctx;
  const slot = LeaseBook.sharedSlotKey(input.orgId, input.day, req.key.version);
  const lease = book.take(slot, input.priceCents);
  if (!lease) {
    // Not busy enough for a lease (or exact): call by call, without taking tokens nobody would spend.
    if (book.exact(slot)) return 'exact';
    return handle(ctx, req, input, await book.acquire(slot, input.orgId, leaseInput(input), leaseId(input), true));
  }
  if (tokens.available(input.rateKey, input.nowMs) >= 1) {
    tokens.take(input.rateKey);
    return ctx.reservation(req, input, { lease, book });
  }
  // No token: the price goes back to the lease while the key's tokens are asked for (or the call goes call by call).
  book.untake(lease, input.priceCents);
  if (tokens.exact(input.rateKey)) return 'exact';
  return handle(ctx, req, input, await tokens.acquire({ ...leaseInput(input), nowMs: input.nowMs }, leaseId(input)));
}

const leaseId = (input: AdmitInput) => newId('lease', input.nowMs);

/** A lease's (or rate tokens') answer: try again after a grant, a hydration or a key reload; or call by call. */
async function handle(
  ctx: LeasingContext,
  req: AdmitRequest,
  input: AdmitInput,
  grant: LeaseGrant,
): Promise<'exact' | 'again'> {
  switch (grant.outcome) {
    case 'lease':
      ctx.vouch(input.keyId);
      if (grant.stale) ctx.refresh(input.orgId, grant.generation);
      return 'again';
    case 'exact':
      return 'exact';
    case 'hydrate':
      await ctx.hydrate(input, grant.generation);
      return 'again';
    case 'stale_key': {
      const key = await ctx.reloadKey(req.key, grant.version);
      Object.assign(input, keyGovernance(key), { keyVersion: grant.version });
      (req as { key: KeyAuth }).key = key;
      return 'again';
    }
  }
}
