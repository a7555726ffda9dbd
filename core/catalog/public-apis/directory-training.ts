/**
 * The enriched directory as training data of the derived enrichment (issue 33, core/catalog/search/derived-model.ts):
 * each entry with hand-written enrichment as the learner reads it (its own text as the index embeds it, its category
 * slug, its intents and synonyms). `keep` selects entries by position (the cold evaluation keeps one half).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { TrainingEntry } from '../search/derived-enrichment.js';
import { splitName } from '../search/search-index.js';
import { DEFAULT_DIRECTORY_FILE, loadEnrichment } from './public-apis-import.js';
import { DirectoryFile, categorySlug, directorySlugs, entryKey, type DirectoryEntry } from './public-apis.js';

export interface DirectoryTraining {
  entries: DirectoryEntry[];
  slugs: string[];
  /** The enriched entries kept, as the learner reads them. */
  training: TrainingEntry[];
}

export async function directoryTraining(
  file = DEFAULT_DIRECTORY_FILE,
  keep: (index: number) => boolean = () => true,
): Promise<DirectoryTraining> {
  const entries = DirectoryFile.parse(JSON.parse(await readFile(file, 'utf8')));
  const { byKey } = await loadEnrichment(path.join(path.dirname(file), 'enrichment'));
  const training = entries.flatMap((e, i) => {
    const extra = byKey.get(entryKey(e)) ?? byKey.get(`${e.name}|${e.url}`);
    if (!keep(i) || !extra?.intents.length) return [];
    // The import's summary is the description (the name when empty); the index embeds name, summary, description.
    const summary = e.description || e.name;
    return [
      {
        text: [splitName(e.name), summary, e.category].join('. '),
        main: `${splitName(e.name)}. ${summary}. `,
        category: categorySlug(e.category),
        intents: extra.intents,
        synonyms: extra.synonyms,
      },
    ];
  });
  return { entries, slugs: directorySlugs(entries), training };
}
