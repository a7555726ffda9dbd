/**
 * The semantic half of search, in process: every listing's vectors (its combined vector, then one per intent,
 * search-index.ts `vectorOf`) quantized to int8 with one scale per vector (a quarter of float32's memory: 100,000
 * listings × 5 vectors × 100 dimensions is 50 MB, not 200), and an inverted-file index over them for large catalogs.
 *
 * A listing's score is its combined cosine raised toward its best intent's (`lift`), as search.service.ts ranks it.
 * - Exact: every vector of the pool, ~0.8 ns per multiply-add here (10,000 listings ≈ 4 ms). Used below
 *   IVF_MIN_VECTORS, for filtered pools (a category's listings) and while the inverted file is built.
 * - Inverted file (IVF): the vectors are grouped into leaves by a two-level k-means (COARSE × FINE centroids,
 *   trained on a sample when the catalog first passes IVF_MIN_VECTORS, every vector assigned to its nearest leaf,
 *   new vectors as they come). A query scores the leaves' centroids, scans the nearest leaves until PROBE_SHARE of the
 *   vectors are read, keeps the best RESCORE listings by what it saw, and scores those exactly. Its recall@10 against
 *   the exact path is asserted in test/unit/catalog/vector-index.test.ts.
 *
 * Document numbers are the per-process copy's (search-copy.ts); a dead document's vectors are skipped.
 */

import { kmeans, nearestOf, sampleRows, yieldLoop } from './vector-kmeans.js';

const COARSE = 32;
const FINE = 32;
/** Below this many vectors (5,000 listings) the exact scan takes ≤ ~2 ms and an index is not worth its build. */
export const IVF_MIN_VECTORS = 25_000;
/** Share of the vectors an IVF query reads (the nearest leaves first). */
const PROBE_SHARE = 0.05;
/** Listings scored exactly after the probe. */
const RESCORE = 2_000;
const TRAIN_SAMPLE = 16_384;

/** A listing's semantic score against a query. */
export interface VectorHit {
  doc: number;
  score: number;
}

/** Growable int8 rows, one scale each. */
class Arena {
  data: Int8Array;
  scale: Float32Array;
  owner: Int32Array;
  length = 0;

  constructor(
    readonly dims: number,
    capacity = 1024,
  ) {
    this.data = new Int8Array(capacity * dims);
    this.scale = new Float32Array(capacity);
    this.owner = new Int32Array(capacity);
  }

  push(v: Float32Array, off: number, doc: number): number {
    const { dims } = this;
    if (this.length === this.scale.length) this.grow();
    let max = 0;
    for (let i = 0; i < dims; i++) max = Math.max(max, Math.abs(v[off + i]!));
    const s = max > 0 ? max / 127 : 1;
    const base = this.length * dims;
    for (let i = 0; i < dims; i++) this.data[base + i] = Math.round(v[off + i]! / s);
    this.scale[this.length] = s;
    this.owner[this.length] = doc;
    return this.length++;
  }

  private grow(): void {
    // Doubling while small; a quarter more once large (a 100,000-listing arena is ~50 MB: doubling it for one more
    // listing would hold twice that).
    const cap = this.scale.length < 65_536 ? this.scale.length * 2 : Math.ceil(this.scale.length * 1.25);
    const data = new Int8Array(cap * this.dims);
    data.set(this.data);
    this.data = data;
    const scale = new Float32Array(cap);
    scale.set(this.scale);
    this.scale = scale;
    const owner = new Int32Array(cap);
    owner.set(this.owner);
    this.owner = owner;
  }

  dot(q: Float32Array, row: number): number {
    const { data, dims } = this;
    const base = row * dims;
    let s = 0;
    for (let i = 0; i < dims; i++) s += q[i]! * data[base + i]!;
    return s * this.scale[row]!;
  }

  /** Row as float32 (k-means training). */
  row(r: number, out: Float32Array): Float32Array {
    const s = this.scale[r]!;
    for (let i = 0; i < this.dims; i++) out[i] = this.data[r * this.dims + i]! * s;
    return out;
  }
}

/** Growable list of row numbers (one IVF leaf). */
class RowList {
  rows = new Int32Array(16);
  length = 0;
  push(r: number): void {
    if (this.length === this.rows.length) {
      const next = new Int32Array(this.length * 2);
      next.set(this.rows);
      this.rows = next;
    }
    this.rows[this.length++] = r;
  }
}

interface Ivf {
  centroids: Float32Array; // COARSE * FINE leaves × dims
  leaves: RowList[];
  /** Rows assigned so far (rows added during the build are assigned at its end). */
  assigned: number;
}

export class VectorIndex {
  private readonly arena: Arena;
  /** Each document's first row and row count (0 when it has no vector). */
  private first = new Int32Array(1024);
  private count = new Int32Array(1024);
  private ivf: Ivf | null = null;
  private building: Promise<void> | null = null;

