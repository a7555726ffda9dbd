/**
 * The keyword side of search in Postgres (search.service.ts): the query's lexemes, parsed by the same `english`
 * configuration as the stored documents, with their typo corrections. Matching and ranking run in process
 * (keyword-index.ts).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { RANKING } from './search-ranking.js';

/**
 * The query's lexemes (the english configuration's), each with its corrections when the index does not know it
 * (not in search_lexicon, at least RANKING.typo.minLength long): its nearest indexed words by pg_trgm similarity.
 * The similarity scan runs only for those words (`case`): as a plain subquery it ran for every word of the query,
 * known or not, and cost 5-20 ms per query at 100,000 listings.
 */
export async function lexemesOf(em: EntityManager, q: string): Promise<{ lex: string; fixes: string[] | null }[]> {
  const { minLength, maxWords, fixesPerWord } = RANKING.typo;
  return em.execute<{ lex: string; fixes: string[] | null }[]>(
    `with l as (select distinct lex from unnest(tsvector_to_array(to_tsvector('english', ?))) lex),
          u as (select lex from l where length(lex) >= ${minLength}
                   and not exists (select 1 from search_lexicon w where w.word = l.lex)
                 order by lex limit ${maxWords})
     select l.lex, case when u.lex is null then null
                        else (select array_agg(f.word) from (select word from search_lexicon where word % u.lex
                               order by similarity(word, u.lex) desc, word limit ${fixesPerWord}) f) end as fixes
       from l left join u on u.lex = l.lex`,
    [q],
  );
}

/** A lexeme quoted for a tsquery (quotes and backslashes doubled). */
const quoteLexeme = (l: string) => `'${l.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** A tsquery matching any of these lexemes, or null when there are none. */
export function tsOr(lexemes: readonly string[]): string | null {
  if (!lexemes.length) return null;
  return lexemes.map(quoteLexeme).join(' | ');
}
