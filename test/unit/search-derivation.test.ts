// The derived enrichment (issue 33, core/catalog/search/derived-enrichment.ts, derived-model.ts, intent-clusters.ts):
// learned from enriched listings in general (per category, per word), deterministic, applied to a listing that has
// only its name, summary and endpoints; the projection and the question clusters; the document it makes.
import { describe, expect, it } from 'vitest';
import {
  contentWords,
  deriveScores,
  deriveWords,
  learnDerivation,
  stemOf,
  type TrainingEntry,
} from '../../core/catalog/search/derived-enrichment.js';
import { learnProjection, project } from '../../core/catalog/search/derived-model.js';
import { kmeans } from '../../core/catalog/search/intent-clusters.js';
import { documentOf } from '../../core/catalog/search/search-index.js';

const entry = (text: string, category: string, intents: string[], synonyms: string[] = []): TrainingEntry => ({
  text,
  category,
  intents,
  synonyms,
});

/** Enriched listings of three categories; weather's questions talk of rain, umbrellas and tomorrow. */
const TRAINING: TrainingEntry[] = [
  entry('Skycast. Weather data worldwide. Weather', 'weather', ['will it rain tomorrow', 'do I need an umbrella']),
  entry('Meteo One. Forecasts by city. Weather', 'weather', ['rain tomorrow in Paris', 'umbrella or sunglasses today']),
  entry('Stormy. Severe weather warnings. Weather', 'weather', ['storm coming tomorrow', 'is rain expected tonight']),
  entry('Jokester. Random jokes. Entertainment', 'entertainment', ['make me laugh', 'something funny please']),
  entry('Punny. Puns and jokes. Entertainment', 'entertainment', ['a funny pun to laugh at', 'tell a silly joke']),
  entry('Fx Now. Currency rates. Currency Exchange', 'currency-exchange', [
    'how many euros for dollars',
    'euros today',
  ]),
  entry('Rates. Exchange rates. Currency Exchange', 'currency-exchange', ['dollars to euros', 'convert euros'], ['fx']),
];

describe('derived enrichment', () => {
  it('learns per category and per word, the same model for the same listings', () => {
    const model = learnDerivation(TRAINING);
    expect(learnDerivation([...TRAINING])).toEqual(model);
    expect(model.entries).toBe(TRAINING.length);
    const weather = model.categories.weather!.map(([w]) => w);
    expect(weather).toEqual(expect.arrayContaining(['rain', 'tomorrow', 'umbrella']));
    expect(weather).not.toContain('euros');
    // A word of at least three listings' own text ("weather") learns what their questions say.
    expect(model.words[stemOf('weather')]!.map(([w]) => w)).toContain('rain');
    // A word of fewer listings is too particular to learn from.
    expect(model.words[stemOf('stormy')]).toBeUndefined();
  });

  it('gives a listing with only a name, a summary and endpoints the intent words of its category', () => {
    const model = learnDerivation(TRAINING);
    const listing = {
      texts: ['Nimbus', 'Forecasts for any city', 'Daily forecast for a city', 'forecast daily'],
      category: 'weather',
    };
    const words = deriveWords(model, listing);
    expect(words).toEqual(expect.arrayContaining(['rain', 'tomorrow', 'umbrella']));
    // Never a word it already has, and nothing of another category.
    expect(words).not.toContain('city');
    expect(words).not.toContain('laugh');
    expect(deriveWords(model, listing)).toEqual(words);
    // Without a category and without a learned word, nothing to say.
    expect(deriveScores(model, { texts: ['Zzyzx'], category: null })).toEqual([]);
  });

  it('counts meaningful words only, plurals with their singular', () => {
    expect([...contentWords('What are the best APIs for cities and forecasts?').keys()]).toEqual([
      'best',
      'city',
      'forecast',
    ]);
    expect(stemOf('addresses')).toBe('address');
    expect(stemOf('status')).toBe('status');
  });

  it('learns a projection by ridge regression: vectors mapped to themselves come back as they were', () => {
    const unit = (v: number[]) => {
      const n = Math.hypot(...v);
      return Float32Array.from(v.map((x) => x / n));
    };
    const xs = [
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
      [1, 1, 0],
      [0, 1, 1],
    ].map(unit);
    const p = learnProjection(xs, xs, 'test', 1e-6);
    expect(p).toMatchObject({ embedder: 'test', dims: 3 });
    const y = project(p, unit([1, 2, 3]));
    [...unit([1, 2, 3])].forEach((v, i) => expect(y[i]).toBeCloseTo(v, 3));
    // A swap learned is applied.
    const swap = learnProjection(
      xs,
      xs.map((x) => Float32Array.from([x[1]!, x[0]!, x[2]!])),
      'test',
      1e-6,
    );
    expect(project(swap, unit([1, 0, 0]))[1]).toBeCloseTo(1, 3);
  });

  it('groups question vectors deterministically (spherical k-means from farthest-point seeds)', () => {
    const vs = [
      [1, 0.1],
      [0.9, 0.2],
      [0.1, 1],
      [0.2, 0.9],
      [1, 0],
    ].map((v) => Float32Array.from(v));
    const assign = kmeans(vs, 2);
    expect(assign).toEqual(kmeans(vs, 2));
    expect(new Set([assign[0], assign[1], assign[4]]).size).toBe(1);
    expect(new Set([assign[2], assign[3]]).size).toBe(1);
    expect(assign[0]).not.toBe(assign[2]);
  });

  it('puts derived words in field D and the semantic intents, and pseudo-intents among the intent vectors', () => {
    const row = {
      id: 'api_1',
      name: 'Nimbus',
      summary: 'Forecasts for any city',
      description: null,
      tags: [],
      examples: [] as string[],
      search_terms: [] as string[],
      category_name: 'Weather',
      endpoint_summaries: null,
      endpoint_paths: ['/daily'],
    };
    const doc = documentOf(row, { words: ['rain', 'umbrella'], intents: ['rain umbrella tomorrow'], project: true });
    expect(doc.d).toBe('daily rain umbrella');
    expect(doc.a).toBe('Nimbus. Weather');
    expect(doc.semantic.intents).toBe('rain umbrella');
    expect(doc.semantic.each).toEqual(['rain umbrella tomorrow']);
    expect(doc.semantic.project).toBe(true);
    // Without a derivation the document is as before.
    expect(documentOf(row)).toMatchObject({ d: 'daily', derived: [], semantic: { intents: '', each: [] } });
  });
});
