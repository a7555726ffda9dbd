// Near-duplicate API requests (core/demand/similarity.ts): normalisation, similarity and listing coverage.
import { describe, expect, it } from 'vitest';
import {
  coverage,
  DUPLICATE_THRESHOLD,
  normalizeQuery,
  querySimilarity,
  tokenize,
} from '../../core/demand/similarity.js';

describe('api request similarity', () => {
  it('normalises case, accents, punctuation, filler words, plurals and word order', () => {
    expect(normalizeQuery('I need an API for Tide Tables of UK harbours!')).toBe('harbour table tide uk');
    expect(normalizeQuery('uk harbour tide tables')).toBe('harbour table tide uk');
    expect(tokenize('Café  libraries')).toEqual(['cafe', 'library']);
    expect(normalizeQuery('an api for the')).toBe('');
  });

  it('merges near-duplicates and keeps different requests apart', () => {
    const a = normalizeQuery('Paris weather forecast API');
    expect(querySimilarity(a, normalizeQuery('weather forecasts for paris'))).toBe(1);
    expect(querySimilarity(a, normalizeQuery('paris wether forecast'))).toBeGreaterThanOrEqual(DUPLICATE_THRESHOLD);
    expect(querySimilarity(a, normalizeQuery('stock prices in real time'))).toBeLessThan(DUPLICATE_THRESHOLD);
    expect(querySimilarity(a, normalizeQuery('paris metro timetable'))).toBeLessThan(DUPLICATE_THRESHOLD);
  });

  it('measures how much of a request a listing covers', () => {
    const listing = new Set(tokenize('Harbour Tides: tide tables and tide times for every UK harbour'));
    expect(coverage(tokenize('uk harbour tide tables'), listing)).toBe(1);
    expect(coverage(tokenize('ferry timetables'), listing)).toBe(0);
    expect(coverage([], listing)).toBe(0);
  });
});
