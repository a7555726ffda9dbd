/**
 * `ALL /v1/proxy/{apiSlug}/{path}`: the metered, governed proxy. Checks run in DESIGN.md's order, each before any
 * spend or upstream call: bearer (401) → key (401) and `proxy:call` (403) → listing and endpoint (404) → own API (403)
 * → required terms (428) → body size (413) → one SpendStore.admit (idempotent replay, rate limit 429, spend
 * governance 402, reservation) → upstream (502 / 429 upstream) → group commit to Postgres, then settle the fast state
 * (or void the reservation on failure) → the envelope with billing meta. `handle` is the bearer step for HTTP;
 * `handleAuthenticated` is the rest, also driven in process by the agent-tool server (gateway/in-process.ts).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { parseBearer } from '../core/auth/bearer.js';
import { requireScope, type Principal } from '../core/auth/scopes.js';
import {
  AppError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  ServiceUnavailableError,
  UnauthenticatedError,
  ValidationError,
} from '../core/errors.js';
import { newId } from '../core/ids.js';
import { effectivePrice } from '../core/pricing/effective-price.js';
import type { KeyAuth } from '../core/keys/keys.service.js';
import type { Services } from '../core/services.js';
import type { Admission, ReservationRef, SettleInput } from '../core/spend/spend-store.js';
import { doneRecord } from '../core/spend/spend-store.js';
import type { CallRecord, CommittedCall, UsageCommitter } from '../core/spend/usage-committer.js';
import { applyCredential } from '../core/upstream/credentials.js';
import { clientRequestId } from '../core/request-id.js';
import { findIdempotencyRecord } from '../core/spend/idempotency-records.js';
import { assertSafePath, upstreamUrl } from './upstream-path.js';
import { matchEndpoint, type CachedApi, type CatalogCache } from './catalog-cache.js';
import { forwardRequestHeaders } from './forward-headers.js';
import { sendJson, type ResponseSink } from './respond.js';
import { toGatewayError, UpstreamCallError, type UpstreamClient, type UpstreamResult } from './upstream-client.js';
import { ExpiringMemo } from './local-memo.js';
import { loadSnapshot } from './snapshot.js';
import { keyGovernance, refusalError, termsRequiredError } from '../core/admission/refusals.js';

/** Idempotency records outlive the 24 hours the contract promises. */
export const IDEMPOTENCY_TTL_MS = 25 * 3_600_000;
const STALE_AFTER_MS = 5_000;
/** How long this process keeps a replay it has seen (the shared record lives 25 h in the fast state). */
const LOCAL_REPLAY_TTL_MS = 3_600_000;
/** A reservation outlives the upstream deadline by this much before the sweeper may void it. */
export const RESERVATION_MARGIN_MS = 10_000;
const IDEMPOTENCY_KEY_RE = /^[\x21-\x7e]{1,200}$/;

export interface BillingMeta {
  request_id: string;
  cost_cents: number;
  price_cents_effective: number;
  credit_applied_cents: number;
  billable_cents: number;
  price_increase?: { price_cents: number; effective_at: string };
  discount?: Record<string, unknown>;
}

/** Who makes a call: the key's principal and what the hot path needs about the key (caps, ancestors). */
export interface GatewayCaller {
  principal: Principal;
  key: KeyAuth;
}

export class GatewayProxy {
  private readonly log;
  /** Stored replays by scoped idempotency key (immutable once written, so safe to keep in process). */
  private readonly replays = new ExpiringMemo<string>(50_000);
  /** Settles waiting for the next turn of the event loop. */
  private settles: SettleInput[] = [];
  /** Key prefixes over their rate limit, until their window ends. */
  private readonly rateBlocked = new ExpiringMemo<number>(50_000);

  constructor(
    private readonly services: Services,
    private readonly catalog: CatalogCache,
    private readonly upstream: UpstreamClient,
    private readonly committer: UsageCommitter,
  ) {
    this.log = services.logger.child({ surface: 'gateway' });
  }

  /** A call over HTTP: the caller is the request's bearer API key. */
  async handle(req: IncomingMessage, res: ResponseSink, requestId: string, slug: string, rest: string, search: string) {
    const started = performance.now();
    const credential = parseBearer(req.headers.authorization);
    if (credential.type === 'session') {
      throw new UnauthenticatedError('The gateway accepts API keys only; session tokens are refused.');
    }
    const caller = await this.services.keys.authenticate(credential.token);
    return this.handleAuthenticated(req, res, requestId, slug, rest, search, caller, started);
  }

