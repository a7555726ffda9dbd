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

/**
 * The common case, without a promise: the call taken from a lease this process holds (its reservation), `exact` (call
 * by call), or `acquire` (a lease or the key's rate tokens must be asked for: `admitLeased`).
 */
export function takeLeased(
  ctx: LeasingContext,
  req: AdmitRequest,
  input: AdmitInput,
): Reservation | 'exact' | 'acquire' {
  const { book } = ctx;
  if (!sharesOrgLease(input)) {
    const slot = LeaseBook.slotKey(input.orgId, input.keyId, input.day, req.key.version);
    const lease = book.take(slot, input.priceCents);
    // No Idempotency-Key on a leased call: its scoped and client keys are null.
    if (lease) return ctx.reservation(req, input, { lease, book });
    return book.exact(slot) ? 'exact' : 'acquire';
  }
  // The org's shared lease (money) with one of the key's rate tokens. A key that gains a cap changes the org's key
  // version: its next call is decided under the new version and, having governance of its own, not here.
  const slot = LeaseBook.sharedSlotKey(input.orgId, input.day, req.key.version);
  const lease = book.take(slot, input.priceCents);
  // Not busy enough for a lease (or exact): call by call, without taking tokens nobody would spend.
  if (!lease) return book.exact(slot) ? 'exact' : 'acquire';
  const { tokens } = ctx;
  if (tokens.available(input.rateKey, input.nowMs) >= 1) {
    tokens.take(input.rateKey);
    return ctx.reservation(req, input, { lease, book });
  }
  // No token: the price goes back to the lease while the key's tokens are asked for (or the call goes call by call).
  book.untake(lease, input.priceCents);
  return tokens.exact(input.rateKey) ? 'exact' : 'acquire';
}

/** The call after `takeLeased` said `acquire`: ask, then take again (a few times), or undefined (call by call). */
export async function admitLeased(
  ctx: LeasingContext,
  req: AdmitRequest,
  input: AdmitInput,
): Promise<Reservation | undefined> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const grant = await acquire(ctx, input, req);
    if ((await handle(ctx, req, input, grant)) === 'exact') return undefined;
    const taken = takeLeased(ctx, req, input);
    if (taken === 'exact') return undefined;
    if (taken !== 'acquire') return taken;
  }
  return undefined;
}

/** What `takeLeased` lacked: the key's own lease, the org's shared one, or the key's rate tokens. */
function acquire(ctx: LeasingContext, input: AdmitInput, req: AdmitRequest): Promise<LeaseGrant> {
  const { book, tokens } = ctx;
  if (!sharesOrgLease(input)) {
    const slot = LeaseBook.slotKey(input.orgId, input.keyId, input.day, req.key.version);
    return book.acquire(slot, input.orgId, leaseInput(input), leaseId(input));
  }
  const slot = LeaseBook.sharedSlotKey(input.orgId, input.day, req.key.version);
  if (!book.holds(slot, input.priceCents))
    return book.acquire(slot, input.orgId, leaseInput(input), leaseId(input), true);
  return tokens.acquire({ ...leaseInput(input), nowMs: input.nowMs }, leaseId(input));
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
