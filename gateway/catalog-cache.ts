/**
 * The gateway's in-process view of live listings: endpoints with compiled path matchers, the decrypted upstream
 * credential and the required documents in force, loaded once per slug and kept for a few seconds (misses too, so an
 * unknown slug cannot hammer Postgres), and refreshed in the background: one refresh reads every cached listing older
 * than half its lifetime in one set of queries (five, whatever the number of listings), so a gateway serving a
 * thousand listings pays a few reads every few seconds rather than five per listing (issue 32, the scale row). Prices
 * are computed per call from the cached endpoint fields (effectivePrice), so a scheduled increase takes effect at its
 * exact instant; other listing edits are seen within
 * the cache lifetime, or at once when a writer announces the change (core/spend/gateway-events.ts: the gateway process
 * subscribes and calls `invalidate`). Terms acceptances are cached once seen (an acceptance is never withdrawn).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Api, Endpoint, RemovedEndpoint, type IApi, type IEndpoint } from '../db/entities/index.js';
import { compileTemplate, matchTemplate } from '../core/catalog/listings/endpoint-match.js';
import { deprecationHeaders } from '../core/catalog/listings/retired.js';
import type { PricedEndpoint } from '../core/pricing/effective-price.js';
import type { ProviderCredentialsService } from '../core/providers/credentials.service.js';
import type { DocumentsService } from '../core/terms/documents.service.js';
import type { UpstreamCredential } from '../core/upstream/credentials.js';

export interface CachedEndpoint {
  id: string;
  method: string;
  template: string;
  /** Null for a literal path (compared as a string). */
  matcher: RegExp | null;
  priced: PricedEndpoint;
  /** An announced removal: its `Deprecation` and `Sunset` headers until `sunsetMs`, 410 from then on. */
  removal: { headers: Readonly<Record<string, string>>; sunsetAt: Date; sunsetMs: number } | null;
}

/** An endpoint removed from the listing: its calls answer 410 `endpoint_removed` with the date. */
export interface CachedRemovedEndpoint {
  method: string;
  template: string;
  matcher: RegExp | null;
  removedAt: Date;
}

export interface CachedApi {
  /** `directory`: listed from a public directory, not callable until its provider claims it. */
  source: 'provider' | 'directory';
  id: string;
  slug: string;
  orgId: string;
  baseOrigin: string;
  /** The base URL's path without a trailing slash ('' for the root). */
  basePath: string;
  credential: UpstreamCredential | null;
  endpoints: CachedEndpoint[];
  requiredDocuments: { id: string; contentHash: string }[];
  /** Removed endpoints (matched only when no endpoint matches). */
  removed: CachedRemovedEndpoint[];
  /** Set for an archived listing: every call answers 410 `api_archived`. */
  archivedAt: Date | null;
}

const TTL_MS = 5_000;
const MISS_TTL_MS = 1_000;
/** At most this many listings per background refresh (the next call's refresh takes the rest). */
const REFRESH_BATCH = 1_000;

export class CatalogCache {
  private readonly entries = new Map<string, { value: CachedApi | null; expiresAt: number }>();
  private readonly loading = new Map<string, Promise<CachedApi | null>>();
  private readonly accepted = new Set<string>();
  /** Bumped by every invalidation, so a load that started before one does not refill the cache. */
  private epoch = 0;

  /** Reads of Postgres so far: one per listing loaded on a miss, one per background refresh (for the tests). */
  loads = 0;
  private readonly ttlMs: number;

  constructor(
    private readonly deps: {
      orm: MikroORM;
      providerCredentials: ProviderCredentialsService;
      documents: DocumentsService;
    },
    options: { ttlMs?: number } = {},
  ) {
    this.ttlMs = options.ttlMs ?? TTL_MS;
  }

