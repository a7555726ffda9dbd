// What a listing's search document holds (core/catalog/search/search-index.ts): endpoint summaries are searched (field C and
// one intent vector each, after the examples), the words of endpoint paths too (field D), a directory entry's
// document is what it was before endpoints counted; and which stored rows are indexed again (the document format).
import { describe, expect, it } from 'vitest';
import {
  INDEX_FORMAT,
  MAX_INTENT_VECTORS,
  documentOf,
  indexMarker,
  pathWords,
  vectorUsable,
} from '../../core/catalog/search/search-index.js';

const row = {
  id: 'api_1',
  name: 'Skyline',
  summary: 'Conditions and outlooks for the places your users care about',
  description: null,
  tags: ['auth:apikey', 'https', 'maps'],
  examples: [] as string[],
  search_terms: [] as string[],
  category_name: null,
  endpoint_summaries: ['Daily weather forecast for a city', 'Severe weather alerts by region'],
  endpoint_paths: ['/v1/daily/{city}', '/v1/alerts'],
};

describe('search document', () => {
  it('searches endpoint summaries (field C) and the words of their paths (field D)', () => {
    const doc = documentOf(row);
    expect(doc.c).toBe('Daily weather forecast for a city. Severe weather alerts by region');
    expect(doc.d).toBe('v1 daily city v1 alerts');
    expect(doc.a).toBe('Skyline. maps');
    expect(doc.b).toBe(row.summary);
  });

  it('makes each endpoint summary an intent of the listing, after its examples, within the vector limit', () => {
    const doc = documentOf({ ...row, examples: ['what will the weather be tomorrow'] });
    expect(doc.semantic.each).toEqual([
      'what will the weather be tomorrow',
      'Daily weather forecast for a city',
      'Severe weather alerts by region',
    ]);
    expect(doc.semantic.intents).toContain('Daily weather forecast for a city');
    const many = documentOf({ ...row, endpoint_summaries: Array.from({ length: 30 }, (_v, i) => `call ${i}`) });
    expect(many.semantic.each).toHaveLength(MAX_INTENT_VECTORS);
    // Repeated or blank summaries count once or not at all.
    const repeated = documentOf({ ...row, endpoint_summaries: ['Forecast', ' Forecast ', ''] });
    expect(repeated.semantic.each).toEqual(['Forecast']);
    expect(repeated.c).toBe('Forecast');
  });

  it('leaves a listing without endpoints (a directory entry) as it was', () => {
    const doc = documentOf({ ...row, endpoint_summaries: null, endpoint_paths: null, description: 'A long text' });
    expect(doc.c).toBe('A long text');
    expect(doc.d).toBe('');
    expect(doc.semantic.each).toEqual([]);
    expect(doc.semantic.intents).toBe('maps');
  });

  it('path words drop punctuation and parameter braces', () => {
    expect(pathWords('/forecast/{city}/daily')).toBe('forecast city daily');
    expect(pathWords('/')).toBe('');
  });

  it('marks rows with the embedder and the document format: an older format is indexed again, its vector still used', () => {
    expect(indexMarker('wink-sg-100d:sif-3')).toBe(`wink-sg-100d:sif-3#${INDEX_FORMAT}`);
    expect(vectorUsable('wink-sg-100d:sif-3', 'wink-sg-100d:sif-3')).toBe(true);
    expect(vectorUsable(`wink-sg-100d:sif-3#${INDEX_FORMAT}`, 'wink-sg-100d:sif-3')).toBe(true);
    expect(vectorUsable('wink-sg-100d:sif-2', 'wink-sg-100d:sif-3')).toBe(false);
    expect(vectorUsable('wink-sg-100d:sif-3x', 'wink-sg-100d:sif-3')).toBe(false);
    expect(vectorUsable(null, 'wink-sg-100d:sif-3')).toBe(false);
  });
});
