// The pure rules behind the directory import and search: slugs (unique, deterministic, taxonomy-compatible), tags,
// the tokenizer, enrichment keys, and the nDCG the relevance evaluation reports.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ndcgAt } from '../../bench/search/ndcg.js';
import {
  DirectoryFile,
  categorySlug,
  directorySlugs,
  directoryTags,
  entryKey,
  slugify,
} from '../../core/catalog/public-apis/public-apis.js';
import { tokenize } from '../../core/catalog/search/embedder.js';
import { API_SLUG } from '../../core/providers/providers.schemas.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const entries = DirectoryFile.parse(
  JSON.parse(readFileSync(path.join(ROOT, 'data', 'public-apis', 'public-apis.json'), 'utf8')),
);

describe('directory rules', () => {
  it('gives every entry a unique, valid slug, the same on every run', () => {
    const slugs = directorySlugs(entries);
    expect(new Set(slugs).size).toBe(entries.length);
    for (const s of slugs) expect(s, s).toMatch(API_SLUG);
    expect(directorySlugs(entries)).toEqual(slugs);
    // Collisions take the category, then a counter in file order.
    expect(slugs.filter((s) => s.startsWith('ipstack'))).toEqual([
      'ipstack-apis-covered-under-apilayer-suite',
      'ipstack-geocoding',
      'ipstack-geocoding-2',
    ]);
    expect(slugs[entries.findIndex((e) => e.name === 'Open-Meteo')]).toBe('open-meteo');
  });

  it('maps categories to the taxonomy slugs the catalog migration seeded', () => {
    expect(categorySlug('Art & Design')).toBe('art-and-design');
    expect(categorySlug('APIs Covered Under APILayer Suite!')).toBe('apis-covered-under-apilayer-suite');
    expect(new Set(entries.map((e) => categorySlug(e.category))).size).toBe(52);
    expect(slugify('  Ça va?  ')).toBe('ca-va');
  });

  it('tags auth, https and cors', () => {
    expect(
      directoryTags({ name: 'x', url: 'u', description: '', category: 'c', auth: 'apiKey', https: true, cors: 'yes' }),
    ).toEqual(['auth:apikey', 'https', 'cors:yes']);
    expect(
      directoryTags({ name: 'x', url: 'u', description: '', category: 'c', auth: null, https: false, cors: null }),
    ).toEqual(['auth:none']);
    expect(
      directoryTags({
        name: 'x',
        url: 'u',
        description: '',
        category: 'c',
        auth: 'OAuth',
        https: true,
        cors: 'unknown',
      }),
    ).toEqual(['auth:oauth', 'https', 'cors:unknown']);
    expect(entryKey({ name: 'A', url: 'https://a', category: 'B' })).toBe('A|https://a|B');
  });

  it('tokenizes camelCase names and drops punctuation', () => {
    expect(tokenize('OpenWeatherMap: 5-day forecast!')).toEqual(['open', 'weather', 'map', '5', 'day', 'forecast']);
    expect(tokenize('Café NASA')).toEqual(['cafe', 'nasa']);
  });
});

describe('nDCG@10', () => {
  it('is 1 for the ideal order, lower when a relevant answer drops, 0 with none', () => {
    const rel = { a: 3, b: 2, c: 1 };
    expect(ndcgAt(['a', 'b', 'c'], rel)).toBeCloseTo(1, 10);
    expect(ndcgAt(['c', 'b', 'a'], rel)).toBeLessThan(1);
    expect(ndcgAt(['x', 'a', 'b', 'c'], rel)).toBeLessThan(ndcgAt(['a', 'b', 'c'], rel));
    expect(ndcgAt(['x', 'y'], rel)).toBe(0);
  });
});
