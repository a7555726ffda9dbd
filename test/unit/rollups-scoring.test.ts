// The merit score and board metrics (core/catalog/rollups/rollups.scoring.ts): Wilson bounds, histogram percentiles, neutral
// values without traffic, and which listings qualify for each board.
import { describe, expect, it } from 'vitest';
import {
  boardMetric,
  computeScore,
  emptyHistogram,
  histogramQuantile,
  latencyBucket,
  MIN_RELIABILITY_CALLS,
  wilsonLowerBound,
  type BoardInput,
} from '../../core/catalog/rollups/rollups.scoring.js';

const base: BoardInput = {
  source: 'provider',
  gmvCents30d: 0,
  successes30d: 0,
  judged30d: 0,
  calls7d: 0,
  callsPrev7d: 0,
  minPriceCents: 0,
  publishedDaysAgo: 100,
};

describe('rollup scoring', () => {
  it('computes the 95% Wilson lower bound', () => {
    expect(wilsonLowerBound(0, 0)).toBe(0);
    expect(wilsonLowerBound(1, 1)).toBeCloseTo(0.2065, 3);
    expect(wilsonLowerBound(25, 30)).toBeCloseTo(0.6644, 3);
    expect(wilsonLowerBound(1000, 1000)).toBeCloseTo(0.9962, 3);
  });

  it('reads percentiles off a latency histogram', () => {
    const hist = emptyHistogram();
    expect(histogramQuantile(hist, 0.5)).toBeNull();
    for (const ms of [12, 15, 18, 40, 45, 900]) hist[latencyBucket(ms)]! += 1;
    expect(latencyBucket(5)).toBe(0);
    expect(latencyBucket(6)).toBe(1);
    expect(latencyBucket(60_000)).toBe(19);
    const p50 = histogramQuantile(hist, 0.5)!;
    expect(p50).toBeGreaterThanOrEqual(10);
    expect(p50).toBeLessThanOrEqual(20);
    expect(histogramQuantile(hist, 0.95)).toBeGreaterThan(750);
  });

  it('gives a listing with no traffic neutral parts and a middling score', () => {
    const score = computeScore({
      successes: 0,
      judged: 0,
      p95Ms: null,
      minPriceCents: null,
      ageDays: 0,
      marketMaxSuccesses: 0,
    });
    expect(score).toEqual({ svc_score: 50, reliability: 0.5, latency: 0.5, usage: 0, value: 0.5, freshness: 1 });
  });

  it('rewards reliable, fast, used, cheap and fresh listings, and punishes failures', () => {
    const good = computeScore({
      successes: 1000,
      judged: 1000,
      p95Ms: 80,
      minPriceCents: 1,
      ageDays: 1,
      marketMaxSuccesses: 1000,
    });
    const bad = computeScore({
      successes: 200,
      judged: 1000,
      p95Ms: 4000,
      minPriceCents: 100,
      ageDays: 120,
      marketMaxSuccesses: 1000,
    });
    expect(good.svc_score).toBeGreaterThan(90);
    expect(bad.svc_score).toBeLessThan(30);
    expect(good.usage).toBe(1);
    expect(bad.value).toBeLessThan(bad.reliability);
  });

  it('admits listings to boards by their rules', () => {
    expect(boardMetric('top_grossing', base)).toBeNull();
    expect(boardMetric('top_grossing', { ...base, gmvCents30d: 40 })).toBe(40);
    expect(boardMetric('most_used', { ...base, successes30d: 7 })).toBe(7);
    const few = { ...base, successes30d: MIN_RELIABILITY_CALLS - 1, judged30d: MIN_RELIABILITY_CALLS - 1 };
    expect(boardMetric('most_reliable', few)).toBeNull();
    const enough = { ...base, successes30d: 30, judged30d: 30 };
    expect(boardMetric('most_reliable', enough)).toBeCloseTo(wilsonLowerBound(30, 30), 4);
    // Free counts as one cent: a free listing ranks by its reliability, a 10-cent one at a tenth of it.
    expect(boardMetric('best_value', { ...enough, minPriceCents: 0 })).toBeCloseTo(wilsonLowerBound(30, 30), 4);
    expect(boardMetric('best_value', { ...enough, minPriceCents: 10 })).toBeCloseTo(wilsonLowerBound(30, 30) / 10, 4);
    expect(boardMetric('best_value', { ...enough, minPriceCents: null })).toBeNull();
    // Smoothed growth: 5 calls against none is less than 50 against 10.
    const small = boardMetric('trending', { ...base, calls7d: 5, callsPrev7d: 0 })!;
    const large = boardMetric('trending', { ...base, calls7d: 50, callsPrev7d: 10 })!;
    expect(small).toBeCloseTo(0.5, 4);
    expect(large).toBeCloseTo(2, 4);
    expect(boardMetric('trending', { ...base, calls7d: 10, callsPrev7d: 20 })).toBeNull();
    expect(boardMetric('new_rising', { ...base, publishedDaysAgo: 2, calls7d: 10 })).toBe(5);
    expect(boardMetric('new_rising', { ...base, publishedDaysAgo: 40, calls7d: 10 })).toBeNull();
    expect(boardMetric('new_rising', { ...base, source: 'directory', publishedDaysAgo: 1 })).toBeNull();
  });
});
