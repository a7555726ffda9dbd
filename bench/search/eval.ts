/**
 * `npm run eval:search`: nDCG@10 of each ranker (keyword only, semantic only, hybrid) on the graded development set
 * (test/fixtures/search/dev-set.json, or the file given), per kind of query and overall, over the directory loaded
 * into a scratch database. Then the callable part (bench/search/callable.ts, test/fixtures/search/callable-set.json;
 * `--no-callable` skips it): providers' listings published beside the directory, the set again with their grades, and
 * where the callable answers rank. Then the cold part (bench/search/cold.ts; `--no-cold` skips it): the listings of
 * one half of the directory imported without their enrichment, the derivation learned from the other half, the set's
 * queries scored on their held-out answers. `--no-derivation` measures as before the derivation (no derived intent
 * words anywhere). Prints tables and records bench/results/search-eval-<date>.json.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Ranker } from '../../core/catalog/search/search.service.js';
import { evalCallable, loadCallableSet, publishCallable, type CallableFigures, type EvalQuery } from './callable.js';
import { evalCold, type ColdFigures } from './cold.js';
import { ndcgAt } from './ndcg.js';
import { scratchCatalog } from './scratch.js';

type Query = EvalQuery;

const ROOT = path.join(import.meta.dirname, '..', '..');

async function main(): Promise<void> {
  // npm run eval:search -- [SET.json] [--directory FILE] [--no-callable] (a directory file with its own enrichment/
  // beside it; --no-callable: the development set on the directory alone, without the callable part)
  const args = process.argv.slice(2);
  const dirAt = args.indexOf('--directory');
  const directory = dirAt >= 0 ? path.resolve(args[dirAt + 1]!) : undefined;
  const withCallable = !args.includes('--no-callable');
  const withCold = !args.includes('--no-cold');
  const derive = !args.includes('--no-derivation');
  const positional = args.filter((a, i) => !a.startsWith('--no-') && (dirAt < 0 || (i !== dirAt && i !== dirAt + 1)));
  const setFile = path.resolve(positional[0] ?? path.join(ROOT, 'test', 'fixtures', 'search', 'dev-set.json'));
  const set = JSON.parse(await readFile(setFile, 'utf8')) as { queries: Query[] };
  let closed = false;
  const scratch = await scratchCatalog({ file: directory, ...(derive ? {} : { derivation: null }) });
  try {
    const slugOf = new Map(
      (await scratch.orm.em.fork().execute<{ id: string; slug: string }[]>('select id, slug from apis')).map((r) => [
        r.id,
        r.slug,
      ]),
    );
    const rankers: Ranker[] = ['keyword', 'semantic', 'hybrid'];
    const perQuery: Record<string, Record<string, { ndcg: number; top: string[] }>> = {};
    const timings: number[] = [];
    for (const ranker of rankers) {
      perQuery[ranker] = {};
      for (const q of set.queries) {
        const t = performance.now();
        const scores = await scratch.search.rank(q.q, {}, ranker);
        timings.push(performance.now() - t);
        const ranked = [...scores.entries()]
          .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
          .map(([id]) => slugOf.get(id)!);
        perQuery[ranker][q.id] = { ndcg: ndcgAt(ranked, q.relevant), top: ranked.slice(0, 5) };
      }
    }
    const kinds = [...new Set(set.queries.map((q) => q.kind))];
    const summary: Record<string, Record<string, number>> = {};
    for (const ranker of rankers) {
      summary[ranker] = {};
      for (const kind of [...kinds, 'overall']) {
        const qs = set.queries.filter((q) => kind === 'overall' || q.kind === kind);
        const mean = qs.reduce((s, q) => s + perQuery[ranker]![q.id]!.ndcg, 0) / qs.length;
        summary[ranker][kind] = Math.round(mean * 1000) / 1000;
      }
    }
    const header = ['ranker', ...kinds, 'overall'];
    console.log(
      `enriched: nDCG@10 on ${path.relative(ROOT, setFile)} (${set.queries.length} queries; ${scratch.backend})`,
    );
    console.log(header.map((h) => h.padEnd(12)).join(''));
    for (const ranker of rankers) {
      console.log(
        [ranker, ...[...kinds, 'overall'].map((k) => summary[ranker]![k]!.toFixed(3))]
          .map((c) => c.padEnd(12))
          .join(''),
      );
    }
    const worst = set.queries
      .map((q) => ({ id: q.id, q: q.q, ndcg: perQuery.hybrid![q.id]!.ndcg, top: perQuery.hybrid![q.id]!.top }))
      .sort((a, b) => a.ndcg - b.ndcg)
      .slice(0, 8);
    console.log('\nweakest hybrid queries:');
    for (const w of worst) console.log(`  ${w.id} ${w.ndcg.toFixed(2)}  "${w.q}" → ${w.top.join(', ')}`);

    // Callable part: measured after the set above, on the same catalog plus providers' listings.
    let callable: (CallableFigures & { set: string }) | undefined;
    if (withCallable) {
      const callableFile = path.join(ROOT, 'test', 'fixtures', 'search', 'callable-set.json');
      const callableSet = await loadCallableSet(callableFile);
      await publishCallable(scratch, callableSet);
      callable = {
        set: path.relative(ROOT, callableFile),
        ...(await evalCallable(scratch, set.queries, callableSet, rankers)),
      };
      console.log(
        `\nwith ${callableSet.listings.length} callable listings (${callable.set}): nDCG@10 with their grades`,
      );
      console.log(header.map((h) => h.padEnd(12)).join(''));
      for (const ranker of rankers) {
        console.log(
          [ranker, ...[...kinds, 'overall'].map((k) => callable!.ndcg_at_10[ranker]![k]!.toFixed(3))]
            .map((c) => c.padEnd(12))
            .join(''),
        );
      }
      console.log(
        'callable answers (grade 3): in top 3 / in top 10 of all, MRR; ungraded callable listings in a top 10',
      );
      for (const ranker of rankers) {
        const p = callable.placement[ranker]!;
        console.log(
          `  ${ranker.padEnd(10)} ${p.hits_at_3}/${p.answers}  ${p.hits_at_10}/${p.answers}  mrr ${p.mrr.toFixed(3)}  intrusions ${callable.intrusions[ranker]}`,
        );
      }
      const missed = Object.entries(callable.ranks.hybrid!).filter(([, r]) => r === null || r > 3);
      console.log(`  hybrid, not in top 3: ${missed.map(([k, r]) => `${k}@${r ?? '-'}`).join(', ') || 'none'}`);
    }
    await scratch.close();
    closed = true;
    let cold: ColdFigures | undefined;
    if (withCold) {
      cold = await evalCold(set.queries, { file: directory, derive, rankers });
      printCold(cold, kinds, rankers);
    }
    const date = new Date().toISOString().slice(0, 10);
    const out = path.join(ROOT, 'bench', 'results', `search-eval-${date}.json`);
    await mkdir(path.dirname(out), { recursive: true });
    await writeFile(
      out,
      `${JSON.stringify(
        {
          date: new Date().toISOString(),
          set: path.relative(ROOT, setFile),
          queries: set.queries.length,
          backend: scratch.backend,
          embedder: scratch.embedder.id,
          enrichment: scratch.report.enrichment,
          ndcg_at_10: summary,
          rank_ms_mean: Math.round((timings.reduce((a, b) => a + b, 0) / timings.length) * 10) / 10,
          ...(callable ? { callable } : {}),
          ...(cold ? { cold } : {}),
          per_query: perQuery,
        },
        null,
        2,
      )}\n`,
    );
    console.log(`\nrecorded ${path.relative(ROOT, out)}`);
  } finally {
    if (!closed) await scratch.close();
  }
}

function printCold(cold: ColdFigures, kinds: string[], rankers: Ranker[]): void {
  const counts = cold.folds.map((f) => `fold ${f.held_out}: ${kinds.map((k) => `${f.queries[k]} ${k}`).join(', ')}`);
  console.log(
    `\ncold (held-out half without enrichment, derivation ${cold.derivation ? 'learned from the other half' : 'off'}): ` +
      `nDCG@10 on held-out answers; queries per fold: ${counts.join('; ')}`,
  );
  console.log(['ranker', ...kinds, 'overall'].map((h) => h.padEnd(12)).join(''));
  for (const ranker of rankers) {
    console.log(
      [ranker, ...[...kinds, 'overall'].map((k) => cold.ndcg_at_10[ranker]![k]!.toFixed(3))]
        .map((c) => c.padEnd(12))
        .join(''),
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
