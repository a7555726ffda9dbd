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
import type { HistoryPointView, RankView } from './rollups.schemas.js';
import { part } from './merit.js';
import { BOARDS } from './rollups.scoring.js';

export const HISTORY_LIMIT = { default: 30, max: 365 } as const;

/** The latest `limit` daily points, oldest first. */
export async function historyFor(em: EntityManager, apiId: string, limit: number): Promise<HistoryPointView[]> {
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

/**
 * The listing's place on every board (issue 22): each of the six boards overall and, when the listing has a category,
 * in that category, in the boards' order; `rank: null` where it is not ranked (yet), and `board_size`, how many
 * listings the board ranks in that scope, so "not ranked" and "12th of 40" read the same way. The size comes from
 * the (board, scope, rank) index.
 */
export async function ranksFor(em: EntityManager, apiId: string, category: string | null): Promise<RankView[]> {
  const scopes = category ? ['overall', `category:${category}`] : ['overall'];
  const wanted = BOARDS.flatMap((board) => scopes.map((scope) => ({ board, scope })));
  const rows = await em.execute<
    {
      board: string;
      scope: string;
      rank: number | null;
      metric: number | string | null;
      updated_at: Date | string | null;
      board_size: number | string;
    }[]
  >(
    `select w.board, w.scope, r.rank, r.metric, r.updated_at,
            (select count(*) from api_ranks c where c.board = w.board and c.scope = w.scope) as board_size
       from unnest(?::text[], ?::text[]) with ordinality as w(board, scope, position)
       left join api_ranks r on r.api_id = ? and r.board = w.board and r.scope = w.scope
      order by w.position`,
    [`{${wanted.map((w) => w.board).join(',')}}`, `{${wanted.map((w) => `"${w.scope}"`).join(',')}}`, apiId],
  );
  return rows.map((r) => {
    const inCategory = r.scope.startsWith('category:') ? r.scope.slice('category:'.length) : null;
    return {
      board: r.board,
      scope: inCategory === null ? 'overall' : 'category',
      category: inCategory,
      rank: r.rank === null ? null : Number(r.rank),
      board_size: Number(r.board_size),
      metric: r.metric === null ? null : Number(r.metric),
      updated_at: r.updated_at === null ? null : new Date(r.updated_at).toISOString(),
    };
  });
}
