/** mulberry32: a small seeded generator, so a property-style test that fails reproduces. `next(max)` is 0..max-1. */
export function seededRandom(seed: number): (max: number) => number {
  let a = seed;
  return (max) => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * max);
  };
}
