/**
 * The callable part of `npm run eval:search` (issue 22 item 6): providers' own listings
 * (test/fixtures/search/callable-set.json) published into the scratch catalog beside the directory, then
 * - the development set again with the fixture's extra grades (its callable listings graded for the queries they
 *   answer): nDCG@10 when the catalog also holds callable listings;
 * - placement: the rank of every callable answer graded 3 (development-set queries and the fixture's own queries),
 *   as hits in the first 3 and the first 10 and mean reciprocal rank;
 * - intrusions: fixture listings in a development query's first 10 that are not graded for it (a prior that lifted
 *   callable listings regardless of relevance would show here).
 */
import { readFile } from 'node:fs/promises';
import type { Ranker } from '../../core/catalog/search/search.service.js';
import { newId } from '../../core/ids.js';
import { ndcgAt } from './ndcg.js';
import type { Scratch } from './scratch.js';

export interface EvalQuery {
  id: string;
  kind: string;
  q: string;
  relevant: Record<string, number>;
}

interface CallableListing {
  slug: string;
  name: string;
  summary: string;
  category: string | null;
  endpoints: { method: string; path: string; summary: string }[];
}

export interface CallableSet {
  listings: CallableListing[];
  grades: Record<string, Record<string, number>>;
  queries: { id: string; q: string; relevant: Record<string, number> }[];
}

export const loadCallableSet = async (file: string) => JSON.parse(await readFile(file, 'utf8')) as CallableSet;

/** Publishes the fixture's listings as one provider's live listings (with endpoints), indexed and searchable. */
export async function publishCallable(scratch: Scratch, set: CallableSet): Promise<void> {
  const em = scratch.orm.em.fork();
  const orgId = newId('org');
  await em.execute(`insert into orgs (id, kind, name) values (?, 'standard', 'Eval provider')`, [orgId]);
  await em.execute(`insert into profiles (org_id, display_name, slug) values (?, 'Eval provider', 'eval-provider')`, [
    orgId,
  ]);
  const ids: string[] = [];
  for (const l of set.listings) {
    const id = newId('api');
    ids.push(id);
    await em.execute(
      `insert into apis (id, org_id, name, slug, summary, base_url, status, category, source, published_at)
       values (?, ?, ?, ?, ?, 'https://example.com', 'live', ?, 'provider', now())`,
      [id, orgId, l.name, l.slug, l.summary, l.category],
    );
    for (const [position, e] of l.endpoints.entries()) {
      await em.execute(
        `insert into endpoints (id, api_id, method, path, summary, price_cents, position) values (?, ?, ?, ?, ?, 1, ?)`,
        [newId('endpoint'), id, e.method, e.path, e.summary, position],
      );
    }
  }
  await scratch.index.index(ids);
  await scratch.search.sync(true);
}

export interface CallableFigures {
  ndcg_at_10: Record<string, Record<string, number>>;
  placement: Record<string, { answers: number; hits_at_3: number; hits_at_10: number; mrr: number }>;
  intrusions: Record<string, number>;
  /** Per ranker, "<query id> <slug>@<rank>" of each intrusion. */
  intruders: Record<string, string[]>;
  ranks: Record<string, Record<string, number | null>>;
}

export async function evalCallable(
  scratch: Scratch,
  dev: EvalQuery[],
  set: CallableSet,
  rankers: Ranker[],
): Promise<CallableFigures> {
  const slugOf = new Map(
    (await scratch.orm.em.fork().execute<{ id: string; slug: string }[]>('select id, slug from apis')).map((r) => [
      r.id,
      r.slug,
    ]),
  );
  const fixture = new Set(set.listings.map((l) => l.slug));
  const graded = dev.map((q) => ({ ...q, relevant: { ...q.relevant, ...(set.grades[q.id] ?? {}) } }));
  const extra = set.queries.map((q) => ({ ...q, kind: 'callable' }));
  const kinds = [...new Set(dev.map((q) => q.kind))];
  const out: CallableFigures = { ndcg_at_10: {}, placement: {}, intrusions: {}, intruders: {}, ranks: {} };
  for (const ranker of rankers) {
    const ndcg: Record<string, number[]> = {};
    const ranks: Record<string, number | null> = {};
    const intruders: string[] = [];
    for (const q of [...graded, ...extra]) {
      const scores = await scratch.search.rank(q.q, {}, ranker);
      const ranked = [...scores.entries()]
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .map(([id]) => slugOf.get(id)!);
      if (q.kind !== 'callable') {
        const v = ndcgAt(ranked, q.relevant);
        (ndcg[q.kind] ??= []).push(v);
        (ndcg.overall ??= []).push(v);
        ranked.slice(0, 10).forEach((s, i) => {
          if (fixture.has(s) && !(s in q.relevant)) intruders.push(`${q.id} ${s}@${i + 1}`);
        });
      }
      for (const [slug, grade] of Object.entries(q.relevant)) {
        if (grade < 3 || !fixture.has(slug)) continue;
        const at = ranked.indexOf(slug);
        ranks[`${q.id} ${slug}`] = at < 0 ? null : at + 1;
      }
    }
    const mean = (v: number[]) => Math.round((v.reduce((a, b) => a + b, 0) / v.length) * 1000) / 1000;
    out.ndcg_at_10[ranker] = Object.fromEntries([...kinds, 'overall'].map((k) => [k, mean(ndcg[k]!)]));
    const r = Object.values(ranks);
    out.placement[ranker] = {
      answers: r.length,
      hits_at_3: r.filter((x) => x !== null && x <= 3).length,
      hits_at_10: r.filter((x) => x !== null && x <= 10).length,
      mrr: mean(r.map((x) => (x === null ? 0 : 1 / x))),
    };
    out.intrusions[ranker] = intruders.length;
    out.intruders[ranker] = intruders;
    out.ranks[ranker] = ranks;
  }
  return out;
}
