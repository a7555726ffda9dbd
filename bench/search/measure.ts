/**
 * One row of `npm run bench:search` (run.ts): GET /v1/search over HTTP against N live listings (the directory plus
 * generated variants) in a scratch database on DATABASE_URL's server: p50/p95/p99 per kind of query (keyword,
 * paraphrase, browse by category, each sort with and without words) and overall; the import and index build, the
 * per-process copy's load and memory; publish-to-searchable and unpublish-to-gone (the lifecycle activity
 * `setStatus`, then polling the route); then the storefront's pages row (pages.ts).
 */
import { runInNewContext } from 'node:vm';
import v8 from 'node:v8';
import { createApiApp } from '../../api/app.js';
import type { DirectoryEntry } from '../../core/catalog/public-apis/public-apis.js';
import { SEARCH_SORTS } from '../../core/catalog/search/search.schemas.js';
import { loadConfig } from '../../core/config.js';
import { newId } from '../../core/ids.js';
import { startHttpServer } from '../../platform/runtime/http-server.js';
import { createServices } from '../../platform/services.js';
import { createLogger } from '../../core/logger.js';
import { addProviderListings, measurePages, type Percentiles } from './pages.js';
import { scratchCatalog } from './scratch.js';

/** Passes over the query mix per round, and rounds (BENCH_ROUNDS, default 3): each percentile is the rounds' median. */
export const PASSES = 10;
export const BENCH_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const VARIANTS = ['Cloud', 'Pro', 'Lite', 'Edge', 'Labs', 'Hub', 'Express', 'Plus', 'Global', 'Open'];
const REGIONS = ['for Europe', 'for Asia', 'for the Americas', 'for Africa', 'for Oceania'];

/** The directory and generated variants of its entries (same meaning, other names), TARGET_LISTINGS in all. */
function corpus(entries: DirectoryEntry[], target: number): DirectoryEntry[] {
  const out = [...entries];
  for (let i = 0; out.length < target; i++) {
    const e = entries[i % entries.length]!;
    const round = Math.floor(i / entries.length);
    const variant = VARIANTS[round % VARIANTS.length]!;
    const region = REGIONS[(i + round) % REGIONS.length]!;
    out.push({
      ...e,
      name: `${e.name} ${variant} ${round + 1}`,
      url: `${e.url}#variant-${round + 1}`,
      description: `${e.description} (${variant.toLowerCase()} edition ${region})`,
    });
  }
  return out;
}

const KEYWORD = [
  'weather forecast',
  'currency exchange rates',
  'ip geolocation',
  'url shortener',
  'qr code',
  'stock market data',
  'random jokes',
  'cryptocurrency prices',
  'email validation',
  'public holidays',
];
const PARAPHRASE = [
  'will I need an umbrella tomorrow',
  'how many euros do I get for 100 dollars',
  'which country is my visitor connecting from',
  'turn a long link into a tiny one',
  'something funny to cheer me up',
  'what is one bitcoin worth right now',
  'what can I cook tonight with chicken',
  'is the air safe to breathe in my city',
  'how far is it between two towns by car',
  'what does this word mean',
];
const CATEGORIES = [
  'weather',
  'finance',
  'geocoding',
  'music',
  'games-and-comics',
  'open-data',
  'health',
  'animals',
  'security',
  'transportation',
];

export function percentiles(ms: number[]): Percentiles {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  const r = (v: number) => Math.round(v * 100) / 100;
  return { n: s.length, p50: r(at(50)), p95: r(at(95)), p99: r(at(99)), max: r(s[s.length - 1]!) };
}

export interface SearchRow {
  listings: number;
  import_and_index_ms: number;
  /** The per-process copy's first load (every live listing read and indexed), and the vector index's build. */
  copy_load_ms: number;
  vector_index_build_ms: number;
  /** Bytes held by the copy's columns and indexes, and the heap + array buffers it added (after a collection). */
  copy_bytes: number;
  copy_heap_bytes: number;
  latency_ms: Record<string, Percentiles>;
  lifecycle_ms: { publish_to_searchable: Percentiles; unpublish_to_gone: Percentiles };
  pages_ms: Record<string, Percentiles>;
}

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapNow = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

