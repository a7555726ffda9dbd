/**
 * Search's in-process keyword ranking (core/catalog/search/keyword-index.ts) against Postgres's own: for documents
 * built as search-index.ts builds them (setweight A-D over to_tsvector('english')) and OR queries, the order of
 * KeywordIndex.match equals Postgres ordering by words held, then ts_rank, then id; and each document's rank equals
 * ts_rank × the query's size. Documents include quotes, backslashes, repeated words and lexemes without positions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeywordIndex, parseTsvector } from '../../../core/catalog/search/keyword-index.js';
import { PG_ADMIN_URL } from '../../helpers/env.js';
import { withPgClient } from '../../helpers/db.js';
import type pg from 'pg';

const DOCS: [string, string, string, string][] = [
  ['Weather forecast API', 'Daily weather for any city', 'Forecasts, forecasts and more forecasts', 'forecast city'],
  ['Open Weather Map', 'Current weather and forecast', 'It\'s "the" weather service; back\\slash', ''],
  ['Currency rates', 'Exchange rates of 170 currencies', 'Convert euros to dollars', 'convert from to'],
  ['City forecast', 'Weather', 'Weather weather weather weather weather', 'daily'],
  ['QR code maker', 'Make QR codes', 'Encode a URL as a QR code image', 'qr generate'],
  ['Storm tracker', 'Hurricane and storm forecast', 'Tracks storms; weather alerts', 'storms'],
];
const QUERIES = [
  ['weather'],
  ['weather', 'forecast'],
  ['forecast', 'citi', 'daili'],
  ['qr', 'code', 'weather'],
  ['convert', 'euro'],
  ['storm'],
];

let client: pg.Client;
let close: () => void;
const texts: string[] = [];

beforeAll(async () => {
  await new Promise<void>((ready) => {
    void withPgClient(PG_ADMIN_URL, (c) => {
      client = c;
      ready();
      return new Promise<void>((r) => (close = r));
    });
  });
  for (const [a, b, c, d] of DOCS) {
    const { rows } = await client.query<{ t: string }>(
      `select (setweight(to_tsvector('english', $1), 'A') || setweight(to_tsvector('english', $2), 'B') ||
               setweight(to_tsvector('english', $3), 'C') || setweight(to_tsvector('english', $4), 'D'))::text as t`,
      [a, b, c, d],
    );
    texts.push(rows[0]!.t);
  }
});
afterAll(() => close?.());

describe('KeywordIndex', () => {
  it('parses tsvector text (quotes, backslashes, weights, no positions)', async () => {
    const { rows } = await client.query<{ t: string }>(
      `select $$'it''s':1A,3 'back\\\\slash':2B 'plain'$$::tsvector::text as t`,
    );
    expect(parseTsvector(rows[0]!.t).map((l) => l.lexeme)).toEqual(['back\\slash', "it's", 'plain']);
  });

  it('ranks as Postgres does: words held, then ts_rank, then id', async () => {
    const index = new KeywordIndex();
    texts.forEach((t, i) => index.add(i, t));
    for (const words of QUERIES) {
      const query = words.map((w) => `'${w}'`).join(' | ');
      const { rows } = await client.query<{ i: number; rank: number; held: number }>(
        `select i - 1 as i, ts_rank(d::tsvector, $1::tsquery) as rank,
                (${words.map((_, k) => `(d::tsvector @@ $${k + 2}::tsquery)::int`).join(' + ')}) as held
           from unnest($${words.length + 2}::text[]) with ordinality as t(d, i)
          where d::tsvector @@ $1::tsquery
          order by held desc, rank desc, i`,
        [query, ...words.map((w) => `'${w}'`), texts],
      );
      const hits = index.match(
        words,
        () => true,
        (a, b) => a - b,
      );
      expect(
        hits.map((h) => h.doc),
        query,
      ).toEqual(rows.map((r) => Number(r.i)));
      for (const h of hits) {
        const pgRank = rows.find((r) => Number(r.i) === h.doc)!.rank;
        expect(h.rank / words.length).toBeCloseTo(pgRank, 5);
      }
    }
  });

  it('counts live documents per lexeme and skips dead ones', () => {
    const index = new KeywordIndex();
    texts.forEach((t, i) => index.add(i, t));
    const live = new Uint8Array(texts.length).fill(1);
    const all = index.frequency('weather', live);
    live[3] = 0;
    expect(index.frequency('weather', live)).toBe(all - 1);
    expect(
      index
        .match(
          ['weather'],
          (d) => live[d] === 1,
          (a, b) => a - b,
        )
        .map((h) => h.doc),
    ).not.toContain(3);
  });
});
