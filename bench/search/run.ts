/**
 * `npm run bench:search`: search's latency at each listing count (BENCH_LISTINGS, default 10,000 and 100,000; one
 * scratch database each on DATABASE_URL's server), measured by measure.ts, printed as one table with the issue's
 * targets met or missed, and recorded in bench/results/search-<date>.json (BENCH_RESULTS_DIR to write elsewhere).
 * Each percentile is the median of BENCH_ROUNDS rounds (default 3) of ten passes over the query mix.
 *
 * Targets (issue 33): p95 ≤ 50 ms at 100,000 listings for every kind (keyword, paraphrase, browse by category, each
 * sort), ≤ 25 ms at 10,000; publish → searchable ≤ 1 s at 100,000; the per-process copy ≤ 200 MB at 100,000; the
 * storefront's listing page p95 ≤ 50 ms.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_DIRECTORY_FILE } from '../../core/catalog/public-apis/public-apis-import.js';
import { DirectoryFile } from '../../core/catalog/public-apis/public-apis.js';
import { loadConfig } from '../../core/config.js';
import { BENCH_ROUNDS, measureAt, PASSES, type SearchRow } from './measure.js';

const ROOT = path.join(import.meta.dirname, '..', '..');
const MB = 2 ** 20;

interface Target {
  what: string;
  wanted: string;
  measured: string;
  met: boolean;
}

/** Each target against a row (the 100k ones only at 100,000 listings or more). */
function targetsOf(row: SearchRow): Target[] {
  const big = row.listings >= 100_000;
  const limit = big ? 50 : 25;
  const kinds = Object.keys(row.latency_ms).filter((k) => k !== 'overall');
  const out: Target[] = kinds.map((k) => ({
    what: `${k} p95`,
    wanted: `≤ ${limit} ms`,
    measured: `${row.latency_ms[k]!.p95} ms`,
    met: row.latency_ms[k]!.p95 <= limit,
  }));
  const publish = row.lifecycle_ms.publish_to_searchable.max;
  out.push({
    what: 'publish → searchable (max)',
    wanted: big ? '≤ 1000 ms' : '≤ 2000 ms',
    measured: `${Math.round(publish)} ms`,
    met: publish <= (big ? 1000 : 2000),
  });
  if (big) {
    const mb = Math.max(row.copy_bytes, row.copy_heap_bytes) / MB;
    out.push({
      what: 'per-process copy (larger of its arrays and its heap)',
      wanted: '≤ 200 MB',
      measured: `${mb.toFixed(1)} MB`,
      met: mb <= 200,
    });
  }
  const page = row.pages_ms.listing_page;
  if (page)
    out.push({
      what: 'storefront listing page p95',
      wanted: '≤ 50 ms',
      measured: `${page.p95} ms`,
      met: page.p95 <= 50,
    });
  return out;
}

async function main(): Promise<void> {
  if (loadConfig().database.kind !== 'postgres') {
    // The control plane under test and the loader both connect, and the embedded database serves one connection.
    console.error('bench:search needs a Postgres server: set DATABASE_URL (a scratch database is created on it).');
    process.exit(2);
  }
  const counts = (process.env.BENCH_LISTINGS ?? '10000,100000').split(',').map((c) => Number(c.trim()));
  if (counts.some((c) => !Number.isInteger(c) || c < 1706)) {
    console.error('BENCH_LISTINGS: comma-separated listing counts, each at least 1706 (the directory).');
    process.exit(2);
  }
  const entries = DirectoryFile.parse(JSON.parse(await readFile(DEFAULT_DIRECTORY_FILE, 'utf8')));
  const rows: SearchRow[] = [];
  for (const count of counts) rows.push(await measureAt(count, entries));

  const kinds = Object.keys(rows[0]!.latency_ms);
  console.log(
    `\nGET /v1/search p50 / p95 / p99 (ms, sequential over HTTP; medians of ${BENCH_ROUNDS} rounds of ${PASSES} passes):`,
  );
  console.log(`  ${'kind'.padEnd(18)} ${rows.map((r) => String(r.listings).padStart(22)).join(' ')}`);
  for (const k of kinds) {
    const cells = rows.map((r) => {
      const p = r.latency_ms[k]!;
      return `${p.p50} / ${p.p95} / ${p.p99}`.padStart(22);
    });
    console.log(`  ${k.padEnd(18)} ${cells.join(' ')}`);
  }
  for (const r of rows) {
    console.log(
      `  ${r.listings}: import and index ${r.import_and_index_ms} ms; copy load ${r.copy_load_ms} ms, vector index ` +
        `${r.vector_index_build_ms} ms; copy ${(r.copy_bytes / MB).toFixed(1)} MB (arrays), ` +
        `${(r.copy_heap_bytes / MB).toFixed(1)} MB (heap and buffers); publish → searchable max ` +
        `${Math.round(r.lifecycle_ms.publish_to_searchable.max)} ms, unpublish → gone max ${Math.round(r.lifecycle_ms.unpublish_to_gone.max)} ms`,
    );
  }
  const targets = rows.map((r) => ({ listings: r.listings, targets: targetsOf(r) }));
  console.log('\nTargets (issue 33):');
  for (const { listings, targets: ts } of targets) {
    for (const t of ts)
      console.log(
        `  ${String(listings).padStart(6)} ${t.what.padEnd(52)} ${t.wanted.padEnd(10)} ${t.measured.padEnd(10)} ${t.met ? 'PASS' : 'FAIL'}`,
      );
  }

  const date = new Date().toISOString().slice(0, 10);
  const dir = process.env.BENCH_RESULTS_DIR ?? path.join(ROOT, 'bench', 'results');
  const out = path.join(dir, `search-${date}.json`);
  await mkdir(dir, { recursive: true });
  const machine = { cpus: os.cpus().length, model: os.cpus()[0]?.model, load: os.loadavg(), node: process.version };
  await writeFile(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), rounds: BENCH_ROUNDS, passes: PASSES, rows, targets, machine }, null, 2)}\n`,
  );
  console.log(`recorded ${path.relative(ROOT, out)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
