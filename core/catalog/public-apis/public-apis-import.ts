/**
 * `npm run catalog:import -- [FILE]`: load a public directory (data/public-apis/public-apis.json format) into the
 * catalog. A directory provider org (flagged `orgs.directory`; "Public APIs directory", its licence and source on its
 * profile) owns one live listing per entry (`source: 'directory'`, no endpoints: searchable, not callable until
 * claimed). Enrichment files beside the directory (`enrichment/*.json`: `{ "<name>|<url>|<category>": { intents, synonyms } }`) add the
 * listing's `examples` and search synonyms. Re-running updates in place: rows are matched by slug, unchanged rows
 * are not written, and only changed listings are re-indexed. Works on Postgres and on PGlite (plain SQL, one
 * statement per batch).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../logger.js';
import { newId } from '../../ids.js';
import {
  DirectoryFile,
  EnrichmentEntry,
  categorySlug,
  directorySlugs,
  directoryTags,
  entryKey,
  type DirectoryEntry,
} from './public-apis.js';
import { DIRECTORY_SLUG } from '../../profiles/reserved-slugs.js';
import type { SearchIndex } from '../search/search-index.js';

export const DEFAULT_DIRECTORY_FILE = path.join(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'data',
  'public-apis',
  'public-apis.json',
);
export const DIRECTORY_PROFILE = {
  slug: DIRECTORY_SLUG,
  displayName: 'Public APIs directory',
  website: 'https://github.com/public-apis/public-apis',
  bio:
    'Listings imported from the public-apis directory (https://github.com/public-apis/public-apis), MIT License, ' +
    'Copyright (c) 2022 public-apis. Directory listings are searchable but not callable until their provider claims them.',
};

export interface ImportReport {
  file: string;
  org_id: string;
  entries: number;
  inserted: number;
  updated: number;
  unchanged: number;
  skipped: { name: string; slug: string; reason: string }[];
  enrichment: { files: string[]; matched: number };
  indexed: number;
}

interface Enrichment {
  intents: string[];
  synonyms: string[];
}

/** Every `enrichment/*.json` beside the directory file, merged; unreadable or malformed files are reported, skipped. */
export async function loadEnrichment(
  dir: string,
  logger?: Logger,
): Promise<{ files: string[]; byKey: Map<string, Enrichment> }> {
  const byKey = new Map<string, Enrichment>();
  const files: string[] = [];
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    let data: unknown;
    try {
      data = JSON.parse(await readFile(path.join(dir, name), 'utf8'));
    } catch (err) {
      logger?.warn({ file: name, err: String(err) }, 'enrichment file skipped: not JSON');
      continue;
    }
    if (!data || typeof data !== 'object' || Array.isArray(data)) continue;
    files.push(name);
    for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
      const parsed = EnrichmentEntry.safeParse(value);
      if (!parsed.success) continue;
      const cur = byKey.get(key) ?? { intents: [], synonyms: [] };
      for (const i of parsed.data.intents ?? []) if (!cur.intents.includes(i)) cur.intents.push(i);
      for (const s of parsed.data.synonyms ?? []) if (!cur.synonyms.includes(s)) cur.synonyms.push(s);
      byKey.set(key, cur);
    }
  }
  return { files, byKey };
}

function enrichmentFor(byKey: Map<string, Enrichment>, e: DirectoryEntry): Enrichment | undefined {
  return byKey.get(entryKey(e)) ?? byKey.get(`${e.name}|${e.url}`) ?? byKey.get(`${e.name.trim()}|${e.url.trim()}`);
}

const cut = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);

