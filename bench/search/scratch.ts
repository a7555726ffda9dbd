/**
 * A scratch catalog for the search evaluation and benchmark: a throwaway database (a new database on the server of
 * DATABASE_URL, dropped afterwards; or embedded PGlite in a temporary directory when DATABASE_URL is unset), migrated,
 * with the directory imported and a SearchService over it. For the cold part of the evaluation, `enrichedOnly` keeps
 * the enrichment of some entries only, and `derivation` replaces the shipped derivation model (null: none).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { withPgClient } from '../../test/helpers/db.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import { readFile } from 'node:fs/promises';
import {
  DEFAULT_DIRECTORY_FILE,
  DirectoryImporter,
  loadEnrichment,
  type ImportReport,
} from '../../core/catalog/public-apis/public-apis-import.js';
import { DirectoryFile, entryKey, type DirectoryEntry } from '../../core/catalog/public-apis/public-apis.js';
import type { DerivationModel } from '../../core/catalog/search/derived-enrichment.js';
import { createEmbedder, type Embedder } from '../../core/catalog/search/embedder.js';
import { ScoresReader } from '../../core/catalog/search/scores.js';
import { SearchIndex } from '../../core/catalog/search/search-index.js';
import { SearchService } from '../../core/catalog/search/search.service.js';
import { loadConfig } from '../../core/config.js';
import { createLogger, type Logger } from '../../core/logger.js';
import { startEmbeddedDatabase } from '../../db/embedded.js';
import { initOrm, migrateUp } from '../../db/mikro-orm.config.js';

export interface Scratch {
  backend: 'postgres' | 'pglite';
  url: string;
  orm: MikroORM;
  embedder: Embedder;
  index: SearchIndex;
  search: SearchService;
  importer: DirectoryImporter;
  logger: Logger;
  report: ImportReport;
  close(): Promise<void>;
}

export interface ScratchOptions {
  file?: string;
  poolMax?: number;
  /** Keep the enrichment of these entries only (the others are imported as listings without it). */
  enrichedOnly?: (entry: DirectoryEntry, index: number) => boolean;
  /** The derivation model of the index (default: the shipped one; null: none). */
  derivation?: DerivationModel | null;
}

/** Imports the directory, with the enrichment of the kept entries only when `enrichedOnly` is given. */
async function importDirectory(importer: DirectoryImporter, opts: ScratchOptions): Promise<ImportReport> {
  const file = opts.file ?? DEFAULT_DIRECTORY_FILE;
  if (!opts.enrichedOnly) return importer.importFile(file);
  const entries = DirectoryFile.parse(JSON.parse(await readFile(file, 'utf8')));
  const enrichment = await loadEnrichment(path.join(path.dirname(file), 'enrichment'));
  const kept = new Set(entries.filter(opts.enrichedOnly).map((e) => entryKey(e)));
  const byKey = new Map([...enrichment.byKey].filter(([k]) => kept.has(k)));
  return importer.importEntries(entries, { file, enrichment: { files: enrichment.files, byKey } });
}

export async function scratchCatalog(opts: ScratchOptions = {}): Promise<Scratch> {
  const config = loadConfig();
  const logger = createLogger({ level: 'warn', name: 'search-bench' });
  let url: string;
  let drop: () => Promise<void>;
  if (config.database.kind === 'postgres') {
    const server = new URL(config.database.url);
    const name = `mp_search_scratch_${randomBytes(4).toString('hex')}`;
    const admin = new URL(server);
    admin.pathname = '/postgres';
    const run = (sql: string) =>
      withPgClient(admin.toString(), async (c) => {
        await c.query(sql);
      });
    await run(`create database "${name}"`);
    const target = new URL(server);
    target.pathname = `/${name}`;
    url = target.toString();
    drop = () => run(`drop database if exists "${name}" with (force)`);
  } else {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-search-'));
    const db = await startEmbeddedDatabase(path.join(dir, 'pglite'));
    url = db.url;
    drop = async () => {
      await db.stop();
      await rm(dir, { recursive: true, force: true });
    };
  }
  const orm = await initOrm({ url, poolMax: config.database.kind === 'postgres' ? (opts.poolMax ?? 4) : 1 });
  try {
    await migrateUp(orm);
    const embedder = createEmbedder(config.search);
    const index = new SearchIndex({ orm, embedder, derivation: opts.derivation });
    const importer = new DirectoryImporter({ orm, index, logger });
    const report = await importDirectory(importer, opts);
    const search = new SearchService({ orm, embedder, index, scores: new ScoresReader(orm), logger });
    return {
      backend: config.database.kind,
      url,
      orm,
      embedder,
      index,
      search,
      importer,
      logger,
      report,
      async close() {
        await orm.close(true);
        await drop();
      },
    };
  } catch (err) {
    await orm.close(true);
    await drop();
    throw err;
  }
}
