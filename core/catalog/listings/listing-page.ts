/**
 * The storefront's listing page in one read of the listing (issue 31: the page is a p95 ≤ 50 ms target at 10,000
 * listings): the detail, the endpoints' schemas, the stats of each window, the score history and the boards' ranks,
 * read in parallel for the listing `ListingsService.page` found, where the JSON routes read it once each.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { IApi } from '../../../db/entities/index.js';
import { historyFor, ranksFor } from '../rollups/rollup-reads.js';
import type { HistoryPointView, ListingStats, RankView } from '../rollups/rollups.schemas.js';
import { statsFor, type StatsWindow } from '../rollups/stats.js';
import type { ListingDetail, ListingSchemaView } from './listings.schemas.js';

export const PAGE_WINDOWS: readonly StatsWindow[] = ['24h', '7d', '30d'];
export const PAGE_HISTORY_DAYS = 30;

export interface ListingPage {
  detail: ListingDetail;
  schema: ListingSchemaView;
  /** One per PAGE_WINDOWS, in that order. */
  stats: ListingStats[];
  history: HistoryPointView[];
  ranks: RankView[];
}

interface Readers {
  detailOf(em: EntityManager, api: IApi): Promise<ListingDetail>;
  schemaOf(em: EntityManager, api: IApi): Promise<ListingSchemaView>;
}

export async function listingPage(readers: Readers, em: EntityManager, api: IApi, now: Date): Promise<ListingPage> {
  const [detail, schema, history, ranks, ...stats] = await Promise.all([
    readers.detailOf(em, api),
    readers.schemaOf(em, api),
    historyFor(em, api.id, PAGE_HISTORY_DAYS),
    ranksFor(em, api.id, api.category ?? null),
    ...PAGE_WINDOWS.map((w) => statsFor(em, api.id, w, now)),
  ]);
  return { detail, schema, history, ranks, stats };
}
