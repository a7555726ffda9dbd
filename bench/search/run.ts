/**
 * `npm run bench:search`: GET /v1/search over HTTP against 10,000 live listings (the directory plus generated
 * variants) in a scratch database (DATABASE_URL's server, or embedded PGlite when unset): p50/p95/p99 per kind of
 * query (keyword, paraphrase, browse by category, each sort) and overall, then publish-to-searchable and
 * unpublish-to-gone latency (the lifecycle activity `setStatus`, which indexes and flips the status, then polling
 * the route); then the storefront's pages row (pages.ts: GET /apis/{slug} and GET /apis). Targets: p95 ≤ 50 ms at 10k
 * listings; publish-to-searchable ≤ 2 s; a listing page p95 ≤ 50 ms. Writes bench/results/search-<date>.json.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createApiApp } from '../../api/app.js';
import { DEFAULT_DIRECTORY_FILE } from '../../core/catalog/public-apis/public-apis-import.js';
import { DirectoryFile, type DirectoryEntry } from '../../core/catalog/public-apis/public-apis.js';
import { SEARCH_SORTS } from '../../core/catalog/search/search.schemas.js';
import { loadConfig } from '../../core/config.js';
import { newId } from '../../core/ids.js';
import { startHttpServer } from '../../platform/runtime/http-server.js';
import { createServices } from '../../platform/services.js';
import { createLogger } from '../../core/logger.js';
import { addProviderListings, measurePages, type Percentiles } from './pages.js';
import { scratchCatalog } from './scratch.js';

const TARGET_LISTINGS = 10_000;
const ROUNDS = 4;
const ROOT = path.join(import.meta.dirname, '..', '..');

const VARIANTS = ['Cloud', 'Pro', 'Lite', 'Edge', 'Labs', 'Hub', 'Express', 'Plus', 'Global', 'Open'];
const REGIONS = ['for Europe', 'for Asia', 'for the Americas', 'for Africa', 'for Oceania'];

/** The directory and generated variants of its entries (same meaning, other names), TARGET_LISTINGS in all. */
function corpus(entries: DirectoryEntry[]): DirectoryEntry[] {
  const out = [...entries];
  for (let i = 0; out.length < TARGET_LISTINGS; i++) {
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

function percentiles(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  const r = (v: number) => Math.round(v * 100) / 100;
  return { n: s.length, p50: r(at(50)), p95: r(at(95)), p99: r(at(99)), max: r(s[s.length - 1]!) };
}

async function main(): Promise<void> {
  if (loadConfig().database.kind !== 'postgres') {
    // The control plane under test and the loader both connect, and the embedded database serves one connection.
    console.error('bench:search needs a Postgres server: set DATABASE_URL (a scratch database is created on it).');
    process.exit(2);
  }
  const entries = DirectoryFile.parse(JSON.parse(await readFile(DEFAULT_DIRECTORY_FILE, 'utf8')));
  const all = corpus(entries);
  const t0 = Date.now();
  const scratch = await scratchCatalog({ poolMax: 10 });
  const tImport = Date.now();
  const report = await scratch.importer.importEntries(all);
  const importMs = Date.now() - tImport;
  console.log(
    `catalog: ${report.inserted + 1706} listings (${scratch.backend}); variants imported and indexed in ${importMs} ms`,
  );

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
    const byKind = new Map<string, number[]>();
    const overall: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const m of mix) {
        const { ms } = await get(m.path);
        overall.push(ms);
        byKind.set(m.kind, [...(byKind.get(m.kind) ?? []), ms]);
      }
    }
    const latency = {
      overall: percentiles(overall),
      ...Object.fromEntries(
        [...byKind.entries()].map(([k, v]) => [k, percentiles(k.startsWith('sort_') ? v : v)] as const),
      ),
    };
    const kinds = ['keyword', 'paraphrase', 'browse_category'];
    const sorts = [...byKind.keys()].filter((k) => k.startsWith('sort_'));
    console.log('\nGET /v1/search latency (ms, sequential, over HTTP):');
    for (const k of ['overall', ...kinds, ...sorts]) {
      const p = latency[k as keyof typeof latency];
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
    const targets = {
      p95_le_50ms: latency.overall.p95 <= 50,
      publish_to_searchable_le_2s: lifecycle.publish_to_searchable.max <= 2000,
      listing_page_p95_le_50ms: pages.listing_page.p95 <= 50,
    };
    console.log(`targets: ${JSON.stringify(targets)}`);

    const date = new Date().toISOString().slice(0, 10);
    const out = path.join(ROOT, 'bench', 'results', `search-${date}.json`);
    await mkdir(path.dirname(out), { recursive: true });
    await writeFile(
      out,
      `${JSON.stringify(
        {
          date: new Date().toISOString(),
          backend: scratch.backend,
          embedder: scratch.embedder.id,
          listings: report.inserted + 1706,
          import_and_index_ms: importMs,
          setup_ms: Date.now() - t0,
          rounds: ROUNDS,
          latency_ms: latency,
          lifecycle_ms: lifecycle,
          pages_ms: pages,
          targets,
          machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, load: os.loadavg(), node: process.version },
        },
        null,
        2,
      )}\n`,
    );
    console.log(`recorded ${path.relative(ROOT, out)}`);
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

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
