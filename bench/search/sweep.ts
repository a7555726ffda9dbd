/**
 * Tuning aid: nDCG@10 of the semantic and hybrid rankers on the development set for each RANKING override given, over
 * one scratch catalog; with --callable, then the callable part (bench/search/callable.ts) for each override.
 * `npx tsx bench/search/sweep.ts [DIRECTORY_FILE] '[{"rrfK":20},{"weights":{"semantic":2}}]' [--callable]`
 * Overrides apply in order and stay applied (give the baseline again to go back).
 */
import { readFile } from 'node:fs/promises';
import { scratchCatalog } from './scratch.js';
import { RANKING, type Ranker } from '../../core/catalog/search/search.service.js';
import { evalCallable, loadCallableSet, publishCallable, type EvalQuery } from './callable.js';
import { ndcgAt } from './ndcg.js';
const args = process.argv.slice(2).filter((a) => a !== '--callable');
const set = JSON.parse(await readFile('test/fixtures/search/dev-set.json', 'utf8')) as { queries: EvalQuery[] };
const scratch = await scratchCatalog({ file: args[0] || undefined });
const slugOf = new Map(
  (await scratch.orm.em.fork().execute<{ id: string; slug: string }[]>('select id, slug from apis')).map((r) => [
    r.id,
    r.slug,
  ]),
);
async function run(ranker: Ranker) {
  const by: Record<string, number[]> = {};
  for (const q of set.queries) {
    const m = await scratch.search.rank(q.q, {}, ranker);
    const ranked = [...m.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .map(([id]) => slugOf.get(id)!);
    (by[q.kind] ??= []).push(ndcgAt(ranked, q.relevant));
    (by.all ??= []).push(ndcgAt(ranked, q.relevant));
  }
  return Object.entries(by)
    .map(([k, v]) => `${k}=${(v.reduce((a, b) => a + b, 0) / v.length).toFixed(3)}`)
    .join(' ');
}
const grid = JSON.parse(args[1] ?? '[{}]') as Record<string, unknown>[];
const apply = (g: Record<string, unknown>) =>
  Object.assign(RANKING, g, g.weights ? { weights: { ...RANKING.weights, ...g.weights } } : {});
for (const g of grid) {
  apply(g);
  console.log(JSON.stringify(g), 'sem:', await run('semantic'), '| hyb:', await run('hybrid'));
}
if (process.argv.includes('--callable')) {
  const callable = await loadCallableSet('test/fixtures/search/callable-set.json');
  await publishCallable(scratch, callable);
  for (const g of grid) {
    apply(g);
    const f = await evalCallable(scratch, set.queries, callable, ['hybrid']);
    const p = f.placement.hybrid!;
    console.log(
      JSON.stringify(g),
      `callable: ndcg ${JSON.stringify(f.ndcg_at_10.hybrid)} top3 ${p.hits_at_3}/${p.answers} top10 ${p.hits_at_10}`,
      `mrr ${p.mrr} intrusions ${f.intrusions.hybrid} (${f.intruders.hybrid!.join(', ')})`,
      '\n  not in top 3:',
      Object.entries(f.ranks.hybrid!)
        .filter(([, r]) => r === null || r > 3)
        .map(([k, r]) => `${k}@${r ?? '-'}`)
        .join(', '),
    );
  }
}
await scratch.close();
