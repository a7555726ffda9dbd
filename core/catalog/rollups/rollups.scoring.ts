/**
 * The merit score and the board metrics, as pure functions (unit-tested; docs/decisions.md, "Rollups, leaderboards,
 * market and demand"). The rollup activity (rollups.service.ts) feeds them with 30-day stats and listing facts.
 */
import type { MeritParts } from './merit.js';

/** Latency histogram bucket upper bounds in ms; a last, open bucket holds everything slower. */
export const LATENCY_BOUNDS_MS = [
  5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 10000, 30000,
] as const;

/** Index of the bucket a latency falls in (0 … LATENCY_BOUNDS_MS.length). */
export function latencyBucket(ms: number): number {
  const i = LATENCY_BOUNDS_MS.findIndex((b) => ms <= b);
  return i === -1 ? LATENCY_BOUNDS_MS.length : i;
}

export function emptyHistogram(): number[] {
  return new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0);
}

export function mergeHistograms(into: number[], add: readonly number[]): number[] {
  for (let i = 0; i < into.length; i++) into[i]! += add[i] ?? 0;
  return into;
}

/**
 * The q-quantile (0–1) of a histogram, interpolated linearly inside its bucket; null with no calls. The open last
 * bucket reports its lower bound (30 s: the gateway's upstream timeout is lower anyway).
 */
export function histogramQuantile(hist: readonly number[], q: number): number | null {
  const total = hist.reduce((s, n) => s + n, 0);
  if (total === 0) return null;
  const target = q * total;
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    const n = hist[i]!;
    if (n > 0 && seen + n >= target) {
      const lo = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1]!;
      const hi = LATENCY_BOUNDS_MS[i] ?? lo;
      return Math.round(lo + ((hi - lo) * (target - seen)) / n);
    }
    seen += n;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!;
}

const Z95 = 1.959964;

/** Lower bound of the 95% Wilson score interval of successes/n; 0 when n = 0. */
export function wilsonLowerBound(successes: number, n: number, z = Z95): number {
  if (n <= 0) return 0;
  const p = Math.min(1, Math.max(0, successes / n));
  const z2 = z * z;
  const centre = p + z2 / (2 * n);
  const margin = z * Math.sqrt((p * (1 - p) + z2 / (4 * n)) / n);
  return Math.max(0, (centre - margin) / (1 + z2 / n));
}

/** Part values of a listing with no evidence: neither rewarded nor punished. */
export const NEUTRAL = 0.5;
/** Calls at which the evidence and the neutral prior weigh the same (confidence c = n / (n + K)). */
export const CONFIDENCE_K = 20;
/** Minimum calls over 30 days for the boards that rank by reliability (most_reliable, best_value). */
export const MIN_RELIABILITY_CALLS = 20;
/** Pseudo-count that smooths `trending` for small counts. */
export const TRENDING_SMOOTHING = 10;
/** Freshness halves every this many days since the listing last changed or last answered a call. */
export const FRESHNESS_HALF_LIFE_DAYS = 30;

export const WEIGHTS = { reliability: 0.35, latency: 0.2, usage: 0.15, value: 0.15, freshness: 0.15 } as const;

export interface ScoreInput {
  /** 30-day successful calls. */
  successes: number;
  /** 30-day calls the provider is accountable for: successes + 5xx + no-answer (a consumer's 4xx is excluded). */
  judged: number;
  /** 30-day p95 latency in ms (null without calls). */
  p95Ms: number | null;
  /** Lowest positive endpoint price in cents; 0 when every endpoint is free; null with no endpoints (directory). */
  minPriceCents: number | null;
  /** Days since the listing last changed, was published, or answered a call successfully (the latest). */
  ageDays: number;
  /** The market's most successful listing's 30-day successes (usage is relative to it). */
  marketMaxSuccesses: number;
}

export interface ScoreParts extends MeritParts {
  svc_score: number;
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));
const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** Confidence-weighted blend of the evidence with the neutral prior. */
function blend(evidence: number, n: number): number {
  const c = n / (n + CONFIDENCE_K);
  return c * evidence + (1 - c) * NEUTRAL;
}

/** Reliability part: the Wilson lower bound, blended towards neutral while there are few calls. */
export function reliabilityPart(successes: number, judged: number): number {
  return clamp01(blend(wilsonLowerBound(successes, judged), judged));
}

