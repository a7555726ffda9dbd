/** nDCG@k with graded gains 2^g - 1; the ideal ranking is every graded answer, best first. */
export function ndcgAt(ranked: string[], relevant: Record<string, number>, k = 10): number {
  const gain = (g: number) => 2 ** g - 1;
  const dcg = ranked.slice(0, k).reduce((s, slug, i) => s + gain(relevant[slug] ?? 0) / Math.log2(i + 2), 0);
  const ideal = Object.values(relevant)
    .sort((a, b) => b - a)
    .slice(0, k)
    .reduce((s, g, i) => s + gain(g) / Math.log2(i + 2), 0);
  return ideal > 0 ? dcg / ideal : 0;
}
