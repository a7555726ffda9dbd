/**
 * Score history and board ranks of one listing, read from the rollups the scheduled workflows write (another module
 * owns them). Expected tables (created by the rollups' migration, not here):
 *
 *   api_score_history(api_id varchar(40), day date, svc_score int,
 *                     reliability real, latency real, usage real, value real, freshness real,
 *                     primary key (api_id, day))                                   -- one point per listing per UTC day
 *   api_ranks(api_id varchar(40), board varchar(32), scope varchar(80), rank int, metric double precision,
 *             updated_at timestamptz, primary key (api_id, board, scope))       -- scope 'overall' or 'category:<slug>'
 *
 * No rows: empty lists (a new listing has no history and no rank yet), never an error.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { part, type MeritParts } from './merit.js';

export const HISTORY_LIMIT = { default: 30, max: 365 } as const;

export interface HistoryPoint extends MeritParts {
  day: string;
  svc_score: number;
}

export interface RankRow {
  board: string;
  scope: 'overall' | 'category';
  /** The category's slug for a category rank, else null. */
  category: string | null;
  rank: number;
  metric: number | null;
  updated_at: string | null;
}

/** The latest `limit` daily points, oldest first. */
export async function historyFor(em: EntityManager, apiId: string, limit: number): Promise<HistoryPoint[]> {
  const rows = await em.execute<
    {
      day: string;
      svc_score: number | null;
      reliability: number | null;
      latency: number | null;
      usage: number | null;
      value: number | null;
      freshness: number | null;
    }[]
  >(
    // day::text: a `date` read as a JS Date would shift with the process's time zone.
    `select day::text as day, svc_score, reliability, latency, usage, value, freshness
       from api_score_history where api_id = ? order by day desc limit ?`,
    [apiId, limit],
  );
  return rows.reverse().map((r) => ({
    day: r.day,
    svc_score: Math.round(Math.min(100, Math.max(0, Number(r.svc_score ?? 0)))),
    reliability: part(r.reliability),
    latency: part(r.latency),
    usage: part(r.usage),
    value: part(r.value),
    freshness: part(r.freshness),
  }));
}

/** The listing's rank on each board: overall, then in its category. */
export async function ranksFor(em: EntityManager, apiId: string): Promise<RankRow[]> {
  const rows = await em.execute<
    { board: string; scope: string; rank: number; metric: number | string | null; updated_at: Date | string | null }[]
  >(
    `select board, scope, rank, metric, updated_at from api_ranks where api_id = ?
      order by board, (scope = 'overall') desc, scope`,
    [apiId],
  );
  return rows.map((r) => {
    const category = r.scope.startsWith('category:') ? r.scope.slice('category:'.length) : null;
    return {
      board: r.board,
      scope: category === null ? 'overall' : 'category',
      category,
      rank: Number(r.rank),
      metric: r.metric === null ? null : Number(r.metric),
      updated_at: r.updated_at === null ? null : new Date(r.updated_at).toISOString(),
    };
  });
}