  /**
   * A call by a caller already authenticated as a key: the HTTP path above, or the agent-tool server, whose caller
   * may hold an OAuth access token acting as its key (gateway/in-process.ts). Every check from the scope on.
   */
  async handleAuthenticated(
    req: IncomingMessage,
    res: ResponseSink,
    requestId: string,
    slug: string,
    rest: string,
    search: string,
    { principal, key }: GatewayCaller,
    started = performance.now(),
  ) {
    const { services } = this;
    requireScope(principal, 'proxy:call');
    assertSafePath(rest);

    const cached = this.catalog.get(slug);
    const api = cached instanceof Promise ? await cached : cached;
    if (!api) throw new NotFoundError(`No live API with slug "${slug}".`);
    if (api.source === 'directory') {
      throw new NotFoundError(
        `${api.slug} is listed from a public directory and is not callable until its provider claims it.`,
      );
    }
    const method = req.method ?? 'GET';
    const endpoint = matchEndpoint(api, method, rest);
    if (!endpoint) throw new NotFoundError(`${api.slug} has no endpoint ${method} ${rest}.`);
    if (api.orgId === principal.orgId) {
      throw new ForbiddenError('An organization cannot call its own API through the gateway.');
    }
    if (api.requiredDocuments.length > 0) await this.requireTerms(api, principal.orgId);

    const body = await readBody(req, services.config.gateway.maxRequestBytes);
    const now = services.clock.now();
    const nowMs = now.getTime();
    const price = effectivePrice(endpoint.priced, now);
    const priceCents = price.price_cents_effective;
    const clientKey = idempotencyHeader(req);
    const scopedKey = clientKey === null ? null : `${principal.orgId}:${key.keyId}:${clientKey}`;
    const requestHash = scopedKey === null ? '' : hashRequest(method, rest, search, body);
    const day = now.toISOString().slice(0, 10);
    const usageId = newId('usage', nowMs);
    const ancestorKeyIds = key.ancestors.map((a) => a.keyId);
    const ref: ReservationRef = {
      orgId: principal.orgId,
      keyId: key.keyId,
      ancestorKeyIds,
      day,
      priceCents,
      reservationId: usageId,
      idempotencyKey: scopedKey,
    };

    // The upstream request is built before anything is reserved, so nothing between the reservation and its commit
    // or void can throw.
    const url = upstreamUrl(api.baseOrigin, api.basePath, rest, search);
    const headers = forwardRequestHeaders(req.headers);
    if (api.credential) Object.assign(headers, applyCredential(url, api.credential));
    headers['x-request-id'] = requestId;

    // Answers that cannot have changed since this process last saw them: a stored replay, a prefix over its limit.
    if (scopedKey !== null) {
      const known = this.replays.get(scopedKey, nowMs);
      if (known !== undefined) {
        if (!known.startsWith(requestHash, 2)) throw idempotencyMismatch();
        return this.replay(res, requestId, known, requestHash);
      }
    }
    const blockedUntil = this.rateBlocked.get(key.keyPrefix, nowMs);
    if (blockedUntil !== undefined) {
      throw new RateLimitedError((blockedUntil - nowMs) / 1000, 'Rate limit for this key exceeded.');
    }

    const admitted = await this.admit(
      {
        orgId: principal.orgId,
        ...keyGovernance(key),
        ratePerMin: services.config.limits.gatewayRatePerMin,
        day,
        priceCents,
        idempotencyKey: scopedKey,
        requestHash,
        reservationId: usageId,
        nowMs,
        reservationTtlMs: services.config.gateway.upstreamTimeoutMs + RESERVATION_MARGIN_MS,
        staleAfterMs: STALE_AFTER_MS,
      },
      requestId,
      key.approvalMode ? key : undefined,
    );
    if (typeof admitted !== 'string' && admitted.outcome === 'replay') {
      this.replays.set(scopedKey!, admitted.record, nowMs + LOCAL_REPLAY_TTL_MS);
      return this.replay(res, requestId, admitted.record, requestHash);
    }
    const fastState = admitted !== 'degraded';
    if (scopedKey !== null) {
      // The fast state knows nothing of this key: Postgres, the system of record, may (a flushed Redis, a lost settle).
      const stored = await this.storedReplay(principal.orgId, key.keyId, clientKey!, ref, fastState);
      if (stored !== null) {
        if (!stored.startsWith(requestHash, 2)) throw idempotencyMismatch();
        this.replays.set(scopedKey, stored, nowMs + LOCAL_REPLAY_TTL_MS);
        return this.replay(res, requestId, stored, requestHash);
      }
    }

    let result: UpstreamResult;
    try {
      result = await this.upstream.request({ url, method, headers, body: body.length > 0 ? body : null });
      const failure = toGatewayError(result);
      if (failure) throw failure;
    } catch (err) {
      await this.fail(ref, fastState, err, {
        api,
        endpointId: endpoint.id,
        method,
        rest,
        requestId,
        priceCents,
        started,
        day,
        now,
        keyId: key.keyId,
        clientKey,
      });
      throw err;
    }

    const call: CallRecord = {
      usageId,
      orgId: principal.orgId,
      keyId: key.keyId,
      ancestorKeyIds,
      apiId: api.id,
      apiSlug: api.slug,
      endpointId: endpoint.id,
      providerOrgId: api.orgId,
      method,
      path: rest,
      status: result.status,
      outcome: 'success',
      priceCents,
      priceCentsEffective: priceCents,
      latencyMs: performance.now() - started,
      idempotencyKey: clientKey,
      requestHash,
      replayExtra: replayExtra(price),
      requestId,
      clientRequestId: clientRequestId(req.headers['x-request-id']),
      day,
      at: now,
    };
    const committed = await this.commitOrFence(call, ref, fastState);
    if (committed.duplicate) {
      // An earlier call with this key is already booked (the fast state had forgotten it): answer as its replay.
      if (fastState) await this.services.spend.void(ref).catch(() => undefined);
      const stored = await findIdempotencyRecord(this.services.orm, principal.orgId, key.keyId, clientKey!);
      if (stored === null) throw new ServiceUnavailableError('The call could not be recorded; retry later.');
      if (!stored.startsWith(requestHash, 2)) throw idempotencyMismatch();
      return this.replay(res, requestId, stored, requestHash);
    }
    const meta: BillingMeta = {
      request_id: requestId,
      cost_cents: priceCents,
      price_cents_effective: priceCents,
      credit_applied_cents: committed.creditAppliedCents,
      billable_cents: committed.billableCents,
    };
    if (price.price_increase) meta.price_increase = price.price_increase;
    if (price.discount) meta.discount = { ...price.discount };
    if (scopedKey !== null) {
      this.replays.set(scopedKey, doneRecord(requestHash, JSON.stringify(meta)), nowMs + LOCAL_REPLAY_TTL_MS);
    }
    if (fastState) {
      // Not awaited: the call is durable, and until the settle lands the reservation keeps holding exactly what the
      // settle moves into spend, so admissions in between see the same headroom. A duplicate of an idempotent call
      // sees the claim in flight for that moment and waits for the record. A lost settle is the sweeper's job.
      this.queueSettle({
        ...ref,
        org: committed.org,
        key: committed.key,
        ancestorSpentCents: committed.ancestorSpentCents,
        record: scopedKey === null ? null : doneRecord(requestHash, JSON.stringify(meta)),
        idempotencyTtlMs: IDEMPOTENCY_TTL_MS,
        nowMs: this.services.clock.now().getTime(),
      });
    }
    sendJson(res, 200, { ok: true, data: parseBody(result), meta }, { 'X-Request-Id': requestId });
  }

