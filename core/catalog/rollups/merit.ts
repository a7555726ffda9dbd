/**
 * Merit scores of listings, read from the rollup the scheduled workflows maintain (issue 11 item 6; another module
 * writes it). This is the one reader: the listing detail, search and boards ask here.
 *
 * Expected table (created by the rollups' migration, not here):
 *
 *   api_scores(
 *     api_id     varchar(40) primary key,   -- apis.id
 *     svc_score  int,                       -- 0..100
 *     reliability real, latency real, usage real, value real, freshness real,   -- each 0..1, higher is better
 *     updated_at timestamptz
 *   )
 *
 * A listing with no row yet (new, or never called) gets the neutral defaults below: `svc_score` 50 and every part
 * 0.5, `updated_at` null and `rated: false`, so it ranks mid-table rather than first or last until it has evidence.
 * Values read are clamped to their ranges, so a rollup bug cannot leak a score outside 0..100 or a part outside 0..1.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Merit } from './rollups.schemas.js';
export type { Merit, MeritParts } from './rollups.schemas.js';

export const NEUTRAL_SVC_SCORE = 50;
export const NEUTRAL_PART = 0.5;
export const MERIT_PARTS = ['reliability', 'latency', 'usage', 'value', 'freshness'] as const;

export function neutralMerit(): Merit {
  return {
    svc_score: NEUTRAL_SVC_SCORE,
    reliability: NEUTRAL_PART,
    latency: NEUTRAL_PART,
    usage: NEUTRAL_PART,
    value: NEUTRAL_PART,
    freshness: NEUTRAL_PART,
    rated: false,
    updated_at: null,
  };
}

interface ScoreRow {
  api_id: string;
  svc_score: number | string | null;
  reliability: number | string | null;
  latency: number | string | null;
  usage: number | string | null;
  value: number | string | null;
  freshness: number | string | null;
  updated_at: Date | string | null;
}

function clamp(v: number | string | null, lo: number, hi: number, neutral: number): number {
  const n = v === null ? NaN : Number(v);
  if (!Number.isFinite(n)) return neutral;
  return Math.min(hi, Math.max(lo, n));
}

/** Round a part to 4 decimals (the rollup stores `real`: more digits are noise). */
export function part(v: number | string | null): number {
  return Math.round(clamp(v, 0, 1, NEUTRAL_PART) * 10_000) / 10_000;
}

export function meritFromRow(row: Omit<ScoreRow, 'api_id'>): Merit {
  return {
    svc_score: Math.round(clamp(row.svc_score, 0, 100, NEUTRAL_SVC_SCORE)),
    reliability: part(row.reliability),
    latency: part(row.latency),
    usage: part(row.usage),
    value: part(row.value),
    freshness: part(row.freshness),
    rated: true,
    updated_at: row.updated_at === null ? null : new Date(row.updated_at).toISOString(),
  };
}

/** Merit of each listing id (every id given is in the map; unrated ones carry the neutral defaults). */
export async function meritFor(em: EntityManager, apiIds: readonly string[]): Promise<Map<string, Merit>> {
  const out = new Map<string, Merit>();
  const ids = [...new Set(apiIds)];
  if (ids.length === 0) return out;
  const rows = await em.execute<ScoreRow[]>(
    `select api_id, svc_score, reliability, latency, usage, value, freshness, updated_at
       from api_scores where api_id in (${ids.map(() => '?').join(',')})`,
    ids,
  );
  for (const r of rows) out.set(r.api_id, meritFromRow(r));
  for (const id of ids) if (!out.has(id)) out.set(id, neutralMerit());
  return out;
}