  get(slug: string, nowMs: number = Date.now()): Promise<CachedApi | null> | CachedApi | null {
    const hit = this.entries.get(slug);
    if (hit && hit.expiresAt > nowMs) return hit.value;
    // A known listing past its lifetime is served while it reloads in the background (no request waits on the
    // reload); a miss, or a listing older than twice its lifetime, waits for Postgres.
    if (hit?.value && hit.expiresAt + this.ttlMs > nowMs) {
      this.refreshSoon();
      return hit.value;
    }
    // Postgres unreachable: a listing this process knew is still served (its prices and credential as last read);
    // nothing known, the error (503 when the database is down) is the answer.
    if (hit?.value) return this.reload(slug).catch(() => hit.value);
    return this.reload(slug);
  }

  /** The background refresh is running or queued. */
  private refreshing = false;

  /** Queue one background refresh of every cached listing past half its lifetime (see the header). */
  private refreshSoon(): void {
    if (this.refreshing) return;
    this.refreshing = true;
    setImmediate(() => {
      this.refreshStale()
        .catch(() => undefined) // Postgres down: the entries are served as they are, and retried by the next call
        .finally(() => (this.refreshing = false));
    });
  }

  private async refreshStale(): Promise<void> {
    const now = Date.now();
    const slugs: string[] = [];
    for (const [slug, entry] of this.entries) {
      if (entry.value && entry.expiresAt - this.ttlMs / 2 <= now && !this.loading.has(slug)) slugs.push(slug);
      if (slugs.length >= REFRESH_BATCH) break;
    }
    if (slugs.length === 0) return;
    const epoch = this.epoch;
    const loaded = await this.loadMany(slugs);
    // A change announced while this load ran may be missing from it: those listings load again on their next call.
    if (this.epoch !== epoch) return;
    const expiresAt = Date.now() + this.ttlMs;
    for (const slug of slugs) {
      const value = loaded.get(slug) ?? null;
      this.entries.set(slug, { value, expiresAt: value ? expiresAt : Date.now() + MISS_TTL_MS });
    }
  }

  private reload(slug: string): Promise<CachedApi | null> {
    const current = this.loading.get(slug);
    if (current) return current;
    const epoch = this.epoch;
    const pending: Promise<CachedApi | null> = this.loadMany([slug]).then(
      (loaded) => {
        const value = loaded.get(slug) ?? null;
        if (this.loading.get(slug) === pending) this.loading.delete(slug);
        // A change announced while this load ran may be missing from it: it answers its own callers, nobody else.
        if (this.epoch === epoch) {
          this.entries.set(slug, { value, expiresAt: Date.now() + (value ? this.ttlMs : MISS_TTL_MS) });
        }
        return value;
      },
      (err: unknown) => {
        if (this.loading.get(slug) === pending) this.loading.delete(slug);
        throw err;
      },
    );
    this.loading.set(slug, pending);
    return pending;
  }

  /** Forget a listing (or all): the next call waits for Postgres, and loads already running are not kept. */
  invalidate(slug?: string): void {
    this.epoch++;
    if (slug === undefined) {
      this.entries.clear();
      this.loading.clear();
    } else {
      this.entries.delete(slug);
      this.loading.delete(slug);
    }
  }

  /** The required documents `orgId` has not accepted (empty when none are required). */
  async unaccepted(api: CachedApi, orgId: string): Promise<{ id: string; contentHash: string }[]> {
    if (api.requiredDocuments.length === 0) return [];
    const missing = api.requiredDocuments.filter((d) => !this.accepted.has(`${orgId}|${d.id}`));
    if (missing.length === 0) return [];
    const rows = await this.deps.orm.em
      .fork()
      .execute<{ document_id: string }[]>(
        `select document_id from terms_acceptances where org_id = ? and document_id in (${missing.map(() => '?').join(',')})`,
        [orgId, ...missing.map((d) => d.id)],
      );
    for (const r of rows) this.accepted.add(`${orgId}|${r.document_id}`);
    return missing.filter((d) => !this.accepted.has(`${orgId}|${d.id}`));
  }