/** Inserts or updates directory listings (never a provider's listing with the slug), saying which rows it inserted. */
const UPSERT_DIRECTORY_APIS_SQL = `insert into apis (id, org_id, name, slug, summary, tags, category, source, examples, search_terms, base_url,
                           docs_url, status, published_at, created_at, updated_at)
         select t.id, ?, t.name, t.slug, t.summary,
                array(select jsonb_array_elements_text(t.tags)), t.category, 'directory',
                array(select jsonb_array_elements_text(t.examples)), array(select jsonb_array_elements_text(t.search_terms)),
                t.url, t.url, 'live', now(), now(), now()
           from jsonb_to_recordset(?::jsonb)
                as t(id text, slug text, name text, summary text, tags jsonb, category text, examples jsonb,
                     search_terms jsonb, url text)
         on conflict (slug) do update
            set name = excluded.name, summary = excluded.summary, tags = excluded.tags, category = excluded.category,
                examples = excluded.examples, search_terms = excluded.search_terms, base_url = excluded.base_url,
                docs_url = excluded.docs_url, updated_at = now()
          where apis.org_id = excluded.org_id and apis.source = 'directory'
            and (apis.name, apis.summary, apis.tags, apis.category, apis.examples, apis.search_terms, apis.base_url,
                 apis.docs_url)
                is distinct from
                (excluded.name, excluded.summary, excluded.tags, excluded.category, excluded.examples,
                 excluded.search_terms, excluded.base_url, excluded.docs_url)
         returning id, slug, (xmax = 0) as inserted`;

export class DirectoryImporter {
  constructor(private readonly deps: { orm: MikroORM; index: SearchIndex; logger: Logger }) {}

  /**
   * The directory provider's org id: the one org flagged `directory` (never found by its profile slug, which another
   * org could hold), created with its profile on first use. The profile takes the reserved slug `public-apis` unless
   * an org already holds it (one that took it before it was reserved): the directory's profile then has no slug, and
   * the holder gets nothing of the directory either way.
   */
  async ensureOrg(): Promise<string> {
    const em = this.deps.orm.em.fork();
    const found = async () => (await em.execute<{ id: string }[]>('select id from orgs where directory = true'))[0]?.id;
    const existing = await found();
    if (existing) return existing;
    const orgId = newId('org');
    try {
      await em.transactional(async (tem) => {
        await tem.execute(`insert into orgs (id, kind, name, directory) values (?, 'standard', ?, true)`, [
          orgId,
          DIRECTORY_PROFILE.displayName,
        ]);
        const [taken] = await tem.execute<{ org_id: string }[]>('select org_id from profiles where slug = ?', [
          DIRECTORY_PROFILE.slug,
        ]);
        if (taken) {
          this.deps.logger.warn(
            { holder_org_id: taken.org_id, slug: DIRECTORY_PROFILE.slug },
            'directory import: another org holds the directory slug; the directory profile is created without it',
          );
        }
        await tem.execute(`insert into profiles (org_id, display_name, slug, bio, website) values (?, ?, ?, ?, ?)`, [
          orgId,
          DIRECTORY_PROFILE.displayName,
          taken ? null : DIRECTORY_PROFILE.slug,
          DIRECTORY_PROFILE.bio,
          DIRECTORY_PROFILE.website,
        ]);
      });
    } catch (err) {
      // Another import created the directory org at the same moment (orgs_directory_uniq): use that one.
      const winner = await found();
      if (winner) return winner;
      throw err;
    }
    return orgId;
  }

  async importFile(file = DEFAULT_DIRECTORY_FILE): Promise<ImportReport> {
    const entries = DirectoryFile.parse(JSON.parse(await readFile(file, 'utf8')));
    const enrichment = await loadEnrichment(path.join(path.dirname(file), 'enrichment'), this.deps.logger);
    return this.importEntries(entries, { file, enrichment });
  }

