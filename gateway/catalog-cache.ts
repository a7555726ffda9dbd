/**
 * The gateway's in-process view of live listings: endpoints with compiled path matchers, the decrypted upstream
 * credential and the required documents in force, loaded once per slug and kept for a few seconds (misses too, so an
 * unknown slug cannot hammer Postgres), and refreshed in the background. Prices are computed per call from the cached endpoint fields
 * (effectivePrice), so a scheduled increase takes effect at its exact instant; other listing edits are seen within
 * the cache lifetime, or at once when a writer announces the change (core/spend/gateway-events.ts: the gateway process
 * subscribes and calls `invalidate`). Terms acceptances are cached once seen (an acceptance is never withdrawn).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Api, Endpoint, RemovedEndpoint, type IApi } from '../db/entities/index.js';
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

export class CatalogCache {
  private readonly entries = new Map<string, { value: CachedApi | null; expiresAt: number }>();
  private readonly loading = new Map<string, Promise<CachedApi | null>>();
  private readonly accepted = new Set<string>();
  /** Bumped by every invalidation, so a load that started before one does not refill the cache. */
  private epoch = 0;

  constructor(
    private readonly deps: {
      orm: MikroORM;
      providerCredentials: ProviderCredentialsService;
      documents: DocumentsService;
    },
  ) {}

  get(slug: string, nowMs: number = Date.now()): Promise<CachedApi | null> | CachedApi | null {
    const hit = this.entries.get(slug);
    if (hit && hit.expiresAt > nowMs) return hit.value;
    // A known listing past its lifetime is served while it reloads in the background (no request waits on the
    // reload); a miss, or a listing older than twice its lifetime, waits for Postgres.
    if (hit?.value && hit.expiresAt + TTL_MS > nowMs) {
      this.reload(slug).catch(() => undefined);
      return hit.value;
    }
    // Postgres unreachable: a listing this process knew is still served (its prices and credential as last read);
    // nothing known, the error (503 when the database is down) is the answer.
    if (hit?.value) return this.reload(slug).catch(() => hit.value);
    return this.reload(slug);
  }

  private reload(slug: string): Promise<CachedApi | null> {
    const current = this.loading.get(slug);
    if (current) return current;
    const epoch = this.epoch;
    const pending: Promise<CachedApi | null> = this.load(slug).then(
      (value) => {
        if (this.loading.get(slug) === pending) this.loading.delete(slug);
        // A change announced while this load ran may be missing from it: it answers its own callers, nobody else.
        if (this.epoch === epoch) {
          this.entries.set(slug, { value, expiresAt: Date.now() + (value ? TTL_MS : MISS_TTL_MS) });
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

  private async load(slug: string): Promise<CachedApi | null> {
    const em = this.deps.orm.em.fork();
    const api = await em.findOne(Api, { slug, status: { $in: ['live', 'archived'] } });
    if (!api) return null;
    if (api.status === 'archived') return { ...head(api), credential: null, endpoints: [], requiredDocuments: [] };
    const [endpoints, removed] = await Promise.all([
      em.find(Endpoint, { api: api.id }, { orderBy: { position: 'asc', id: 'asc' } }),
      em.find(RemovedEndpoint, { api: api.id }, { orderBy: { removedAt: 'desc' } }),
    ]);
    const credential = await this.deps.providerCredentials.credentialOf(em, api);
    const documents = (await this.deps.documents.effectiveFor(em, api)).filter((d) => d.acceptanceMode === 'required');
    return {
      ...head(api),
      credential,
      endpoints: endpoints.map((e) => ({
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
      })),
      removed: removed.map((e) => ({
        method: e.method,
        template: e.path,
        matcher: compileTemplate(e.path),
        removedAt: e.removedAt,
      })),
      requiredDocuments: documents.map((d) => ({ id: d.id, contentHash: d.contentHash })),
    };
  }
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
