// Small statistics helpers: medians across rounds and exact percentiles over recorded samples.

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const upper = sorted[mid] ?? Number.NaN;
  return sorted.length % 2 === 1 ? upper : ((sorted[mid - 1] ?? upper) + upper) / 2;
}

/** Nearest-rank percentile (q in 0..100) of an ascending-sorted array. */
export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((q / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? Number.NaN;
}

/** Rounds to `digits` decimals for reports (3 for milliseconds: microsecond resolution). */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Median of each numeric field, for result objects that share a shape across rounds. */
export function medianOf<T extends Record<string, number>>(rows: readonly T[]): T {
  const first = rows[0];
  if (!first) throw new Error('medianOf needs at least one row');
  const result: Record<string, number> = {};
  for (const key of Object.keys(first)) result[key] = median(rows.map((row) => row[key] ?? Number.NaN));
  return result as T;
}