  async importEntries(
    entries: DirectoryEntry[],
    opts: { file?: string; enrichment?: { files: string[]; byKey: Map<string, Enrichment> } } = {},
  ): Promise<ImportReport> {
    const { orm } = this.deps;
    const orgId = await this.ensureOrg();
    const em = orm.em.fork();
    const byKey = opts.enrichment?.byKey ?? new Map<string, Enrichment>();
    const slugs = directorySlugs(entries);

    // Categories the taxonomy does not have yet (another directory file): add them, named as the directory does.
    const cats = [...new Map(entries.map((e) => [categorySlug(e.category), e.category])).entries()];
    await em.execute(
      `insert into categories (slug, name) select t.slug, t.name from jsonb_to_recordset(?::jsonb) as t(slug text, name text)
       on conflict (slug) do nothing`,
      [JSON.stringify(cats.map(([slug, name]) => ({ slug, name: cut(name, 100) })))],
    );

    const { rows, matched } = directoryRows(entries, slugs, byKey);

    const report: ImportReport = {
      file: opts.file ?? '(entries)',
      org_id: orgId,
      entries: entries.length,
      inserted: 0,
      updated: 0,
      unchanged: 0,
      skipped: [],
      enrichment: { files: opts.enrichment?.files ?? [], matched },
      indexed: 0,
    };
    const changed: string[] = [];
    for (let i = 0; i < rows.length; i += 500) {
      const batch = rows.slice(i, i + 500);
      const res = await em.execute<{ id: string; slug: string; inserted: boolean }[]>(UPSERT_DIRECTORY_APIS_SQL, [
        orgId,
        JSON.stringify(batch),
      ]);
      const written = new Set(res.map((r) => r.slug));
      for (const r of res) {
        changed.push(r.id);
        if (r.inserted) report.inserted++;
        else report.updated++;
      }
      const rest = batch.filter((r) => !written.has(r.slug));
      if (rest.length) {
        const owners = await em.execute<{ slug: string; org_id: string; source: string }[]>(
          `select slug, org_id, source from apis where slug in (select jsonb_array_elements_text(?::jsonb))`,
          [JSON.stringify(rest.map((r) => r.slug))],
        );
        const owner = new Map(owners.map((o) => [o.slug, o]));
        for (const r of rest) {
          const o = owner.get(r.slug);
          if (o && o.org_id === orgId && o.source === 'directory') report.unchanged++;
          else report.skipped.push({ name: r.name, slug: r.slug, reason: 'slug taken by a provider listing' });
        }
      }
    }
    // Changed listings, plus any directory listing whose index row is missing or from another embedder.
    const stale = await this.deps.index.stale();
    report.indexed = await this.deps.index.index([...new Set([...changed, ...stale])]);
    // A bulk load changes the tables' statistics: without fresh ones the planner walks every listing instead of
    // using the full-text and trigram indexes (measured: 165 ms → a few ms at 10k listings).
    if (report.inserted > 100) await em.execute('analyze apis, api_search');
    return report;
  }

  /** Whether the catalog has no live listing yet (the demo imports only then). */
  async catalogEmpty(): Promise<boolean> {
    const [row] = await this.deps.orm.em
      .fork()
      .execute<{ n: string }[]>(`select count(*) as n from apis where status = 'live'`);
    return Number(row?.n ?? 0) === 0;
  }
}

/** The apis rows of a directory file's entries (enrichment, when an entry has some, gives examples and search terms). */
function directoryRows(entries: DirectoryEntry[], slugs: string[], byKey: Map<string, Enrichment>) {
  let matched = 0;
  const rows = entries.map((e, i) => {
    const extra = enrichmentFor(byKey, e);
    if (extra) matched++;
    return {
      id: newId('api'),
      slug: slugs[i]!,
      name: cut(e.name, 100),
      summary: cut(e.description || e.name, 300),
      tags: directoryTags(e),
      category: categorySlug(e.category),
      examples: (extra?.intents ?? []).slice(0, 50).map((s) => cut(s, 300)),
      search_terms: (extra?.synonyms ?? []).slice(0, 100).map((s) => cut(s, 100)),
      url: e.url,
    };
  });
  return { rows, matched };
}
