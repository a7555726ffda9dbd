/**
 * `ALL /v1/proxy/{apiSlug}/{path}`: the metered, governed proxy, HTTP only. Checks run in DESIGN.md's order, each
 * before any spend or upstream call: bearer (401) → key (401) and `proxy:call` (403) → listing and endpoint (404) →
 * own API (403) → required terms (428) → body size (413) → the admission (core/spend/admission.ts: idempotent replay,
 * rate limit 429, spend governance 402, reservation) → upstream (502 / 429 upstream) → the reservation's commit or
 * void (core/spend/settlement.ts) → the envelope with billing meta. `handle` is the bearer step for HTTP;
 * `handleAuthenticated` is the rest, also driven in process by the agent-tool server (gateway/in-process.ts).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { parseBearer } from '../core/auth/bearer.js';
import { requireScope, type Principal } from '../core/auth/scopes.js';
import { AppError, ForbiddenError, NotFoundError, UnauthenticatedError, ValidationError } from '../core/errors.js';
import { effectivePrice, type EffectivePrice } from '../core/pricing/effective-price.js';
import { VERSIONED_KEY_TRUST_MS, type KeyAuth } from '../core/keys/keys.service.js';
import type { GatewayServices } from '../platform/services.js';
import { Admissions } from '../core/spend/admission.js';
import { replayExtra, replayMeta, type Reservation } from '../core/spend/settlement.js';
import type { CallRecord, UsageCommitter } from '../core/spend/usage-committer.js';
import type { UsageDrain } from '../core/spend/usage-drain.js';
import { applyCredential } from '../core/upstream/credentials.js';
import { clientRequestId } from '../core/request-id.js';
import { termsRequiredError } from '../core/spend/admission-refusals.js';
import { assertSafePath, upstreamUrl } from './upstream-path.js';
import {
  matchEndpoint,
  matchRemoved,
  type CachedApi,
  type CachedEndpoint,
  type CatalogCache,
} from './catalog-cache.js';
import { apiArchivedError, endpointRemovedError } from '../core/catalog/listings/retired.js';
import { forwardRequestHeaders } from './forward-headers.js';
import { readBody } from './read-body.js';
import { sendOkJson, type ResponseSink } from './respond.js';
import { envelopeDataJson } from './envelope-data.js';
import { toGatewayError, UpstreamCallError, type UpstreamClient, type UpstreamResult } from './upstream-client.js';
import { endHttpSpan, REQUEST_ID_ATTRIBUTE, startClientSpan, tracingOn } from '../core/tracing.js';
const IDEMPOTENCY_KEY_RE = /^[\x21-\x7e]{1,200}$/;

/** Who makes a call: the key's principal and what the hot path needs about the key (caps, ancestors). */
export interface GatewayCaller {
  principal: Principal;
  key: KeyAuth;
}

/** What one call is, once routed: the listing, the endpoint, and the request as the gateway saw it. */
interface Routed {
  api: CachedApi;
  endpointId: string;
  method: string;
  rest: string;
  requestId: string;
  started: number;
}

export class GatewayProxy {
  private readonly log;
  readonly admissions: Admissions;

  constructor(
    private readonly services: GatewayServices,
    private readonly catalog: CatalogCache,
    private readonly upstream: UpstreamClient,
    committer: UsageCommitter,
    drain: UsageDrain,
  ) {
    this.log = services.logger.child({ surface: 'gateway' });
    this.admissions = new Admissions(services, committer, drain);
  }

  /** A call over HTTP: the caller is the request's bearer API key. */
  async handle(req: IncomingMessage, res: ResponseSink, requestId: string, slug: string, rest: string, search: string) {
    const started = performance.now();
    const credential = parseBearer(req.headers.authorization);
    if (credential.type === 'session') {
      throw new UnauthenticatedError('The gateway accepts API keys only; session tokens are refused.');
    }
    // A cached key carrying its org's key version is trusted longer here: every admission and lease checks it.
    const caller = await this.services.keys.authenticate(credential.token, {
      versionedTrustMs: VERSIONED_KEY_TRUST_MS,
    });
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
    requireScope(principal, 'proxy:call');
    assertSafePath(rest);
    const cached = this.catalog.get(slug);
    const api = cached instanceof Promise ? await cached : cached;
    if (!api) throw new NotFoundError(`No live API with slug "${slug}".`);
    const method = req.method ?? 'GET';
    const now = this.services.clock.now();
    const endpoint = this.route(api, method, rest, principal.orgId, now);
    if (api.requiredDocuments.length > 0) await this.requireTerms(api, principal.orgId);

    const body = await readBody(req, this.services.config.gateway.maxRequestBytes);
    const price = effectivePrice(endpoint.priced, now);
    const clientKey = idempotencyHeader(req);
    const requestHash = clientKey === null ? '' : hashRequest(method, rest, search, body);
    // The upstream request is built before anything is reserved, so nothing between the reservation and its commit
    // or void can throw.
    const url = upstreamUrl(api.baseOrigin, api.basePath, rest, search);
    const headers = upstreamHeaders(req, api, url, requestId);

    const decision = await this.admissions.admit({
      orgId: principal.orgId,
      key,
      now,
      priceCents: price.price_cents_effective,
      clientKey,
      requestHash,
      requestId,
    });
    if (decision.kind === 'refused') throw decision.error;
    if (decision.kind === 'replay') return replay(res, requestId, decision.record, requestHash, endpoint);

    const routed: Routed = { api: api, endpointId: endpoint.id, method, rest, requestId, started };
    let result: UpstreamResult;
    const upstreamStarted = performance.now();
    const span = tracingOn() ? clientSpan(routed, headers, url) : undefined;
    try {
      result = await this.upstream.request({ url, method, headers, body: body.length > 0 ? body : null });
      if (span) endHttpSpan(span, result.status, 'client');
      const failure = toGatewayError(result);
      if (failure) throw failure;
    } catch (err) {
      if (span?.isRecording()) endHttpSpan(span, 0, 'client', err);
      this.observeUpstream(api.slug, upstreamStarted, err);
      await decision.void(this.failedCall(decision, routed, err, now));
      throw err;
    }
    this.observeUpstream(api.slug, upstreamStarted);
    const call = callRecord(decision, routed, result.status, now, price, req);
    const settled = await decision.commit(call, price);
    if (settled.kind === 'replay') return replay(res, requestId, settled.record, requestHash, endpoint);
    sendOkJson(res, requestId, parseBody(result), settled.meta, endpoint.removal?.headers);
  }