  /**
   * Commit the call; when the commit's outcome is unknown (an error, a lost answer), fence it: exactly one of "the
   * call committed" and "the call is recorded as failed" can become true, so the caller is never told 503 for a call
   * that was charged, and a reservation is never voided for spend that happened. If Postgres cannot even answer the
   * fence, the reservation is left to the sweeper (which settles or voids it by the same rule) and the answer is 503.
   */
  private async commitOrFence(call: CallRecord, ref: ReservationRef, fastState: boolean): Promise<CommittedCall> {
    try {
      return await this.committer.commit(call);
    } catch (err) {
      let fenced;
      try {
        fenced = await this.committer.fence(call);
      } catch (fenceErr) {
        this.log.error({ err: fenceErr, usage_id: call.usageId }, 'commit outcome unknown; left to the sweeper');
        throw new ServiceUnavailableError(
          'The call could not be recorded. Retry later with the same Idempotency-Key.',
          {
            cause: err,
          },
        );
      }
      if (fenced.committed) return fenced.call;
      if (fastState) await this.services.spend.void(ref).catch(() => undefined);
      throw new ServiceUnavailableError('The call could not be recorded; it was not charged. Retry later.', {
        cause: err,
      });
    }
  }

  /**
   * Postgres's record of an idempotency key the fast state does not know. When there is one, this admission's hold
   * is released (nothing will be spent) before the replay is answered.
   */
  private async storedReplay(
    orgId: string,
    keyId: string,
    clientKey: string,
    ref: ReservationRef,
    fastState: boolean,
  ): Promise<string | null> {
    let stored: string | null;
    try {
      stored = await findIdempotencyRecord(this.services.orm, orgId, keyId, clientKey);
    } catch (err) {
      if (fastState) await this.services.spend.void(ref).catch(() => undefined);
      throw new ServiceUnavailableError('The gateway cannot check this Idempotency-Key right now; retry shortly.', {
        cause: err,
      });
    }
    if (stored !== null && fastState) await this.services.spend.void(ref).catch(() => undefined);
    return stored;
  }

