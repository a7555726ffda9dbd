// The directory import and search on the embedded database (PGlite with its pg_trgm extension), as `npm start` on a
// fresh clone runs them: migrate, import, search by keyword, by typo and by paraphrase, and re-import changing nothing.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectoryImporter } from '../../../core/catalog/public-apis/public-apis-import.js';
import { WordVectorEmbedder } from '../../../core/catalog/search/embedder.js';
import { ScoresReader } from '../../../core/catalog/search/scores.js';
import { SearchIndex } from '../../../core/catalog/search/search-index.js';
import { SearchService } from '../../../core/catalog/search/search.service.js';
import { SearchQuery } from '../../../core/catalog/search/search.schemas.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../../db/embedded.js';
import { initOrm, migrateUp } from '../../../db/mikro-orm.config.js';
import { captureLogs } from '../../helpers/services.js';

describe('catalog search on the embedded database', () => {
  let dir: string;
  let db: EmbeddedDatabase;
  let orm: MikroORM;
  let importer: DirectoryImporter;
  let search: SearchService;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'svc-search-pglite-'));
    db = await startEmbeddedDatabase(path.join(dir, 'pglite'));
    orm = await initOrm({ url: db.url, poolMax: 1 });
    await migrateUp(orm);
    const logger = captureLogs().logger;
    const embedder = new WordVectorEmbedder();
    const index = new SearchIndex({ orm, embedder });
    importer = new DirectoryImporter({ orm, index, logger });
    search = new SearchService({ orm, embedder, index, scores: new ScoresReader(orm), logger });
  }, 120_000);
  afterAll(async () => {
    await orm?.close(true);
    await db?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('imports the directory, finds listings three ways, and a re-run changes nothing', async () => {
    const first = await importer.importFile();
    expect(first).toMatchObject({ inserted: 1706, indexed: 1706, skipped: [] });

    const top = async (q: string) =>
      (await search.search(SearchQuery.parse({ q, limit: 10 }))).items.map((i) => `${i.category?.slug}:${i.slug}`);
    const weather = await top('weather forecast');
    expect(weather.filter((s) => s.startsWith('weather:')).length, weather.join(' ')).toBeGreaterThanOrEqual(7);
    const typo = await top('wether forcast');
    expect(typo.filter((s) => s.startsWith('weather:')).length, typo.join(' ')).toBeGreaterThanOrEqual(3);
    const shortener = await top('make a long link shorter');
    // Most of the first results are URL shorteners (a file host that also shortens links may rank first).
    expect(shortener.filter((s) => s.startsWith('url-shorteners:')).length, shortener.join(' ')).toBeGreaterThanOrEqual(
      5,
    );

    const browse = await search.search(SearchQuery.parse({ category: 'weather' }));
    expect(browse.total).toBe(37);

    const again = await importer.importFile();
    expect(again).toMatchObject({ inserted: 0, updated: 0, unchanged: 1706, indexed: 0 });
  }, 120_000);
});
