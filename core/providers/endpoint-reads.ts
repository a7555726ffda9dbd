/**
 * Reads the console's endpoint editor needs and no route exposes (read-only, org-scoped; issue 31): a listing's
 * removed endpoints (their calls answer 410 endpoint_removed since `removed_at`), and which of its endpoints had a
 * call in the last 30 days (a removal on a live listing waits out the notice only for those: endpoint-writes.ts).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { QUIET_REMOVAL_MS } from './endpoint-writes.js';

export interface RemovedEndpointRow {
  endpoint_id: string;
  method: string;
  path: string;
  summary: string | null;
  removed_at: string;
}

/** The org's listing's removed endpoints, latest first (at most `limit`). */
export async function removedEndpointsOf(
  orm: MikroORM,
  orgId: string,
  apiId: string,
  limit = 50,
): Promise<RemovedEndpointRow[]> {
  const rows = await orm.em
    .fork()
    .execute<{ id: string; method: string; path: string; summary: string | null; removed_at: Date | string }[]>(
      `select r.id, r.method, r.path, r.summary, r.removed_at
       from removed_endpoints r join apis a on a.id = r.api_id
      where r.api_id = ? and a.org_id = ?
      order by r.removed_at desc, r.id
      limit ?`,
      [apiId, orgId, limit],
    );
  return rows.map((r) => ({
    endpoint_id: r.id,
    method: r.method,
    path: r.path,
    summary: r.summary,
    removed_at: new Date(r.removed_at).toISOString(),
  }));
}

/** Which of the org's listing's endpoints had a call since `now` − 30 days (usage_events_api_created_idx). */
export async function recentlyCalledOf(orm: MikroORM, orgId: string, apiId: string, now: Date): Promise<Set<string>> {
  const rows = await orm.em.fork().execute<{ endpoint_id: string }[]>(
    `select distinct u.endpoint_id
       from usage_events u join apis a on a.id = u.api_id
      where u.api_id = ? and a.org_id = ? and u.created_at >= ?`,
    [apiId, orgId, new Date(now.getTime() - QUIET_REMOVAL_MS)],
  );
  return new Set(rows.map((r) => r.endpoint_id));
}
