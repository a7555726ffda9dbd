/**
 * The cold part of `npm run eval:search` (issue 33): how well listings without hand-written enrichment are found.
 *
 * The directory's entries are split in two halves by a hash of their slug (deterministic). In each of two folds one
 * half is held out: the directory is imported with the enrichment of the other (training) half only, the derivation
 * model is learned from the training half alone (derived-model.ts `learnModel`), and the development set's
 * queries that have an answer graded 2 or more in the held-out half are scored on the held-out answers: the graded
 * answers of the training half are taken out of the ranking (neither gain nor loss), every other listing stays.
 * Figures are means over the (query, fold) pairs.
 */
import { createHash } from 'node:crypto';
import { directoryTraining } from '../../core/catalog/public-apis/directory-training.js';
import { DEFAULT_DIRECTORY_FILE } from '../../core/catalog/public-apis/public-apis-import.js';
import { learnModel } from '../../core/catalog/search/derived-model.js';
import { createEmbedder } from '../../core/catalog/search/embedder.js';
import { loadConfig } from '../../core/config.js';
import type { Ranker } from '../../core/catalog/search/search.service.js';
import type { EvalQuery } from './callable.js';
import { ndcgAt } from './ndcg.js';
import { scratchCatalog } from './scratch.js';

/** The half of the directory an entry's slug falls in (0 or 1). */
export const halfOf = (slug: string, split = 0) =>
  createHash('sha256')
    .update(split ? `${split}|${slug}` : slug)
    .digest()[0]! & 1;

export interface ColdFigures {
  derivation: boolean;
  /** Per fold: the held-out half, its listings, and the queries scored per kind. */
  folds: {
    split: number;
    held_out: number;
    listings: number;
    queries: Record<string, number>;
    model_entries: number;
  }[];
  ndcg_at_10: Record<string, Record<string, number>>;
  per_query: Record<string, Record<string, number>>;
  /** A few held-out listings with their derived words (to read what the derivation adds). */
  samples: Record<string, string[]>;
}

export async function evalCold(
  queries: EvalQuery[],
  /** `enriched`: keep the held-out half's enrichment too (the same queries, as an enriched listing fares). */
  opts: { file?: string; derive: boolean; rankers: Ranker[]; enriched?: boolean; splits?: number[] },
): Promise<ColdFigures> {
  const file = opts.file ?? DEFAULT_DIRECTORY_FILE;
  const { slugs } = await directoryTraining(file);
  const kinds = [...new Set(queries.map((q) => q.kind))];
  const scores: Record<string, Record<string, number[]>> = {};
  const out: ColdFigures = { derivation: opts.derive, folds: [], ndcg_at_10: {}, per_query: {}, samples: {} };
  for (const [split, heldOut] of (opts.splits ?? [0]).flatMap((sp) => [[sp, 0] as const, [sp, 1] as const])) {
    const half = slugs.map((s) => halfOf(s, split));
    const held = new Set(slugs.filter((_s, i) => half[i] === heldOut));
    const { training } = await directoryTraining(file, (i) => half[i] !== heldOut);
    const model = opts.derive ? await learnModel(training, createEmbedder(loadConfig().search)) : null;
    const scratch = await scratchCatalog({
      file,
      enrichedOnly: (_e, i) => opts.enriched === true || half[i] !== heldOut,
      derivation: model,
    });
    try {
      const slugOf = new Map(
        (await scratch.orm.em.fork().execute<{ id: string; slug: string }[]>('select id, slug from apis')).map((r) => [
          r.id,
          r.slug,
        ]),
      );
      const scored = queries.filter((q) => Object.entries(q.relevant).some(([s, g]) => g >= 2 && held.has(s)));
      out.folds.push({
        split,
        held_out: heldOut,
        listings: held.size,
        queries: Object.fromEntries(kinds.map((k) => [k, scored.filter((q) => q.kind === k).length])),
        model_entries: model?.entries ?? 0,
      });
      for (const ranker of opts.rankers) {
        scores[ranker] ??= {};
        out.per_query[ranker] ??= {};
        for (const q of scored) {
          const relevant = Object.fromEntries(Object.entries(q.relevant).filter(([s]) => held.has(s)));
          const ranked = [...(await scratch.search.rank(q.q, {}, ranker)).entries()]
            .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
            .map(([id]) => slugOf.get(id)!)
            .filter((s) => !(s in q.relevant) || held.has(s));
          const v = ndcgAt(ranked, relevant);
          out.per_query[ranker][`${q.id}/${split ? `${split}.` : ''}${heldOut}`] = Math.round(v * 1000) / 1000;
          for (const k of [q.kind, 'overall']) (scores[ranker][k] ??= []).push(v);
        }
      }
      if (model) {
        const sample = await scratch.orm.em
          .fork()
          .execute<{ slug: string }[]>(`select slug from apis where cardinality(examples) = 0 order by slug limit 400`);
        for (const { slug } of sample.filter((_r, i) => i % 100 === 0))
          out.samples[slug] = await derivedOf(scratch, slug);
      }
    } finally {
      await scratch.close();
    }
  }
  const mean = (v: number[] = []) => Math.round((v.reduce((a, b) => a + b, 0) / Math.max(1, v.length)) * 1000) / 1000;
  for (const ranker of opts.rankers) {
    out.ndcg_at_10[ranker] = Object.fromEntries([...kinds, 'overall'].map((k) => [k, mean(scores[ranker]![k])]));
  }
  return out;
}

/** The derived words of one listing, as the index would derive them now. */
async function derivedOf(scratch: Awaited<ReturnType<typeof scratchCatalog>>, slug: string): Promise<string[]> {
  const [row] = await scratch.orm.em
    .fork()
    .execute<{ document: string }[]>(
      `select s.document::text as document from api_search s join apis a on a.id = s.api_id where a.slug = ?`,
      [slug],
    );
  // Lexemes of field D only (path words and derived words; D positions carry no letter): what was added.
  return [...(row?.document ?? '').matchAll(/'([^']+)':([\d,]+)(?=\s|$)/g)].map((m) => m[1]!);
}
