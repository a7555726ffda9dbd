/**
 * The keyword side of search (search.service.ts) in Postgres: the query's lexemes with their typo corrections, and
 * the full-text match of a set of lexemes, best first.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { addFilter } from '../../db/sql.js';
import type { SearchQuery } from './search.schemas.js';
import { RANKING } from './search-ranking.js';

/**
 * The query's lexemes (the english configuration's), each with its corrections when the index does not know it
 * (not in search_lexicon, at least RANKING.typo.minLength long): its nearest indexed words by pg_trgm similarity.
 */
export async function lexemesOf(em: EntityManager, q: string): Promise<{ lex: string; fixes: string[] | null }[]> {
  const { minLength, maxWords, fixesPerWord } = RANKING.typo;
  return em.execute<{ lex: string; fixes: string[] | null }[]>(
    `with l as (select distinct lex from unnest(tsvector_to_array(to_tsvector('english', ?))) lex),
          u as (select lex from l where length(lex) >= ${minLength}
                   and not exists (select 1 from search_lexicon w where w.word = l.lex)
                 order by lex limit ${maxWords})
     select l.lex, (select array_agg(f.word) from (select word from search_lexicon where word % u.lex
                       order by similarity(word, u.lex) desc, word limit ${fixesPerWord}) f) as fixes
       from l left join u on u.lex = l.lex`,
    [q],
  );
}

/**
 * Ids of every listing matching any of these lexemes (no cut-off: the search's total counts them all), best first:
 * those holding more of the words first, then by ts_rank. ts_rank alone sums occurrences by field weight, so a
 * listing with "weather" five times in its name, category and examples came before one saying "weather forecast" in
 * its summary and its endpoint (docs/decisions.md, "Callable first"). The tsquery and the words arrive as
 * parameters, parsed once when the statement is planned: built inside the statement, the tsquery was cast per row
 * (75 ms instead of 3 at 10k). Without filters, liveness is checked against the per-process copy (rank() drops ids
 * it does not hold): joining apis cost a scan of every listing per query.
 */
export async function fullText(
  em: EntityManager,
  words: string[],
  f: Pick<SearchQuery, 'category' | 'source'>,
): Promise<string[]> {
  const tsquery = tsOr(words);
  if (tsquery === null) return [];
  const filters: string[] = [];
  const params: unknown[] = [tsquery];
  addFilter(filters, params, ' and a.category = ?', f.category);
  addFilter(filters, params, ' and a.source = ?', f.source);
  const joined = filters.length > 0;
  // How many of the words a document holds (one index-free match per word; none to count for a single word).
  const held = words.length > 1 ? words.map(() => '(s.document @@ ?::tsquery)::int').join(' + ') : null;
  const rows = await em.execute<{ id: string }[]>(
    `select s.api_id as id from api_search s${joined ? ' join apis a on a.id = s.api_id' : ''}
      where s.document @@ ?::tsquery${joined ? ` and a.status = 'live'${filters.join('')}` : ''}
      order by ${held ? `${held} desc, ` : ''}ts_rank(s.document, ?::tsquery) desc, s.api_id`,
    [...params, ...(held ? words.map((w) => tsOr([w])) : []), tsquery],
  );
  return rows.map((r) => r.id);
}

/** A lexeme quoted for a tsquery (quotes and backslashes doubled). */
const quoteLexeme = (l: string) => `'${l.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** A tsquery matching any of these lexemes, or null when there are none. */
export function tsOr(lexemes: readonly string[]): string | null {
  if (!lexemes.length) return null;
  return lexemes.map(quoteLexeme).join(' | ');
}
