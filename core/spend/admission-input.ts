/**
 * The admission's plain pieces (core/spend/admission.ts): what a call asks for, the decision's shape, the SpendStore
 * input built from a call and a lease's input built from that, and the decisions made without the store.
 */
import type { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Config } from '../config.js';
import type { KeyAuth, KeysService } from '../keys/keys.service.js';
import { idempotencyMismatch, keyGovernance } from './admission-refusals.js';
import { seenKeyHash } from './idempotency-seen.js';
import type { Reservation } from './settlement.js';
import type { AdmitInput, LeaseInput } from './spend-store.js';

/** A reservation outlives the upstream deadline by this much before the sweeper may void it. */
export const RESERVATION_MARGIN_MS = 10_000;
const STALE_AFTER_MS = 5_000;

export interface AdmitRequest {
  orgId: string;
  key: KeyAuth;
  now: Date;
  priceCents: number;
  /** The client's Idempotency-Key, or null. */
  clientKey: string | null;
  /** Hash of method, path and body ('' without an Idempotency-Key). */
  requestHash: string;
  requestId: string;
}

export type AdmissionDecision = Reservation | { kind: 'replay'; record: string } | { kind: 'refused'; error: AppError };

/** SpendStore.admit's input for a call (`scopedKey`: the Idempotency-Key scoped to the org and key, or null). */
export function admitInput(
  req: AdmitRequest,
  scopedKey: string | null,
  nowMs: number,
  services: { readonly config: Config; readonly keys?: KeysService },
  fastPath: boolean,
): AdmitInput {
  const { key } = req;
  return {
    orgId: req.orgId,
    ...keyGovernance(key),
    ratePerMin: services.config.limits.gatewayRatePerMin,
    day: req.now.toISOString().slice(0, 10),
    priceCents: req.priceCents,
    idempotencyKey: scopedKey,
    requestHash: req.requestHash,
    reservationId: newId('usage', nowMs),
    nowMs,
    reservationTtlMs: services.config.gateway.upstreamTimeoutMs + RESERVATION_MARGIN_MS,
    staleAfterMs: STALE_AFTER_MS,
    keyVersion: services.keys ? (key.version ?? '?') : undefined,
    seenHash: req.clientKey === null ? undefined : seenKeyHash(key.keyId, req.clientKey),
    fastPath,
  };
}

/** A lease's input for the call `input` admits (core/spend/leases.ts). */
export function leaseInput(
  input: AdmitInput,
): Omit<LeaseInput, 'leaseId' | 'wantCents' | 'wantTokens' | 'minCalls' | 'nowMs'> {
  return {
    orgId: input.orgId,
    keyId: input.keyId,
    rateKey: input.rateKey,
    ratePerMin: input.ratePerMin,
    day: input.day,
    priceCents: input.priceCents,
    perCallMaxCents: input.perCallMaxCents,
    budgetCents: input.budgetCents,
    dailyCapCents: input.dailyCapCents,
    ancestors: input.ancestors,
    // As a call's reservation: its 10 s margin past the upstream deadline covers the lease's 1 s window.
    holdTtlMs: input.reservationTtlMs,
    staleAfterMs: input.staleAfterMs,
    keyVersion: input.keyVersion,
  };
}

/**
 * A paid call of a key without governance of its own (no budget, daily cap, per-call maximum or ancestor): admitted on
 * its org's shared lease (core/spend/rate-tokens.ts). Free calls keep their key's own lease, whose 1 s window is what
 * bounds a revoked key's free calls.
 */
export function sharesOrgLease(input: AdmitInput): boolean {
  return (
    input.priceCents > 0 &&
    input.budgetCents === null &&
    input.dailyCapCents === null &&
    input.perCallMaxCents === null &&
    input.ancestors.length === 0
  );
}

/** The decision's label in the operators' metrics: a call admitted against a lease is admitted like any other. */
export function outcomeOf(decision: AdmissionDecision): string {
  if (decision.kind === 'refused') return decision.error.code;
  if (decision.kind === 'replay') return 'replay';
  return decision.kind === 'leased' ? 'admitted' : decision.kind;
}

export function refused(error: AppError): AdmissionDecision {
  return { kind: 'refused', error };
}

/** A stored record answers this request only if it was made for the same request. */
export function replayOf(record: string, requestHash: string): AdmissionDecision {
  if (!record.startsWith(requestHash, 2)) return refused(idempotencyMismatch());
  return { kind: 'replay', record };
}