/** Latency part: 1 / (1 + p95 / 1 s): 100 ms → 0.91, 1 s → 0.5, 3 s → 0.25; blended towards neutral. */
export function latencyPart(p95Ms: number | null, n: number): number {
  if (p95Ms === null || n === 0) return NEUTRAL;
  return clamp01(blend(1 / (1 + p95Ms / 1000), n));
}

/** Value part: reliability discounted by the order of magnitude of the price (free and 1 cent keep it whole). */
export function valuePart(reliability: number, minPriceCents: number | null): number {
  if (minPriceCents === null) return reliability;
  return clamp01(reliability / (1 + Math.log10(Math.max(1, minPriceCents))));
}

export function computeScore(input: ScoreInput): ScoreParts {
  const reliability = reliabilityPart(input.successes, input.judged);
  const latency = latencyPart(input.p95Ms, input.judged);
  const usage =
    input.successes > 0 && input.marketMaxSuccesses > 0
      ? clamp01(Math.log1p(input.successes) / Math.log1p(input.marketMaxSuccesses))
      : 0;
  const value = valuePart(reliability, input.minPriceCents);
  const freshness = clamp01(Math.pow(0.5, Math.max(0, input.ageDays) / FRESHNESS_HALF_LIFE_DAYS));
  const total =
    WEIGHTS.reliability * reliability +
    WEIGHTS.latency * latency +
    WEIGHTS.usage * usage +
    WEIGHTS.value * value +
    WEIGHTS.freshness * freshness;
  return {
    svc_score: Math.round(100 * clamp01(total)),
    reliability: round4(reliability),
    latency: round4(latency),
    usage: round4(usage),
    value: round4(value),
    freshness: round4(freshness),
  };
}

export const BOARDS = ['top_grossing', 'most_used', 'most_reliable', 'best_value', 'trending', 'new_rising'] as const;
export type Board = (typeof BOARDS)[number];

/** The name of the metric each board ranks by (shown with every board item). */
export const BOARD_METRICS: Record<Board, string> = {
  top_grossing: 'gmv_cents_30d',
  most_used: 'successful_calls_30d',
  most_reliable: 'reliability_lower_bound',
  best_value: 'reliability_per_cent',
  trending: 'growth_7d',
  new_rising: 'momentum',
};

export interface BoardInput {
  source: 'provider' | 'directory';
  gmvCents30d: number;
  successes30d: number;
  judged30d: number;
  calls7d: number;
  callsPrev7d: number;
  minPriceCents: number | null;
  /** Days since published (null when never). */
  publishedDaysAgo: number | null;
}

/**
 * A listing's metric on a board, or null when it does not qualify (no GMV, no calls, too few calls to judge,
 * not new). Higher is better on every board.
 */
export function boardMetric(board: Board, x: BoardInput): number | null {
  switch (board) {
    case 'top_grossing':
      return x.gmvCents30d > 0 ? x.gmvCents30d : null;
    case 'most_used':
      return x.successes30d > 0 ? x.successes30d : null;
    case 'most_reliable':
      return x.judged30d >= MIN_RELIABILITY_CALLS ? round4(wilsonLowerBound(x.successes30d, x.judged30d)) : null;
    case 'best_value': {
      if (x.judged30d < MIN_RELIABILITY_CALLS || x.minPriceCents === null) return null;
      // Reliability per cent of the cheapest paid call; free listings count as 1 cent, so they rank by reliability.
      return round4(wilsonLowerBound(x.successes30d, x.judged30d) / Math.max(1, x.minPriceCents));
    }
    case 'trending': {
      if (x.calls7d === 0) return null;
      const growth = (x.calls7d + TRENDING_SMOOTHING) / (x.callsPrev7d + TRENDING_SMOOTHING) - 1;
      return growth > 0 ? round4(growth) : null;
    }
    case 'new_rising': {
      if (x.source !== 'provider' || x.publishedDaysAgo === null || x.publishedDaysAgo > 30) return null;
      // Calls per day over the last week, or over the listing's life when it is younger than a week.
      return round4(x.calls7d / Math.min(7, Math.max(1, x.publishedDaysAgo)));
    }
  }
}