  /** The calls of one committed batch settle in one script call, on the next turn of the event loop. */
  private queueSettle(settle: SettleInput): void {
    this.settles.push(settle);
    if (this.settles.length > 1) return;
    setImmediate(() => {
      const batch = this.settles.splice(0);
      this.services.spend
        .settleMany(batch)
        .catch((err: unknown) => this.log.warn({ err, calls: batch.length }, 'settle failed after commit'));
    });
  }

  /**
   * One admission through the fast state, rebuilding it from Postgres when it is missing and waiting out a
   * concurrent duplicate. Returns the admission, or 'degraded' for a free call made while the store is down.
   */
  private async admit(
    input: Parameters<Services['spend']['admit']>[0],
    requestId: string,
    approval?: KeyAuth,
  ): Promise<Admission | 'degraded'> {
    const { spend } = this.services;
    const deadline = Date.now() + this.services.config.gateway.upstreamTimeoutMs + 5_000;
    let delay = 5;
    for (let attempt = 0; ; attempt++) {
      let admission: Admission;
      try {
        admission = await spend.admit(input);
        if (admission.outcome === 'hydrate') {
          const snapshot = await loadSnapshot(
            this.services,
            input.orgId,
            input.keyId,
            input.day,
            input.ancestors.map((a) => a.keyId),
          );
          await spend.hydrate({ ...snapshot, generation: admission.generation, nowMs: input.nowMs });
          if (attempt < 3) continue;
        }
      } catch (err) {
        if (err instanceof AppError) throw err;
        if (input.priceCents === 0) {
          this.log.warn({ err, request_id: requestId }, 'counter store unavailable; free call served unmetered');
          return 'degraded';
        }
        throw new ServiceUnavailableError('The gateway cannot account for paid calls right now; retry shortly.', {
          cause: err,
        });
      }
      switch (admission.outcome) {
        case 'admitted':
          if (admission.stale) this.refresh(input.orgId, admission.generation);
          return admission;
        case 'replay':
          return admission;
        case 'in_flight':
          if (Date.now() > deadline) {
            throw new ServiceUnavailableError('The first request with this Idempotency-Key is still running.');
          }
          await new Promise((r) => setTimeout(r, delay));
          delay = Math.min(delay * 2, 50);
          continue;
        case 'hydrate':
          throw new ServiceUnavailableError('The gateway could not load the account state; retry shortly.');
        case 'mismatch':
          throw idempotencyMismatch();
        case 'rate_limited':
          this.rateBlocked.set(
            input.rateKey,
            input.nowMs + admission.retryAfterMs,
            input.nowMs + admission.retryAfterMs,
          );
          throw new RateLimitedError(admission.retryAfterMs / 1000, 'Rate limit for this key exceeded.');
        case 'suspended':
        case 'per_call':
        case 'budget':
        case 'daily_cap':
        case 'funds':
        case 'credit_limit':
          throw refusalError(admission, input, approval, this.services.config.urls.publicBase);
      }
    }
  }

  /** Re-read a stale balance; flags changed in the meantime (a newer generation) are not overwritten. */
  private refresh(orgId: string, generation: number | undefined): void {
    loadSnapshot(this.services, orgId)
      .then((s) => this.services.spend.hydrate({ ...s, generation, nowMs: this.services.clock.now().getTime() }))
      .catch((err: unknown) => this.log.warn({ err, org_id: orgId }, 'balance refresh failed'));
  }

