/**
 * The public provider directory: orgs with a public profile (a slug), their trust badges, stats and live APIs.
 * Badges: `verified_email` (the owner proved the address), `connect_enabled` (Stripe payouts are set up),
 * `verified_upstream` (a live API passed its latest upstream smoke test).
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Api } from '../../db/entities/index.js';
import type { Clock } from '../clock.js';
import { NotFoundError } from '../errors.js';
import { Pagination, pageInfo, type Page } from '../pagination.js';
import type { ProfilesService } from '../profiles/profiles.service.js';
import { BADGES, type ProviderDetail, type ProviderListItem } from '../profiles/profiles.schemas.js';

/** GET /v1/providers and `list_providers`: `q` matches the slug, display name or bio; offset pagination. */
export const ProvidersQuery = Pagination.extend({ q: z.string().trim().max(100).optional() }).strict();
export type ProvidersQuery = z.infer<typeof ProvidersQuery>;

interface Row {
  org_id: string;
  slug: string;
  display_name: string | null;
  bio: string | null;
  website: string | null;
  avatar_id: string | null;
  avatar_type: 'image/png' | 'image/jpeg' | 'image/webp' | null;
  verified_email: boolean;
  connect_enabled: boolean;
  verified_upstream: boolean;
  live_api_count: string;
}

const SELECT = `
  select p.org_id, p.slug, p.display_name, p.bio, p.website, p.avatar_id, av.content_type as avatar_type,
         exists(select 1 from users u where u.org_id = p.org_id and u.role = 'owner' and u.email_verified_at is not null) as verified_email,
         (o.connect_status = 'enabled') as connect_enabled,
         exists(select 1 from apis a where a.org_id = p.org_id and a.status = 'live' and a.verification_status = 'passed') as verified_upstream,
         (select count(*) from apis a where a.org_id = p.org_id and a.status = 'live') as live_api_count
    from profiles p
    join orgs o on o.id = p.org_id
    left join avatars av on av.id = p.avatar_id
   where p.slug is not null`;

/**
 * How long a provider's 30-day call stats are served from memory. They are public, the same for every reader, and
 * cost an index range scan over the provider's usage events: a popular profile page is read far more often than its
 * numbers change meaningfully. Per process, bounded (oldest entries dropped first), not invalidated.
 */
export const PROVIDER_STATS_TTL_MS = 60_000;
export const PROVIDER_STATS_MAX_ENTRIES = 10_000;

interface UsageStats {
  calls: number;
  ok: number;
}

export class ProviderDirectoryService {
  private readonly stats = new Map<string, { value: Promise<UsageStats>; expiresAt: number }>();

  constructor(private readonly deps: { orm: MikroORM; clock: Clock; profiles: ProfilesService }) {}

  private item(r: Row): ProviderListItem {
    return {
      org_id: r.org_id,
      display_name: r.display_name,
      slug: r.slug,
      bio: r.bio,
      website: r.website,
      avatar_url:
        r.avatar_id && r.avatar_type
          ? this.deps.profiles.avatarUrl({ id: r.avatar_id, contentType: r.avatar_type })
          : null,
      badges: BADGES.filter((b) => r[b]),
      live_api_count: Number(r.live_api_count),
    };
  }

  async list(query: ProvidersQuery): Promise<Page<ProviderListItem>> {
    const em = this.deps.orm.em.fork();
    const params: unknown[] = [];
    let filter = '';
    if (query.q) {
      const like = `%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      filter = ' and (p.slug ilike ? or p.display_name ilike ? or p.bio ilike ?)';
      params.push(like, like, like);
    }
    const rows = await em.execute<Row[]>(
      `${SELECT}${filter} order by live_api_count desc, p.slug asc limit ? offset ?`,
      [...params, query.limit, query.offset],
    );
    const [count] = await em.execute<{ n: string }[]>(
      `select count(*) as n from profiles p where p.slug is not null${filter}`,
      params,
    );
    const total = Number(count?.n ?? 0);
    return {
      items: rows.map((r) => this.item(r)),
      pagination: pageInfo(query.limit, query.offset, rows.length, total),
    };
  }

  async get(slug: string): Promise<ProviderDetail> {
    const em = this.deps.orm.em.fork();
    const [row] = await em.execute<Row[]>(`${SELECT} and p.slug = ?`, [slug]);
    if (!row) throw new NotFoundError(`No provider "${slug}".`);
    const apis = await em.find(
      Api,
      { org: row.org_id, status: 'live' },
      { orderBy: { publishedAt: 'desc', id: 'asc' } },
    );
    const { calls, ok } = await this.usageStats(em, row.org_id);
    return {
      ...this.item(row),
      stats: {
        live_apis: apis.length,
        calls_30d: calls,
        success_rate_30d: calls ? Math.round((ok / calls) * 10_000) / 10_000 : null,
      },
      apis: apis.map((a) => ({
        slug: a.slug,
        name: a.name,
        summary: a.summary,
        category: a.category ?? null,
        published_at: a.publishedAt?.toISOString() ?? null,
      })),
    };
  }

  /**
   * Calls and successful calls to the org's APIs over the last 30 days, cached (PROVIDER_STATS_TTL_MS). The pending
   * promise is what is cached, so concurrent readers of a cold entry share one query; a failed query is not kept.
   */
  private usageStats(em: EntityManager, orgId: string): Promise<UsageStats> {
    const now = this.deps.clock.now().getTime();
    const hit = this.stats.get(orgId);
    if (hit && hit.expiresAt > now) return hit.value;
    const value = this.queryUsageStats(em, orgId, new Date(now - 30 * 86_400_000));
    this.stats.delete(orgId);
    this.stats.set(orgId, { value, expiresAt: now + PROVIDER_STATS_TTL_MS });
    if (this.stats.size > PROVIDER_STATS_MAX_ENTRIES) {
      // A Map iterates in insertion order: the first key is the oldest entry.
      const oldest = this.stats.keys().next();
      if (!oldest.done) this.stats.delete(oldest.value);
    }
    value.catch(() => {
      if (this.stats.get(orgId)?.value === value) this.stats.delete(orgId);
    });
    return value;
  }

  private async queryUsageStats(em: EntityManager, orgId: string, since: Date): Promise<UsageStats> {
    // One range scan of usage_events_api_created_idx per API of the org.
    const [usage] = await em.execute<{ calls: string; ok: string }[]>(
      `select count(*) as calls, count(*) filter (where u.outcome = 'success') as ok
         from apis a join usage_events u on u.api_id = a.id and u.created_at >= ?
        where a.org_id = ?`,
      [since, orgId],
    );
    return { calls: Number(usage?.calls ?? 0), ok: Number(usage?.ok ?? 0) };
  }
}