/** One row: a scratch catalog of `target` listings, measured over HTTP, dropped afterwards. */
export async function measureAt(target: number, entries: DirectoryEntry[]): Promise<SearchRow> {
  const all = corpus(entries, target);
  const scratch = await scratchCatalog({ poolMax: 10 });
  const tImport = Date.now();
  const report = await scratch.importer.importEntries(all);
  const importMs = Date.now() - tImport;
  const listings = report.inserted + entries.length;
  console.log(`\n== ${listings} listings (${scratch.backend}): variants imported and indexed in ${importMs} ms`);

  // The control plane over the scratch database (Temporal unused by search: an address nothing listens on).
  const base = loadConfig();
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: scratch.url,
    DATABASE_POOL_MAX: '10',
    TEMPORAL_ADDRESS: '127.0.0.1:9',
    LOG_LEVEL: 'warn',
    SECRETS_KEY: '7e'.repeat(32),
    PUBLIC_RATE_LIMIT_PER_MIN: '10000000', // the benchmark is one address asking as fast as it can
    SEARCH_EMBEDDER: base.search.embedder,
    ...(base.search.modelDir ? { SEARCH_MODEL_DIR: base.search.modelDir } : {}),
  });
  const services = await createServices(config, { logger: createLogger({ level: 'warn' }) });
  const server = await startHttpServer({
    name: 'api',
    host: '127.0.0.1',
    port: 0,
    handler: createApiApp(services).callback(),
    logger: services.logger,
    graceMs: 1000,
  });
  const url = `http://127.0.0.1:${server.port}`;
  try {
    const heapBefore = heapNow();
    const tLoad = performance.now();
    await services.search.sync();
    const copyLoadMs = performance.now() - tLoad;
    const tBuild = performance.now();
    await services.search.vectorIndexReady();
    const buildMs = performance.now() - tBuild;
    const copyHeap = heapNow() - heapBefore;
    const copyBytes = services.search.copyBytes();
    console.log(
      `copy: loaded in ${Math.round(copyLoadMs)} ms, vector index built in ${Math.round(buildMs)} ms more; ` +
        `${(copyBytes / 2 ** 20).toFixed(1)} MB in its arrays, ${(copyHeap / 2 ** 20).toFixed(1)} MB of heap and buffers`,
    );
    const get = async (p: string) => {
      const t = performance.now();
      const res = await fetch(url + p);
      const body = (await res.json()) as { ok: boolean; data: { slug: string }[]; meta: { total: number } };
      const ms = performance.now() - t;
      if (res.status !== 200) throw new Error(`${p}: HTTP ${res.status} ${JSON.stringify(body)}`);
      return { ms, body };
    };
    const mix: { kind: string; path: string }[] = [
      ...KEYWORD.map((q) => ({ kind: 'keyword', path: `/v1/search?q=${encodeURIComponent(q)}` })),
      ...PARAPHRASE.map((q) => ({ kind: 'paraphrase', path: `/v1/search?q=${encodeURIComponent(q)}` })),
      ...CATEGORIES.map((c) => ({ kind: 'browse_category', path: `/v1/search?category=${c}` })),
      ...SEARCH_SORTS.map((s) => ({ kind: `sort_${s}`, path: `/v1/search?sort=${s}` })),
      ...SEARCH_SORTS.map((s, i) => ({
        kind: `sort_${s}`,
        path: `/v1/search?sort=${s}&q=${encodeURIComponent(KEYWORD[i % KEYWORD.length]!)}`,
      })),
    ];
    for (const m of mix) await get(m.path); // warm-up (vector copy, plans, word table)
    const latency = await latencyRounds(mix, async (p) => (await get(p)).ms);
    console.log(`\nGET /v1/search latency (ms, sequential, over HTTP; medians of ${BENCH_ROUNDS} rounds):`);
    for (const [k, p] of Object.entries(latency)) {
      console.log(`  ${k.padEnd(18)} n=${String(p.n).padEnd(4)} p50=${p.p50}  p95=${p.p95}  p99=${p.p99}`);
    }

    // Publish → searchable, unpublish → gone: a draft with an endpoint goes live through the lifecycle activity.
    const em = scratch.orm.em.fork();
    const [org] = await em.execute<{ org_id: string }[]>(`select org_id from profiles limit 1`);
    const publish: number[] = [];
    const unpublish: number[] = [];
    for (let i = 0; i < 5; i++) {
      const id = newId('api');
      const slug = `bench-glacier-${i}-${Date.now().toString(36)}`;
      await em.execute(
        `insert into apis (id, org_id, name, slug, summary, base_url, status, category)
         values (?, ?, ?, ?, 'Measures how fast mountain glaciers are melting, year by year', 'https://example.com', 'draft', 'environment')`,
        [id, org!.org_id, `Glacier Gauge ${i}`, slug],
      );
      await em.execute(
        `insert into endpoints (id, api_id, method, path, price_cents) values (?, ?, 'GET', '/melt', 1)`,
        [newId('endpoint'), id],
      );
      const probe = `/v1/search?q=${encodeURIComponent('how quickly is the ice on mountains disappearing')}&limit=50`;
      const has = async () => (await get(probe)).body.data.some((d) => d.slug === slug);
      const started = performance.now();
      await services.providerLifecycle.setStatus(id, 'live');
      while (!(await has())) {
        if (performance.now() - started > 10_000) throw new Error(`${slug} not searchable after 10 s`);
        await new Promise((r) => setTimeout(r, 20));
      }
      publish.push(performance.now() - started);
      const gone = performance.now();
      await services.providerLifecycle.setStatus(id, 'draft');
      while (await has()) {
        if (performance.now() - gone > 10_000) throw new Error(`${slug} still found 10 s after unpublish`);
        await new Promise((r) => setTimeout(r, 20));
      }
      unpublish.push(performance.now() - gone);
    }
    const lifecycle = { publish_to_searchable: percentiles(publish), unpublish_to_gone: percentiles(unpublish) };
    console.log(
      `\npublish → searchable: p50=${lifecycle.publish_to_searchable.p50} ms max=${lifecycle.publish_to_searchable.max} ms; ` +
        `unpublish → gone: p50=${lifecycle.unpublish_to_gone.p50} ms max=${lifecycle.unpublish_to_gone.max} ms`,
    );
    const pages = await pagesRow(url, scratch.orm, (id) => services.providerLifecycle.setStatus(id, 'live'));
    return {
      listings,
      import_and_index_ms: importMs,
      copy_load_ms: Math.round(copyLoadMs),
      vector_index_build_ms: Math.round(buildMs),
      copy_bytes: copyBytes,
      copy_heap_bytes: copyHeap,
      latency_ms: latency,
      lifecycle_ms: lifecycle,
      pages_ms: pages as unknown as Record<string, Percentiles>,
    };
  } finally {
    await server.close();
    await services.close();
    await scratch.close();
  }
}