  /** Vectors from which an inverted file is built (IVF_MIN_VECTORS; smaller in tests). */
  private readonly ivfMin: number;

  constructor(
    readonly dims: number,
    private readonly isLive: (doc: number) => boolean,
    private readonly lift: (doc: number) => number,
    opts: { ivfMinVectors?: number } = {},
  ) {
    this.arena = new Arena(dims);
    this.ivfMin = opts.ivfMinVectors ?? IVF_MIN_VECTORS;
  }

  /** Whether queries go through the inverted file. */
  get indexed(): boolean {
    return this.ivf !== null;
  }

  /** A document's vectors (`dims` × n, combined first). */
  add(doc: number, vec: Float32Array): void {
    if (doc >= this.first.length) {
      const grow = (a: Int32Array) => {
        const next = new Int32Array(Math.max(doc + 1, a.length * 2));
        next.set(a);
        return next;
      };
      this.first = grow(this.first);
      this.count = grow(this.count);
    }
    const n = Math.floor(vec.length / this.dims);
    this.count[doc] = n;
    for (let i = 0; i < n; i++) {
      const row = this.arena.push(vec, i * this.dims, doc);
      if (i === 0) this.first[doc] = row;
      // Rows added while the index is built are assigned by the build's own loop.
      if (this.ivf) {
        this.ivf.leaves[this.nearestLeaf(this.ivf, this.arena.row(row, new Float32Array(this.dims)))]!.push(row);
        this.ivf.assigned = row + 1;
      }
    }
  }

  /** The document's vectors as float32 (feedback), or null. */
  vectorOf(doc: number): Float32Array | null {
    const n = this.count[doc] ?? 0;
    if (!n) return null;
    return this.arena.row(this.first[doc]!, new Float32Array(this.dims));
  }

  get rows(): number {
    return this.arena.length;
  }

  /** The exact score of one document (combined cosine raised toward its best intent's). */
  scoreOf(q: Float32Array, doc: number): number {
    const n = this.count[doc]!;
    if (!n) return -Infinity;
    const r0 = this.first[doc]!;
    const s0 = this.arena.dot(q, r0);
    let best = s0;
    for (let r = r0 + 1; r < r0 + n; r++) best = Math.max(best, this.arena.dot(q, r));
    return s0 + this.lift(doc) * (best - s0);
  }

  /** Exact scores of these documents at or above `floor`, best first. */
  exact(q: Float32Array, docs: Iterable<number>, floor: number): VectorHit[] {
    const out: VectorHit[] = [];
    for (const doc of docs) {
      const s = this.scoreOf(q, doc);
      if (s >= floor) out.push({ doc, score: s });
    }
    return out.sort((a, b) => b.score - a.score || a.doc - b.doc);
  }

  /**
   * The nearest live documents (`keep` filters), best first, scores at or above `floor`: through the inverted file
   * when there is one, otherwise exact over every live document. At most RESCORE through the inverted file.
   */
  nearest(
    q: Float32Array,
    keep: (doc: number) => boolean,
    floor: number,
    liveDocs: () => Iterable<number>,
    /** The share of the live documents `keep` passes (a filtered query reads more leaves for as many candidates). */
    poolShare = 1,
  ): VectorHit[] {
    if (!this.ivf) {
      if (this.arena.length >= this.ivfMin) void this.build().catch(() => undefined);
      const docs: number[] = [];
      for (const d of liveDocs()) if (keep(d)) docs.push(d);
      return this.exact(q, docs, floor);
    }
    return this.probe(this.ivf, q, keep, floor, poolShare);
  }

