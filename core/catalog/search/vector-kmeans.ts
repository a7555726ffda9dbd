/**
 * The inverted file's training (vector-index.ts): spherical k-means over unit vectors, nearest centroid, and the
 * deterministic sample it trains on.
 */

/** k-means rounds (the centroids move little after a handful on word-vector averages). */
const KMEANS_ROUNDS = 8;

export const yieldLoop = (): Promise<void> => new Promise<void>((r) => setImmediate(r));

export function nearestOf(centroids: Float32Array, k: number, v: Float32Array, dims: number): number {
  let best = 0;
  let bestS = -Infinity;
  for (let c = 0; c < k; c++) {
    let s = 0;
    const base = c * dims;
    for (let i = 0; i < dims; i++) s += v[i]! * centroids[base + i]!;
    if (s > bestS) {
      bestS = s;
      best = c;
    }
  }
  return best;
}

/** Evenly spaced rows (deterministic: the same catalog trains the same index). */
export function sampleRows(total: number, n: number): number[] {
  if (total <= n) return [...Array(total).keys()];
  const step = total / n;
  return Array.from({ length: n }, (_, i) => Math.floor(i * step));
}

/** Spherical k-means (cosine), initialised with evenly spaced members; centroids normalised. */
export async function kmeans(points: Float32Array[], k: number, dims: number): Promise<Float32Array> {
  const c = new Float32Array(k * dims);
  const step = points.length / k;
  for (let i = 0; i < k; i++) c.set(points[Math.floor(i * step)]!, i * dims);
  for (let round = 0; round < KMEANS_ROUNDS; round++) {
    const sums = new Float32Array(k * dims);
    for (const p of points) {
      const j = nearestOf(c, k, p, dims);
      for (let i = 0; i < dims; i++) sums[j * dims + i]! += p[i]!;
    }
    for (let j = 0; j < k; j++) {
      let n = 0;
      for (let i = 0; i < dims; i++) n += sums[j * dims + i]! ** 2;
      if (n === 0) continue; // an empty cluster keeps its centroid
      n = Math.sqrt(n);
      for (let i = 0; i < dims; i++) c[j * dims + i] = sums[j * dims + i]! / n;
    }
    await yieldLoop();
  }
  return c;
}
