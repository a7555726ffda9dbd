/**
 * The inverted-file path of search's vector index (core/catalog/search/vector-index.ts) against its exact path, on a
 * fixed, seeded set shaped like the catalog's vectors: unit vectors around topics (a listing's combined vector and
 * four intents near its topic, intents also near their own sub-topic), 16,000 listings × 5 vectors, 100 dimensions.
 * Recall@10 counts a result of the index as found when its exact score reaches the exact path's 10th best (near-equal
 * listings are interchangeable); asserted ≥ 0.95 over 60 queries.
 */
import { describe, expect, it } from 'vitest';
import { VectorIndex } from '../../../core/catalog/search/vector-index.js';

const DIMS = 100;

/** mulberry32: a small seeded generator, so the set is the same on every run. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function unit(v: Float32Array): Float32Array {
  const n = Math.hypot(...v);
  for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
}

function near(center: Float32Array, spread: number, rand: () => number): Float32Array {
  const v = new Float32Array(DIMS);
  for (let i = 0; i < DIMS; i++) v[i] = center[i]! + spread * (rand() * 2 - 1);
  return unit(v);
}

function randomUnit(rand: () => number): Float32Array {
  return unit(Float32Array.from({ length: DIMS }, () => rand() * 2 - 1));
}

describe('VectorIndex', () => {
  it('finds through its inverted file what the exact scan finds (recall@10 ≥ 0.95), reading a fraction of the vectors', async () => {
    const rand = rng(33);
    const topics = Array.from({ length: 400 }, () => randomUnit(rand));
    const live = new Set<number>();
    const index = new VectorIndex(
      DIMS,
      (d) => live.has(d),
      () => 0.75,
      { ivfMinVectors: 50_000 },
    );
    for (let doc = 0; doc < 16_000; doc++) {
      const topic = topics[Math.floor(rand() * topics.length)]!;
      const vec = new Float32Array(DIMS * 5);
      vec.set(near(topic, 0.08, rand), 0);
      for (let j = 1; j < 5; j++) vec.set(near(near(topic, 0.1, rand), 0.06, rand), j * DIMS);
      index.add(doc, vec);
      live.add(doc);
    }
    await index.build();
    expect(index.indexed).toBe(true);
    const all = () => live.values();
    let found = 0;
    for (let q = 0; q < 60; q++) {
      const query = near(topics[Math.floor(rand() * topics.length)]!, 0.12, rand);
      const exact = index.exact(query, all(), -1);
      const tenth = exact[9]!.score;
      const approx = index.nearest(query, () => true, -1, all);
      found += approx.slice(0, 10).filter((h) => h.score >= tenth - 1e-6).length;
    }
    expect(found / 600).toBeGreaterThanOrEqual(0.95);
  });

  it('skips dead documents and honours the filter, and a document added after the build is found', async () => {
    const rand = rng(7);
    const live = new Set<number>();
    const index = new VectorIndex(
      DIMS,
      (d) => live.has(d),
      () => 1,
      { ivfMinVectors: 1_000 },
    );
    const vecs: Float32Array[] = [];
    for (let doc = 0; doc < 400; doc++) {
      const v = randomUnit(rand);
      vecs.push(v);
      index.add(doc, Float32Array.from([...v, ...randomUnit(rand), ...randomUnit(rand)]));
      live.add(doc);
    }
    await index.build();
    const target = vecs[17]!;
    // The documents nearest a vector (cosine ≥ 0.5) among those `keep` passes, best first.
    const nearest = (q: Float32Array, keep = (_d: number) => true) =>
      index.nearest(q, keep, 0.5, () => live.values()).map((h) => h.doc);
    expect(nearest(target)[0]).toBe(17);
    live.delete(17);
    expect(nearest(target)).not.toContain(17);
    expect(nearest(vecs[18]!, (d) => d !== 18)).not.toContain(18);
    index.add(400, Float32Array.from(target));
    live.add(400);
    expect(nearest(target)[0]).toBe(400);
  });
});