  private probe(
    ivf: Ivf,
    q: Float32Array,
    keep: (doc: number) => boolean,
    floor: number,
    poolShare: number,
  ): VectorHit[] {
    const { dims } = this;
    const leaves = ivf.leaves.length;
    const order = new Float64Array(leaves);
    for (let l = 0; l < leaves; l++) {
      let s = 0;
      for (let i = 0; i < dims; i++) s += q[i]! * ivf.centroids[l * dims + i]!;
      order[l] = s;
    }
    const byScore = [...order.keys()].sort((a, b) => order[b]! - order[a]!);
    // Rows of the pool to read: PROBE_SHARE of its vectors (rows `keep` rejects are not counted).
    const budget = Math.max(RESCORE, Math.ceil(this.arena.length * poolShare * PROBE_SHARE));
    // Each document's best row seen, in flat arrays (a Map of 25,000 entries and its sort cost more than the dots).
    const slot = this.slots();
    const docs = new Int32Array(budget + FINE_LEAF_SLACK);
    const best = new Float32Array(budget + FINE_LEAF_SLACK);
    let n = 0;
    let read = 0;
    for (const l of byScore) {
      const leaf = ivf.leaves[l]!;
      for (let i = 0; i < leaf.length && n < docs.length; i++) {
        const row = leaf.rows[i]!;
        const doc = this.arena.owner[row]!;
        if (!this.isLive(doc) || !keep(doc)) continue;
        read++;
        const s = this.arena.dot(q, row);
        const at = slot.get(doc);
        if (at < 0) {
          slot.set(doc, n);
          docs[n] = doc;
          best[n++] = s;
        } else if (s > best[at]!) best[at] = s;
      }
      if (read >= budget) break;
    }
    slot.clear();
    // The RESCORE best by what the probe saw, scored exactly.
    let cut = -Infinity;
    if (n > RESCORE) cut = best.slice(0, n).sort()[n - RESCORE]!;
    const chosen: number[] = [];
    for (let i = 0; i < n && chosen.length < RESCORE; i++) if (best[i]! >= cut) chosen.push(docs[i]!);
    return this.exact(q, chosen, floor);
  }

  /** A reusable document → slot table (-1: none), cleared after each query. */
  private slotTable: DocSlots | null = null;
  private slots(): DocSlots {
    if (!this.slotTable || this.slotTable.size < this.first.length) this.slotTable = new DocSlots(this.first.length);
    return this.slotTable;
  }

  private nearestLeaf(ivf: Ivf, v: Float32Array): number {
    return nearestOf(ivf.centroids, ivf.leaves.length, v, this.dims);
  }

  /** Resolves when no build is running. */
  async ready(): Promise<void> {
    await this.building;
  }

  /** Train the two-level k-means and assign every row, yielding to the event loop between chunks. */
  build(): Promise<void> {
    this.building ??= this.doBuild().finally(() => {
      this.building = null;
    });
    return this.building;
  }

  private async doBuild(): Promise<void> {
    const { dims, arena } = this;
    const total = arena.length;
    const sample = sampleRows(total, TRAIN_SAMPLE).map((r) => arena.row(r, new Float32Array(dims)));
    const coarse = await kmeans(sample, COARSE, dims);
    const groups: Float32Array[][] = Array.from({ length: COARSE }, () => []);
    for (const v of sample) groups[nearestOf(coarse, COARSE, v, dims)]!.push(v);
    const centroids = new Float32Array(COARSE * FINE * dims);
    for (let c = 0; c < COARSE; c++) {
      const fine = groups[c]!.length >= FINE ? await kmeans(groups[c]!, FINE, dims) : null;
      for (let f = 0; f < FINE; f++) {
        const src = fine ? fine.subarray(f * dims, (f + 1) * dims) : coarse.subarray(c * dims, (c + 1) * dims);
        centroids.set(src, (c * FINE + f) * dims);
      }
    }
    const ivf: Ivf = { centroids, leaves: Array.from({ length: COARSE * FINE }, () => new RowList()), assigned: 0 };
    const v = new Float32Array(dims);
    // Two-level assignment: the nearest coarse centroid, then its nearest fine one (64 dot products, not 1,024).
    const assign = (row: number) => {
      arena.row(row, v);
      const c = nearestOf(coarse, COARSE, v, dims);
      const f = nearestOf(centroids.subarray(c * FINE * dims, (c + 1) * FINE * dims), FINE, v, dims);
      ivf.leaves[c * FINE + f]!.push(row);
    };
    for (let row = 0; row < arena.length; row++) {
      assign(row);
      if (row % 5000 === 4999) await yieldLoop();
    }
    ivf.assigned = arena.length;
    this.ivf = ivf;
  }

  /** Bytes held by vectors, their scales and the index. */
  bytes(): number {
    const leaves = this.ivf?.leaves.reduce((s, l) => s + l.rows.byteLength, 0) ?? 0;
    return (
      this.arena.data.byteLength +
      this.arena.scale.byteLength +
      this.arena.owner.byteLength +
      this.first.byteLength +
      this.count.byteLength +
      leaves +
      (this.ivf?.centroids.byteLength ?? 0)
    );
  }
}

/** Room past the budget for the leaf that crosses it. */
const FINE_LEAF_SLACK = 4096;

/** Document → slot, with a list of what was set so clearing costs what was used. */
class DocSlots {
  private readonly at: Int32Array;
  private readonly used: number[] = [];
  constructor(readonly size: number) {
    this.at = new Int32Array(size).fill(-1);
  }
  get(doc: number): number {
    return this.at[doc]!;
  }
  set(doc: number, slot: number): void {
    this.at[doc] = slot;
    this.used.push(doc);
  }
  clear(): void {
    for (const d of this.used) this.at[d] = -1;
    this.used.length = 0;
  }
}