/** The storefront's pages row (pages.ts): provider listings added, then GET /apis/{slug} and GET /apis timed. */
async function pagesRow(url: string, orm: Parameters<typeof measurePages>[1], setLive: (id: string) => Promise<void>) {
  const slugs = await addProviderListings(orm, setLive);
  const pages = await measurePages(url, orm, slugs, percentiles);
  console.log('\nstorefront pages latency (ms, sequential, over HTTP, anonymous):');
  for (const [k, p] of Object.entries(pages) as [string, Percentiles][]) {
    console.log(`  ${k.padEnd(24)} n=${String(p.n).padEnd(4)} p50=${p.p50}  p95=${p.p95}  p99=${p.p99}`);
  }
  return pages;
}

/** Each round: PASSES over the mix; per kind (and overall) the percentiles of each round, then their medians. */
async function latencyRounds(
  mix: { kind: string; path: string }[],
  time: (path: string) => Promise<number>,
): Promise<Record<string, Percentiles>> {
  const rounds: Map<string, Percentiles>[] = [];
  for (let r = 0; r < BENCH_ROUNDS; r++) {
    const byKind = new Map<string, number[]>([['overall', []]]);
    for (let pass = 0; pass < PASSES; pass++) {
      for (const m of mix) {
        const ms = await time(m.path);
        byKind.get('overall')!.push(ms);
        byKind.set(m.kind, [...(byKind.get(m.kind) ?? []), ms]);
      }
    }
    rounds.push(new Map([...byKind].map(([k, v]) => [k, percentiles(v)])));
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const out: Record<string, Percentiles> = {};
  for (const k of rounds[0]!.keys()) {
    const of = (f: keyof Percentiles) => median(rounds.map((r) => r.get(k)![f]));
    out[k] = {
      n: rounds.reduce((s, r) => s + r.get(k)!.n, 0),
      p50: of('p50'),
      p95: of('p95'),
      p99: of('p99'),
      max: of('max'),
    };
  }
  return out;
}
