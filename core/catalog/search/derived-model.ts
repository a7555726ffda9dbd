/**
 * Derived enrichment (issue 33), the vectors and the whole model: besides the words (derived-enrichment.ts),
 * - a projection: a linear map (ridge regression over the training entries) from a listing's text vector to the mean
 *   vector of its questions and synonyms, so what a listing says about itself moves toward how people ask for it;
 *   stored as an intent vector of a listing without examples;
 * - pseudo-intents: per category, clusters of the training questions kept as the words several entries' questions
 *   share (intent-clusters.ts); a listing takes the clusters nearest its projected vector as intents of its own.
 * The Deriver applies a model at index time (search-index.ts).
 */
import { dot, normalize, type Embedder } from './embedder.js';
import {
  contentWords,
  DERIVE,
  deriveScores,
  learnDerivation,
  stemOf,
  type DerivationInput,
  type DerivationModel,
  type Projection,
  type TrainingEntry,
} from './derived-enrichment.js';
import { learnClusters } from './intent-clusters.js';

/** Solves A X = B for symmetric positive definite A (n × n) and B (n × m), both row-major (Cholesky). */
function solveSpd(a: Float64Array, b: Float64Array, n: number, m: number): Float64Array {
  const l = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = a[i * n + j]!;
      for (let k = 0; k < j; k++) sum -= l[i * n + k]! * l[j * n + k]!;
      l[i * n + j] = i === j ? Math.sqrt(sum) : sum / l[j * n + j]!;
    }
  }
  const x = new Float64Array(n * m);
  const y = new Float64Array(n);
  for (let c = 0; c < m; c++) {
    for (let i = 0; i < n; i++) {
      let sum = b[i * m + c]!;
      for (let k = 0; k < i; k++) sum -= l[i * n + k]! * y[k]!;
      y[i] = sum / l[i * n + i]!;
    }
    for (let i = n - 1; i >= 0; i--) {
      let sum = y[i]!;
      for (let k = i + 1; k < n; k++) sum -= l[k * n + i]! * x[k * m + c]!;
      x[i * m + c] = sum / l[i * n + i]!;
    }
  }
  return x;
}

/** Ridge regression of ys on xs (vectors of one embedder): the W minimising Σ|W x − y|² + λ|W|². */
export function learnProjection(
  xs: readonly Float32Array[],
  ys: readonly Float32Array[],
  embedder: string,
  ridge = DERIVE.ridge,
): Projection {
  const d = xs[0]?.length ?? 0;
  const xtx = new Float64Array(d * d);
  const xty = new Float64Array(d * d);
  xs.forEach((x, r) => {
    const y = ys[r]!;
    for (let i = 0; i < d; i++) {
      for (let j = 0; j < d; j++) {
        xtx[i * d + j]! += x[i]! * x[j]!;
        xty[i * d + j]! += x[i]! * y[j]!;
      }
    }
  });
  for (let i = 0; i < d; i++) xtx[i * d + i]! += ridge;
  // (XᵀX + λI) B = XᵀY gives B = Wᵀ.
  const b = solveSpd(xtx, xty, d, d);
  const w = new Array<number>(d * d);
  for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) w[i * d + j] = Math.round(b[j * d + i]! * 1e6) / 1e6;
  return { embedder, dims: d, w };
}

/** W x, normalised. */
export function project(p: Projection, x: Float32Array): Float32Array {
  const out = new Float32Array(p.dims);
  for (let i = 0; i < p.dims; i++) {
    let s = 0;
    for (let j = 0; j < p.dims; j++) s += p.w[i * p.dims + j]! * x[j]!;
    out[i] = s;
  }
  return normalize(out);
}

/**
 * The whole model of a set of enriched listings: the word and category associations, and for this embedder the
 * projection and the question clusters. Deterministic for a given set and embedder.
 */
export async function learnModel(entries: readonly TrainingEntry[], embedder: Embedder): Promise<DerivationModel> {
  const used = entries.filter((e) => e.intents.length);
  const xs = await embedder.embed(used.map((e) => e.main ?? e.text));
  const ys: Float32Array[] = [];
  for (const e of used) {
    const mean = new Float32Array(embedder.dims);
    for (const v of await embedder.embed([...e.intents, ...(e.synonyms ?? [])])) {
      for (let i = 0; i < mean.length; i++) mean[i]! += v[i]!;
    }
    ys.push(normalize(mean));
  }
  return {
    ...learnDerivation(entries),
    projection: learnProjection(xs, ys, embedder.id),
    clusters: await learnClusters(used, embedder),
  };
}

/** A listing's derived enrichment. */
export interface Derived {
  /** Intent words, best first: the association words, then the chosen pseudo-intents' words it lacks. */
  words: string[];
  /** Pseudo-intents: the word groups of the question clusters nearest the listing. */
  intents: string[];
  /** Whether the listing's vectors get the projected one. */
  project: boolean;
}

/** Applies a model with an embedder (the projection and the clusters need the embedder the model was learned with). */
export class Deriver {
  private readonly cache = new Map<string, Float32Array>();

  constructor(
    private readonly model: DerivationModel,
    private readonly embedder: Embedder,
  ) {}

  /** Whether the model's vectors fit this embedder. */
  get vectors(): boolean {
    return this.model.projection?.embedder === this.embedder.id;
  }

  /** The projection of a listing's main vector, or null when the model has none for this embedder. */
  projectMain(main: Float32Array): Float32Array | null {
    return this.vectors ? project(this.model.projection!, main) : null;
  }

  private async vectorsOf(texts: readonly string[]): Promise<Float32Array[]> {
    const missing = [...new Set(texts.filter((t) => !this.cache.has(t)))];
    if (missing.length) (await this.embedder.embed(missing)).forEach((v, i) => this.cache.set(missing[i]!, v));
    return texts.map((t) => this.cache.get(t)!);
  }

  async derive(listing: DerivationInput & { main: string; calls?: boolean }): Promise<Derived> {
    const mode = listing.calls ? DERIVE.withCalls : DERIVE;
    const words = deriveScores(this.model, listing)
      .slice(0, mode.words)
      .map(([w]) => w);
    const project = this.vectors && mode.project;
    if (!this.vectors || !this.model.clusters?.length || !mode.clusters) return { words, intents: [], project };
    const [x] = await this.embedder.embed([listing.main]);
    const target = this.projectMain(x!)!;
    const clusters = this.model.clusters;
    const bags = clusters.map((c) => c.words.join(' '));
    const bv = await this.vectorsOf(bags);
    const intents = clusters
      .map(
        (c, i) =>
          [bags[i]!, dot(bv[i]!, target) + (c.category === listing.category ? DERIVE.clusterBonus : 0)] as const,
      )
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, mode.clusters)
      .map(([b]) => b);
    const own = contentWords(listing.texts.join(' '));
    for (const w of intents.flatMap((b) => b.split(' '))) {
      if (!words.includes(w) && !own.has(stemOf(w))) words.push(w);
    }
    return { words, intents, project };
  }
}
