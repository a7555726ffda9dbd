/**
 * `npm run catalog:import -- [FILE]`: load a public directory file (default data/public-apis/public-apis.json, with
 * data/public-apis/enrichment/*.json beside it) into DATABASE_URL or the embedded database, applying pending
 * migrations first. Prints the import report as JSON. The logic lives in core/catalog/public-apis/public-apis-import.ts (the
 * command's body in platform/operators/catalog-import-command.ts). While `npm start` runs on the embedded database, the
 * import runs inside it, handed over its operator socket (platform/operators/ops-client.ts).
 */
import path from 'node:path';
import { createEmbedder } from '../core/catalog/search/embedder.js';
import { DirectoryImporter } from '../core/catalog/public-apis/public-apis-import.js';
import { SearchIndex } from '../core/catalog/search/search-index.js';
import { ConfigError, loadConfig } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import { processIO } from '../platform/operators/command-io.js';
import { runCatalogImport } from '../platform/operators/catalog-import-command.js';
import { relayIfRunning } from '../platform/operators/ops-client.js';
import { startEmbeddedDatabase } from '../db/embedded.js';
import { initOrm } from '../db/mikro-orm.config.js';

async function main(): Promise<number> {
  const file = process.argv[2] ? path.resolve(process.argv[2]) : undefined;
  const config = loadConfig();
  const relayed = await relayIfRunning(config, 'catalog-import', file ? [file] : []);
  if (relayed !== undefined) return relayed;
  const logger = createLogger({ level: config.logLevel, name: 'catalog-import' });
  const embedded = config.database.kind === 'pglite' ? await startEmbeddedDatabase(config.database.dataDir) : undefined;
  const url = config.database.kind === 'postgres' ? config.database.url : embedded!.url;
  const orm = await initOrm({ url, poolMax: 1 });
  try {
    const importer = new DirectoryImporter({
      orm,
      index: new SearchIndex({ orm, embedder: createEmbedder(config.search) }),
      logger,
    });
    await runCatalogImport(file, { orm, importer }, processIO());
    return 0;
  } finally {
    await orm.close(true);
    await embedded?.stop();
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  },
);
