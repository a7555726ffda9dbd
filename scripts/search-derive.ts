/**
 * `npm run search:derive -- [DIRECTORY_FILE]`: learns the derived-enrichment model (issue 33) from the enriched
 * directory (data/public-apis/public-apis.json and its enrichment/) with the default embedder, and writes it to
 * core/catalog/search/derived-model.json, which the search index applies to every listing without examples. Run it
 * after the enrichment changes (and commit the file); a changed model reaches listings when they are indexed again
 * (bump INDEX_FORMAT in search-index.ts to re-index them all at the next start).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { directoryTraining } from '../core/catalog/public-apis/directory-training.js';
import { learnModel } from '../core/catalog/search/derived-model.js';
import { WordVectorEmbedder } from '../core/catalog/search/embedder.js';

const out = path.join(import.meta.dirname, '..', 'core', 'catalog', 'search', 'derived-model.json');

async function main(): Promise<void> {
  const file = process.argv[2] ? path.resolve(process.argv[2]) : undefined;
  const { training } = await directoryTraining(file);
  const model = await learnModel(training, new WordVectorEmbedder());
  await writeFile(out, `${JSON.stringify(model)}\n`);
  process.stdout.write(
    `${path.relative(process.cwd(), out)}: ${model.entries} entries, ${Object.keys(model.categories).length} ` +
      `categories, ${Object.keys(model.words).length} words, ${model.clusters?.length ?? 0} question clusters\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