  /** Listings by slug, live or archived (a slug absent from the map is unknown or not callable). */
  private async loadMany(slugs: readonly string[]): Promise<Map<string, CachedApi>> {
    this.loads += 1;
    const em = this.deps.orm.em.fork();
    const out = new Map<string, CachedApi>();
    const apis = await em.find(Api, { slug: { $in: [...slugs] }, status: { $in: ['live', 'archived'] } });
    const live = apis.filter((a) => a.status !== 'archived');
    for (const api of apis) {
      if (api.status === 'archived') {
        out.set(api.slug, { ...head(api), credential: null, endpoints: [], requiredDocuments: [] });
      }
    }
    if (live.length === 0) return out;
    const ids = live.map((a) => a.id);
    const [endpoints, removed, credentials, documents] = await Promise.all([
      em.find(Endpoint, { api: { $in: ids } }, { orderBy: { position: 'asc', id: 'asc' } }),
      em.find(RemovedEndpoint, { api: { $in: ids } }, { orderBy: { removedAt: 'desc' } }),
      this.deps.providerCredentials.credentialsOf(em, live),
      this.deps.documents.effectiveForMany(em, live),
    ]);
    const endpointsOf = groupBy(endpoints, (e) => e.api.id);
    const removedOf = groupBy(removed, (e) => e.api.id);
    for (const api of live) {
      out.set(api.slug, {
        ...head(api),
        credential: credentials.get(api.id) ?? null,
        endpoints: (endpointsOf.get(api.id) ?? []).map(cachedEndpoint),
        removed: (removedOf.get(api.id) ?? []).map((e) => ({
          method: e.method,
          template: e.path,
          matcher: compileTemplate(e.path),
          removedAt: e.removedAt,
        })),
        requiredDocuments: (documents.get(api.id) ?? [])
          .filter((d) => d.acceptanceMode === 'required')
          .map((d) => ({ id: d.id, contentHash: d.contentHash })),
      });
    }
    return out;
  }
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

function cachedEndpoint(e: IEndpoint): CachedEndpoint {
  return {
    id: e.id,
    method: e.method,
    template: e.path,
    matcher: compileTemplate(e.path),
    priced: {
      priceCents: e.priceCents,
      pendingPriceCents: e.pendingPriceCents ?? null,
      pendingPriceEffectiveAt: e.pendingPriceEffectiveAt ?? null,
      discount: e.discount ?? null,
    },
    removal:
      e.sunsetAt && e.removalAnnouncedAt
        ? {
            headers: deprecationHeaders(e.removalAnnouncedAt, e.sunsetAt),
            sunsetAt: e.sunsetAt,
            sunsetMs: e.sunsetAt.getTime(),
          }
        : null,
  };
}

/** What every cached listing carries, live or archived. */
function head(api: IApi): Omit<CachedApi, 'credential' | 'endpoints' | 'requiredDocuments'> {
  const base = new URL(api.baseUrl);
  return {
    id: api.id,
    slug: api.slug,
    source: api.source,
    orgId: api.org.id,
    baseOrigin: base.origin,
    basePath: base.pathname.replace(/\/+$/, ''),
    removed: [],
    archivedAt: api.status === 'archived' ? (api.archivedAt ?? null) : null,
  };
}

/** A removed endpoint that a method and path resolve to (only asked when no endpoint matches). */
export function matchRemoved(api: CachedApi, method: string, path: string): CachedRemovedEndpoint | undefined {
  return api.removed.length ? matchTemplate(api.removed, method, path) : undefined;
}

/** The endpoint for a method and path (core/catalog/listings/endpoint-match.ts: the rule the quote shares). */
export function matchEndpoint(api: CachedApi, method: string, path: string): CachedEndpoint | undefined {
  return matchTemplate(api.endpoints, method, path);
}
