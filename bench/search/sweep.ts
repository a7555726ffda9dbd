/**
 * Tuning aid: nDCG@10 of the semantic and hybrid rankers on the development set for each RANKING override given, over
 * one scratch catalog. `npx tsx bench/search/sweep.ts [DIRECTORY_FILE] '[{"rrfK":20},{"weights":{"semantic":2}}]'`
 */
import { readFile } from 'node:fs/promises';
import { scratchCatalog } from './scratch.js';
import { RANKING, type Ranker } from '../../core/catalog/search.service.js';
import { ndcgAt } from './ndcg.js';
const set = JSON.parse(await readFile('test/fixtures/search/dev-set.json', 'utf8')) as {
  queries: { id: string; kind: string; q: string; relevant: Record<string, number> }[];
};
const scratch = await scratchCatalog({ file: process.argv[2] });
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
const grid = JSON.parse(process.argv[3] ?? '[{}]') as Record<string, unknown>[];
for (const g of grid) {
  Object.assign(RANKING, g, g.weights ? { weights: { ...RANKING.weights, ...g.weights } } : {});
  console.log(JSON.stringify(g), 'sem:', await run('semantic'), '| hyb:', await run('hybrid'));
}
await scratch.close();
