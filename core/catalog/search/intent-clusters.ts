/**
 * Pseudo-intents (issue 33): the training questions of each category grouped by meaning (spherical k-means over
 * their vectors), each group kept as the few words its questions share ("rain umbrella tomorrow today"). A listing
 * without examples takes the groups nearest its projected vector as intent vectors of its own: the kinds of
 * question people ask of listings like it, never another listing's own question.
 */
import { dot, normalize, type Embedder } from './embedder.js';
import { contentWords, type TrainingEntry } from './derived-enrichment.js';

export const CLUSTERS = {
  /** Questions per cluster (a category gets round(questions / this) clusters, within 1..maxPerCategory). */
  questionsPer: 12,
  maxPerCategory: 8,
  /** Words kept per cluster, each used by at least minEntries entries of the cluster. */
  words: 6,
  minEntries: 2,
  iterations: 12,
};

/** Deterministic spherical k-means: farthest-point seeds from the first vector, then assign and re-centre. */
export function kmeans(vs: Float32Array[], k: number, iterations = CLUSTERS.iterations): number[] {
  const dims = vs[0]?.length ?? 0;
  const centres: Float32Array[] = [Float32Array.from(vs[0] ?? [])];
  while (centres.length < Math.min(k, vs.length)) {
    let far = 0;
    let farSim = Infinity;
    vs.forEach((v, i) => {
      const sim = Math.max(...centres.map((c) => dot(c, v)));
      if (sim < farSim) [far, farSim] = [i, sim];
    });
    centres.push(Float32Array.from(vs[far]!));
  }
  let assign = vs.map(() => 0);
  for (let it = 0; it < iterations; it++) {
    assign = vs.map((v) => {
      let best = 0;
      centres.forEach((c, j) => {
        if (dot(c, v) > dot(centres[best]!, v)) best = j;
      });
      return best;
    });
    centres.forEach((c, j) => {
      c.fill(0);
      vs.forEach((v, i) => {
        if (assign[i] === j) for (let d = 0; d < dims; d++) c[d]! += v[d]!;
      });
      normalize(c);
    });
  }
  return assign;
}

/** Per category, clusters of its entries' questions, each as the words at least minEntries of its entries use. */
export async function learnClusters(
  entries: readonly TrainingEntry[],
  embedder: Embedder,
): Promise<{ category: string | null; words: string[] }[]> {
  const byCategory = new Map<string, { entry: number; text: string }[]>();
  entries.forEach((e, entry) => {
    if (!e.category) return;
    const list = byCategory.get(e.category) ?? [];
    byCategory.set(e.category, list);
    for (const text of e.intents) list.push({ entry, text });
  });
  const out: { category: string | null; words: string[] }[] = [];
  for (const [category, questions] of [...byCategory].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const k = Math.max(1, Math.min(CLUSTERS.maxPerCategory, Math.round(questions.length / CLUSTERS.questionsPer)));
    const assign = kmeans(await embedder.embed(questions.map((q) => q.text)), k);
    for (let j = 0; j < k; j++) {
      // Each word once per entry: a word only one listing's questions use is that listing's, not the cluster's.
      const users = new Map<string, Set<number>>();
      questions.forEach((q, i) => {
        if (assign[i] !== j) return;
        for (const w of contentWords(q.text).values()) users.set(w, (users.get(w) ?? new Set()).add(q.entry));
      });
      const words = [...users]
        .filter(([, u]) => u.size >= CLUSTERS.minEntries)
        .sort((a, b) => b[1].size - a[1].size || (a[0] < b[0] ? -1 : 1))
        .slice(0, CLUSTERS.words)
        .map(([w]) => w);
      if (words.length >= 2) out.push({ category, words });
    }
  }
  return out;
}