  /**
   * The listing (404 unless claimed, 410 archived), the endpoint (404; 410 removed or past its sunset) and the
   * own-API rule (403).
   */
  private route(api: CachedApi, method: string, rest: string, orgId: string, now: Date) {
    if (api.archivedAt) throw apiArchivedError(api.slug, api.archivedAt);
    if (api.source === 'directory') {
      throw new NotFoundError(
        `${api.slug} is listed from a public directory and is not callable until its provider claims it.`,
      );
    }
    const endpoint = matchEndpoint(api, method, rest);
    if (!endpoint) {
      const removed = matchRemoved(api, method, rest);
      if (removed) throw endpointRemovedError(api.slug, method, rest, removed.removedAt);
      throw new NotFoundError(`${api.slug} has no endpoint ${method} ${rest}.`);
    }
    if (endpoint.removal && endpoint.removal.sunsetMs <= now.getTime()) {
      throw endpointRemovedError(api.slug, method, rest, endpoint.removal.sunsetAt);
    }
    if (api.orgId === orgId) {
      throw new ForbiddenError('An organization cannot call its own API through the gateway.');
    }
    return endpoint;
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

  private observeUpstream(slug: string, started: number, err?: unknown): void {
    const { metrics } = this.services;
    metrics.upstreamDuration.observe({ api: slug, outcome: err ? 'error' : 'ok' }, (performance.now() - started) / 1e3);
    if (!err) return;
    const reason = err instanceof UpstreamCallError ? err.reason : err instanceof AppError ? err.code : 'other';
    metrics.upstreamErrors.inc({ api: slug, reason });
  }

  /** A failed call's usage row (unbilled), with the status the upstream or the gateway gave it. */
  private failedCall(r: Reservation, c: Routed, err: unknown, now: Date): CallRecord {
    if (err instanceof UpstreamCallError) {
      this.log.warn(
        { request_id: c.requestId, api: c.api.slug, reason: err.reason, detail: err.internalMessage },
        'upstream call failed',
      );
    }
    const status =
      err instanceof UpstreamCallError ? (err.upstreamStatus ?? 0) : err instanceof AppError ? err.status : 0;
    const failed = err instanceof AppError && err.code === 'upstream_rate_limited' ? 429 : status;
    return callRecord(r, c, failed, now, null, null);
  }
}

/**
 * A call's usage row: with the effective price and the request for a successful call (charged, replayable), with
 * nulls for a failed one (unbilled, no key spend).
 */
function callRecord(
  r: Reservation,
  c: Routed,
  status: number,
  now: Date,
  price: EffectivePrice | null,
  req: IncomingMessage | null,
): CallRecord {
  const success = price !== null;
  return {
    usageId: r.reservationId,
    orgId: r.orgId,
    keyId: r.keyId,
    ancestorKeyIds: success ? r.ancestorKeyIds : undefined,
    apiId: c.api.id,
    apiSlug: c.api.slug,
    endpointId: c.endpointId,
    providerOrgId: c.api.orgId,
    method: c.method,
    path: c.rest,
    status,
    outcome: success ? 'success' : 'failed',
    priceCents: success ? r.priceCents : 0,
    priceCentsEffective: r.priceCents,
    latencyMs: performance.now() - c.started,
    idempotencyKey: r.clientKey,
    requestHash: success ? r.requestHash : undefined,
    replayExtra: success ? replayExtra(price) : undefined,
    requestId: c.requestId,
    clientRequestId: req ? clientRequestId(req.headers['x-request-id']) : undefined,
    day: r.day,
    at: now,
  };
}

/** The upstream request's headers: the caller's, filtered, with the listing's credential and our request id. */
function upstreamHeaders(req: IncomingMessage, api: CachedApi, url: URL, requestId: string): Record<string, string> {
  const headers = forwardRequestHeaders(req.headers);
  if (api.credential) Object.assign(headers, applyCredential(url, api.credential));
  headers['x-request-id'] = requestId;
  return headers;
}

/** Tracing on: a client span, its traceparent sent upstream (never the URL: a query credential may be in it). */
function clientSpan(c: Routed, headers: Record<string, string>, url: URL) {
  return startClientSpan(`${c.method} upstream`, headers, {
    'http.request.method': c.method,
    'server.address': url.hostname,
    'svc.api_slug': c.api.slug,
    'svc.endpoint_id': c.endpointId,
    [REQUEST_ID_ATTRIBUTE]: c.requestId,
  });
}

function replay(res: ResponseSink, requestId: string, record: string, requestHash: string, e: CachedEndpoint): void {
  sendOkJson(res, requestId, 'null', replayMeta(record, requestHash, requestId), e.removal?.headers);
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

/** The envelope's `data` as JSON text: the upstream's JSON spliced in as is, or a string, or null. */
function parseBody(result: UpstreamResult): string {
  return envelopeDataJson(result.body, result.contentType);
}