  private replay(res: ResponseSink, requestId: string, record: string, requestHash: string): void {
    const original = JSON.parse(record.slice(3 + requestHash.length)) as BillingMeta;
    const meta = { ...original, request_id: requestId, replayed: true, original_request_id: original.request_id };
    sendJson(res, 200, { ok: true, data: null, meta }, { 'X-Request-Id': requestId });
  }

  private async requireTerms(api: CachedApi, orgId: string): Promise<void> {
    const missing = await this.catalog.unaccepted(api, orgId);
    if (missing.length === 0) return;
    const doc = missing[0]!;
    throw termsRequiredError(api.slug, {
      approval_url: `${this.services.config.urls.publicBase}/terms/${api.slug}`,
      snapshot_url: this.services.documents.snapshotUrl(doc.id),
      document_id: doc.id,
      content_hash: doc.contentHash,
    });
  }

  /** A failed call: release its reservation (the refund) and record it, unbilled. */
  private async fail(
    ref: ReservationRef,
    fastState: boolean,
    err: unknown,
    c: {
      api: CachedApi;
      endpointId: string;
      method: string;
      rest: string;
      requestId: string;
      priceCents: number;
      started: number;
      day: string;
      now: Date;
      keyId: string;
      clientKey: string | null;
    },
  ): Promise<void> {
    if (fastState) {
      await this.services.spend.void(ref).catch((e: unknown) => this.log.warn({ err: e }, 'void failed'));
    }
    if (err instanceof UpstreamCallError) {
      this.log.warn(
        { request_id: c.requestId, api: c.api.slug, reason: err.reason, detail: err.internalMessage },
        'upstream call failed',
      );
    }
    const status =
      err instanceof UpstreamCallError ? (err.upstreamStatus ?? 0) : err instanceof AppError ? err.status : 0;
    this.committer
      .commit({
        usageId: ref.reservationId,
        orgId: ref.orgId,
        keyId: c.keyId,
        apiId: c.api.id,
        apiSlug: c.api.slug,
        endpointId: c.endpointId,
        providerOrgId: c.api.orgId,
        method: c.method,
        path: c.rest,
        status: err instanceof AppError && err.code === 'upstream_rate_limited' ? 429 : status,
        outcome: 'failed',
        priceCents: 0,
        priceCentsEffective: c.priceCents,
        latencyMs: performance.now() - c.started,
        idempotencyKey: c.clientKey,
        requestId: c.requestId,
        day: c.day,
        at: c.now,
      })
      .catch((e: unknown) => this.log.warn({ err: e }, 'failed call not recorded'));
  }
}

/** What a replay reports beyond the usage row: a scheduled increase or an active discount at the time of the call. */
function replayExtra(price: ReturnType<typeof effectivePrice>): Record<string, unknown> | null {
  if (!price.price_increase && !price.discount) return null;
  const extra: Record<string, unknown> = {};
  if (price.price_increase) extra.price_increase = price.price_increase;
  if (price.discount) extra.discount = { ...price.discount };
  return extra;
}

function idempotencyMismatch(): AppError {
  return new AppError(
    'idempotency_mismatch',
    'This Idempotency-Key was used for a different request (method, path or body).',
  );
}

function idempotencyHeader(req: IncomingMessage): string | null {
  const raw = req.headers['idempotency-key'] ?? req.headers['x-idempotency-key'];
  if (raw === undefined) return null;
  const value = Array.isArray(raw) ? raw[0]! : raw;
  if (!IDEMPOTENCY_KEY_RE.test(value)) {
    throw new ValidationError('Idempotency-Key must be 1 to 200 visible ASCII characters.');
  }
  return value;
}

function hashRequest(method: string, path: string, search: string, body: Buffer): string {
  return createHash('sha256').update(`${method}\n${path}${search}\n`).update(body).digest('hex').slice(0, 32);
}

const EMPTY = Buffer.alloc(0);

/** The whole request body, refused with 413 past `limit` (declared or streamed). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(new PayloadTooLargeError(limit));
  }
  // HTTP/1.1: a request with neither Content-Length nor Transfer-Encoding has no body.
  const chunked = req.headers['transfer-encoding'] !== undefined;
  if (req.readableEnded || (!chunked && (declared === 0 || req.headers['content-length'] === undefined))) {
    req.resume();
    return Promise.resolve(EMPTY);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.resume();
        reject(new PayloadTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

function parseBody(result: UpstreamResult): unknown {
  if (result.body.length === 0) return null;
  const text = result.body.toString('utf8');
  if (result.contentType?.includes('json')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}
