/**
 * The body of `npm run catalog:import -- [FILE]` (scripts/catalog-import.ts): applies pending migrations, imports the
 * directory file (default data/public-apis/public-apis.json) and prints the report as JSON on stdout. The script runs
 * it on its own connection; the running marketplace with its own services when the script hands it over its operator
 * socket (platform/operators/ops-server.ts). FILE is resolved by the caller (the running process has its own cwd).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { migrateUp } from '../../db/mikro-orm.config.js';
import type { DirectoryImporter } from '../../core/catalog/public-apis/public-apis-import.js';
import { println, type CommandIO } from './command-io.js';

export interface CatalogImportDeps {
  orm: MikroORM;
  importer: DirectoryImporter;
}

export async function runCatalogImport(
  file: string | undefined,
  deps: CatalogImportDeps,
  io: CommandIO,
): Promise<void> {
  await migrateUp(deps.orm);
  const started = Date.now();
  const report = await (file ? deps.importer.importFile(file) : deps.importer.importFile());
  println(io.stdout, JSON.stringify({ ...report, ms: Date.now() - started }, null, 2));
}
