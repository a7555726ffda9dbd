/**
 * GET /v1/apis/{slug}/quote?method=&path=: what a gateway call would resolve to and cost now, and, for a caller with
 * an API key, whether the gateway would admit it and otherwise the exact error it would answer. Nothing is spent,
 * reserved or counted against a rate limit.
 *
 * The pieces are the gateway's own: the path rule (core/upstream/proxy-path.ts), endpoint matching
 * (core/catalog/listings/endpoint-match.ts), the price (core/pricing/effective-price.ts), the refusal errors
 * (core/spend/admission-refusals.ts), and spend governance decided by the SpendStore rules themselves: a throwaway
 * in-process store (same semantics as the Redis script) hydrated from the Postgres snapshot the gateway rebuilds its
 * fast state from (core/spend/admission-snapshot.ts). Checks run in the gateway's order: scope → own API → terms →
 * suspension, per-call max, budget (the key's, approval mode, then each ancestor's), daily cap, prepaid balance or
 * card credit limit. Not checked: the rate limit (a quote must not use it up) and reservations of calls in flight
 * (they live in the fast state, not in Postgres), so a quote can say "allowed" a moment before a concurrent call uses
 * the last of a budget.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ENDPOINT_METHODS, Endpoint, RemovedEndpoint, type IApi, type IEndpoint } from '../../../db/entities/index.js';
import { keyGovernance, refusalError, termsRequiredError } from '../../spend/admission-refusals.js';
import { loadSnapshot } from '../../spend/admission-snapshot.js';
import { requireScope, type Principal } from '../../auth/scopes.js';
import type { Config } from '../../config.js';
import { AppError, ForbiddenError, NotFoundError, UnauthenticatedError } from '../../errors.js';
import { checkPath } from '../../input.js';
import type { KeyAuth } from '../../keys/keys.service.js';
import { effectivePrice } from '../../pricing/effective-price.js';
import { removalOf } from '../../pricing/endpoint-view.js';
import { MemorySpendStore } from '../../spend/memory-spend-store.js';
import type { AdmitInput } from '../../spend/spend-store.js';
import type { DocumentsService } from '../../terms/documents.service.js';
import { assertSafePath } from '../../upstream/proxy-path.js';
import { compileTemplate, matchTemplate } from './endpoint-match.js';
import { endpointRemovedError } from './retired.js';
import type { AdmissionView, QuoteView } from './listings.schemas.js';
export type { AdmissionView, QuoteView } from './listings.schemas.js';

export const QuoteQuery = z
  .object({
    method: z
      .string()
      .trim()
      .transform((m) => m.toUpperCase())
      .pipe(z.enum(ENDPOINT_METHODS)),
    /** The path after `/v1/proxy/{slug}`, as the request line would carry it (a query string is ignored). */
    path: z.string().min(1).max(2000).regex(/^\//, 'must start with /'),
  })
  .strict();
export type QuoteQuery = z.infer<typeof QuoteQuery>;

export type QuoteCaller =
  | { type: 'anonymous' }
  /** A valid session: the control plane knows the person, but the gateway takes API keys only. */
  | { type: 'session' }
  | { type: 'api_key'; principal: Principal; key: KeyAuth };

export interface QuoteDeps {
  orm: MikroORM;
  config: Config;
  documents: DocumentsService;
}

/**
 * The endpoint a method and path resolve to, or the gateway's 400 (unsafe path), 404, or 410 `endpoint_removed` (an
 * endpoint past its announced sunset, or one removed from the listing).
 */
export async function resolveEndpoint(
  em: EntityManager,
  api: IApi,
  method: string,
  rawPath: string,
  now: Date,
): Promise<{ endpoint: IEndpoint; path: string }> {
  const path = rawPath.split('?')[0]!;
  checkPath(path); // the gateway's input rule: no NUL or lone surrogate behind percent-encoding
  assertSafePath(path);
  const endpoints = await em.find(Endpoint, { api: api.id }, { orderBy: { position: 'asc', id: 'asc' } });
  const hit = matchTemplate(
    endpoints.map((e) => ({ method: e.method, template: e.path, matcher: compileTemplate(e.path), e })),
    method,
    path,
  );
  if (hit?.e.sunsetAt && hit.e.sunsetAt <= now) throw endpointRemovedError(api.slug, method, path, hit.e.sunsetAt);
  if (hit) return { endpoint: hit.e, path };
  const removed = matchTemplate(
    (await em.find(RemovedEndpoint, { api: api.id }, { orderBy: { removedAt: 'desc' } })).map((e) => ({
      method: e.method,
      template: e.path,
      matcher: compileTemplate(e.path),
      e,
    })),
    method,
    path,
  );
  if (removed) throw endpointRemovedError(api.slug, method, path, removed.e.removedAt);
  throw new NotFoundError(
    api.source === 'directory'
      ? `${api.slug} is a directory listing: it is not callable through the gateway until its provider claims it.`
      : `${api.slug} has no endpoint ${method} ${path}.`,
  );
}

