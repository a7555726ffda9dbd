/**
 * The storefront's row of `npm run bench:search` (issue 31): GET /apis/{slug} over HTTP at the benchmark's 10,000
 * listings, as an anonymous visitor (no cookie, no If-None-Match: every answer rendered in full), over directory
 * entries and over provider listings with priced endpoints, input and output schemas, and a month of traffic in the
 * rollup's stats (`PROVIDER_LISTINGS` of them, added here), then the search page GET /apis (browse, words, filters) for reference.
 * Target: listing page p95 ≤ 50 ms. The search page follows GET /v1/search's latency, which it calls.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { newId } from '../../core/ids.js';

export const PROVIDER_LISTINGS = 20;
const ROUNDS = 5;

export interface Percentiles {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Provider listings: three endpoints each (one free), schemas, a week of successful calls; indexed and live. */
export async function addProviderListings(orm: MikroORM, setLive: (apiId: string) => Promise<void>): Promise<string[]> {
  const em = orm.em.fork();
  const [org] = await em.execute<{ org_id: string }[]>(`select org_id from profiles limit 1`);
  const slugs: string[] = [];
  for (let i = 0; i < PROVIDER_LISTINGS; i++) {
    const id = newId('api');
    const slug = `bench-storefront-${i}`;
    await em.execute(
      `insert into apis (id, org_id, name, slug, summary, description, base_url, status, category, tags)
       values (?, ?, ?, ?, 'Hourly forecasts for any coastal town', 'Forecasts from coastal stations, updated every hour.',
               'https://example.com', 'draft', 'weather', '{forecast,coast}')`,
      [id, org!.org_id, `Bench Storefront ${i}`, slug],
    );
    const input = JSON.stringify({
      type: 'object',
      properties: {
        path: { type: 'object', properties: { city: { type: 'string', example: 'bergen' } }, required: ['city'] },
        query: { type: 'object', properties: { days: { type: 'integer', example: 3 } } },
      },
    });
    const output = JSON.stringify({ type: 'object', properties: { forecast: { type: 'string' } } });
    for (const [position, [method, path, price]] of (
      [
        ['GET', '/forecast/{city}', 5],
        ['POST', '/alerts', 12],
        ['GET', '/health', 0],
      ] as const
    ).entries()) {
      await em.execute(
        `insert into endpoints (id, api_id, method, path, price_cents, position, input_schema, output_schema)
         values (?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb)`,
        [newId('endpoint'), id, method, path, price, position, input, output],
      );
    }
    await addStats(em, id);
    await setLive(id);
    slugs.push(slug);
  }
  return slugs;
}

/** The rollup's stats rows of a listing with a month of traffic (what the page reads once the rollups ran). */
async function addStats(em: ReturnType<MikroORM['em']['fork']>, apiId: string) {
  for (const [window, calls] of [
    ['24h', 400],
    ['7d', 2_800],
    ['30d', 12_000],
  ] as const) {
    await em.execute(
      `insert into api_stats (api_id, "window", calls, successes, p50_ms, p95_ms, gmv_cents, unique_consumers, errors, updated_at)
       values (?, ?, ?, ?, 40, 120, ?, 12, '{"upstream_5xx": 3}'::jsonb, now())`,
      [apiId, window, calls, calls - 3, calls * 5],
    );
  }
}

/** Sequential timed GETs of `paths`, `ROUNDS` times over, after one warm-up pass. */
async function timed(base: string, paths: string[], pick: (ms: number[]) => Percentiles): Promise<Percentiles> {
  const get = async (p: string) => {
    const t = performance.now();
    const res = await fetch(base + p);
    await res.text();
    if (res.status !== 200) throw new Error(`${p}: HTTP ${res.status}`);
    return performance.now() - t;
  };
  for (const p of paths) await get(p);
  const ms: number[] = [];
  for (let r = 0; r < ROUNDS; r++) for (const p of paths) ms.push(await get(p));
  return pick(ms);
}

export interface PagesRow {
  listing_page: Percentiles;
  listing_page_provider: Percentiles;
  listing_page_directory: Percentiles;
  search_page: Percentiles;
}

export async function measurePages(
  base: string,
  orm: MikroORM,
  providerSlugs: string[],
  pick: (ms: number[]) => Percentiles,
): Promise<PagesRow> {
  const directory = await orm.em
    .fork()
    .execute<{ slug: string }[]>(
      `select slug from apis where status = 'live' and source = 'directory' order by md5(slug) limit 60`,
    );
  const providerPaths = providerSlugs.map((s) => `/apis/${s}`);
  const directoryPaths = directory.map((d) => `/apis/${d.slug}`);
  const provider = await timed(base, providerPaths, pick);
  const dir = await timed(base, directoryPaths, pick);
  const both = await timed(base, [...providerPaths, ...directoryPaths], pick);
  const search = await timed(
    base,
    [
      '/apis',
      '/apis?q=weather+forecast',
      '/apis?q=will+I+need+an+umbrella+tomorrow',
      '/apis?category=finance',
      '/apis?sort=price&pricing=paid',
      '/apis?callable=true&min_price=0.01&max_price=0.10',
      '/apis?q=currency+exchange&offset=25',
    ],
    pick,
  );
  return { listing_page: both, listing_page_provider: provider, listing_page_directory: dir, search_page: search };
}