export async function quote(
  deps: QuoteDeps,
  em: EntityManager,
  api: IApi,
  query: QuoteQuery,
  caller: QuoteCaller,
  now: Date,
): Promise<QuoteView> {
  const { endpoint, path } = await resolveEndpoint(em, api, query.method, query.path, now);
  const price = effectivePrice(endpoint, now);
  const view: QuoteView = {
    api: api.slug,
    endpoint: {
      endpoint_id: endpoint.id,
      method: endpoint.method,
      path: endpoint.path,
      summary: endpoint.summary ?? null,
      removal: removalOf(endpoint),
    },
    gateway_url: `${deps.config.urls.gateway}/v1/proxy/${api.slug}${path}`,
    price_cents: price.price_cents,
    price_cents_effective: price.price_cents_effective,
    price_increase: price.price_increase,
    discount: price.discount,
  };
  if (caller.type !== 'anonymous') {
    view.admission = await admission(deps, em, api, price.price_cents_effective, caller, now);
  }
  return view;
}

async function admission(
  deps: QuoteDeps,
  em: EntityManager,
  api: IApi,
  priceCents: number,
  caller: Exclude<QuoteCaller, { type: 'anonymous' }>,
  now: Date,
): Promise<AdmissionView> {
  try {
    if (caller.type === 'session') {
      throw new UnauthenticatedError('The gateway accepts API keys only; session tokens are refused.');
    }
    await admit(deps, em, api, priceCents, caller.principal, caller.key, now);
    return { allowed: true };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return {
      allowed: false,
      error_code: err.code,
      status: err.status,
      message: err.message,
      ...(err.details ? { details: err.details } : {}),
    };
  }
}

/** Throws the AppError the gateway would answer, in the gateway's order; returns when the call would be admitted. */
async function admit(
  deps: QuoteDeps,
  em: EntityManager,
  api: IApi,
  priceCents: number,
  principal: Principal,
  key: KeyAuth,
  now: Date,
): Promise<void> {
  requireScope(principal, 'proxy:call');
  if (api.org.id === principal.orgId) {
    throw new ForbiddenError('An organization cannot call its own API through the gateway.');
  }
  const [missing] = await deps.documents.unacceptedRequired(em, api, principal.orgId);
  if (missing) throw termsRequiredError(api.slug, missing);

  const nowMs = now.getTime();
  const day = now.toISOString().slice(0, 10);
  const ancestorKeyIds = key.ancestors.map((a) => a.keyId);
  const snapshot = await loadSnapshot(deps, principal.orgId, key.keyId, day, ancestorKeyIds);
  const store = new MemorySpendStore();
  await store.hydrate({ ...snapshot, nowMs });
  const input: AdmitInput = {
    orgId: principal.orgId,
    ...keyGovernance(key),
    ratePerMin: Number.MAX_SAFE_INTEGER,
    day,
    priceCents,
    idempotencyKey: null,
    requestHash: '',
    reservationId: 'quote',
    nowMs,
    reservationTtlMs: 1,
    staleAfterMs: Number.MAX_SAFE_INTEGER,
  };
  const outcome = await store.admit(input);
  switch (outcome.outcome) {
    case 'admitted':
      return;
    case 'suspended':
    case 'per_call':
    case 'budget':
    case 'daily_cap':
    case 'funds':
    case 'credit_limit':
      throw refusalError(outcome, input, key.approvalMode ? key : undefined, deps.config.urls.publicBase);
    default:
      // hydrate, replay, in_flight, mismatch, rate_limited: impossible on a hydrated store without idempotency key
      // or rate limit; answered as the gateway's generic refusal rather than a wrong "allowed".
      throw new AppError('unavailable', `The admission could not be decided (${outcome.outcome}).`);
  }
}
