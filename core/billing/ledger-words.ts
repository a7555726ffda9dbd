/**
 * Ledger rows named in words (issue 31, section 5), for the console's billing history and the provider's analytics:
 * "12 paid calls on Weather API", "Earnings from 12 paid calls on Weather API", "Marketplace fee on 12 paid calls on
 * Weather API", never `usage_batch:ubt_…`. A row's reference names its usage batch (or, for a call booked before
 * batches, its usage event); the batch's calls are its usage events (`batch_id`, within the batch's first and last
 * instants, so each partition is read by its (org, created_at) index). A provider's rows count only the calls of its
 * own APIs in the batch. When the events are gone (retired partitions) the batch's own call count is used.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { LedgerKind } from '../../db/entities/index.js';

/** What a row of history needs to be named. */
export interface WordedRow {
  id: string;
  kind: LedgerKind;
  reference: string | null;
  memo: string | null;
}

const KIND_WORDS: Record<LedgerKind, string> = {
  grant: 'Credit grant',
  purchase: 'Credits purchased',
  auto_reload: 'Auto-reload',
  usage: 'Paid calls',
  refund: 'Refund',
  adjustment: 'Adjustment',
  provider_earning: 'Earnings from paid calls',
  platform_fee: 'Marketplace fee',
  payout: 'Payout',
  chargeback: 'Chargeback',
};

interface CallCount {
  source: string;
  provider: string | null;
  api: string;
  calls: number;
}

const plural = (n: number) => `${n.toLocaleString('en-US')} paid call${n === 1 ? '' : 's'}`;

/** `12 paid calls on Weather API`; over several APIs `14 paid calls: Weather API (12), Maps (2)`. */
function callsPhrase(counts: readonly CallCount[], fallback: number | undefined): string {
  const total = counts.reduce((s, c) => s + c.calls, 0);
  if (total === 0) return fallback ? plural(fallback) : 'paid calls';
  if (counts.length === 1) return `${plural(total)} on ${counts[0]!.api}`;
  const sorted = [...counts].sort((a, b) => b.calls - a.calls || a.api.localeCompare(b.api));
  return `${plural(total)}: ${sorted.map((c) => `${c.api} (${c.calls.toLocaleString('en-US')})`).join(', ')}`;
}

/** The calls per API of the batches (and single calls) the rows reference, and each batch's own call count. */
async function callCounts(em: EntityManager, batchIds: string[], usageIds: string[]) {
  const counts: CallCount[] = [];
  const batchCalls = new Map<string, number>();
  if (batchIds.length) {
    const rows = await em.execute<{ source: string; provider: string | null; api: string; calls: string }[]>(
      `select b.id as source, a.org_id as provider, coalesce(a.name, u.api_slug) as api, count(*) as calls
         from usage_batches b
         join usage_events u on u.org_id = b.org_id and u.batch_id = b.id
                            and u.created_at >= b.first_at and u.created_at <= b.last_at
         left join apis a on a.id = u.api_id
        where b.id in (${batchIds.map(() => '?').join(',')})
        group by b.id, a.org_id, coalesce(a.name, u.api_slug)`,
      batchIds,
    );
    counts.push(...rows.map((r) => ({ ...r, calls: Number(r.calls) })));
    const own = await em.execute<{ id: string; calls: number }[]>(
      `select id, calls from usage_batches where id in (${batchIds.map(() => '?').join(',')})`,
      batchIds,
    );
    for (const b of own) batchCalls.set(b.id, Number(b.calls));
  }
  if (usageIds.length) {
    const rows = await em.execute<{ source: string; provider: string | null; api: string }[]>(
      `select u.id as source, a.org_id as provider, coalesce(a.name, u.api_slug) as api
         from usage_events u left join apis a on a.id = u.api_id
        where u.id in (${usageIds.map(() => '?').join(',')})`,
      usageIds,
    );
    counts.push(...rows.map((r) => ({ ...r, calls: 1 })));
  }
  return { counts, batchCalls };
}

const referenced = (rows: readonly WordedRow[], prefix: string) => [
  ...new Set(
    rows
      .filter(
        (r) =>
          r.reference?.startsWith(prefix) &&
          (r.kind === 'usage' || r.kind === 'provider_earning' || r.kind === 'platform_fee'),
      )
      .map((r) => r.reference!.slice(prefix.length)),
  ),
];

/** Each row's description for `orgId`'s history, by row id. */
export async function describeLedgerRows(
  em: EntityManager,
  orgId: string,
  rows: readonly WordedRow[],
): Promise<Map<string, string>> {
  const { counts, batchCalls } = await callCounts(em, referenced(rows, 'usage_batch:'), referenced(rows, 'usage:'));
  const out = new Map<string, string>();
  for (const row of rows) {
    const source = row.reference?.replace(/^usage(_batch)?:/, '') ?? '';
    const mine = counts.filter((c) => c.source === source);
    const own = mine.filter((c) => c.provider === orgId);
    // Without the events (retired), a consumer's row still has its batch's call count; a provider's share does not.
    const fallback = row.reference?.startsWith('usage:') ? 1 : batchCalls.get(source);
    switch (row.kind) {
      case 'usage':
        out.set(row.id, row.reference ? capitalize(callsPhrase(mine, fallback)) : (row.memo ?? KIND_WORDS.usage));
        break;
      case 'provider_earning':
        out.set(row.id, `Earnings from ${callsPhrase(own, undefined)}`);
        break;
      case 'platform_fee':
        out.set(row.id, `Marketplace fee on ${callsPhrase(own, undefined)}`);
        break;
      default:
        out.set(row.id, row.memo ?? KIND_WORDS[row.kind]);
    }
  }
  return out;
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** A row as history orders it: its instant, its amount and the balance it produced. */
export interface ChainedRow {
  created_at: string;
  amount_cents: string | number;
  balance_after_cents: string | number;
}

/**
 * Newest first, and within one instant in the order the rows were written: rows booked together (an earning and its
 * fee, folded in one statement) share their `created_at`, and their ids (random within a millisecond) do not say
 * which came first, but their balances do: each row's balance before (after − amount) is the next older row's after.
 * A group whose balances do not chain (two rows of equal amounts) keeps the order it came in.
 */
export function chainOrder<T extends ChainedRow>(rows: readonly T[]): T[] {
  const out: T[] = [];
  for (let i = 0; i < rows.length;) {
    let j = i + 1;
    while (j < rows.length && rows[j]!.created_at === rows[i]!.created_at) j++;
    out.push(...chainGroup(rows.slice(i, j)));
    i = j;
  }
  return out;
}

function chainGroup<T extends ChainedRow>(group: T[]): T[] {
  if (group.length < 2) return group;
  const before = (r: T) => Number(r.balance_after_cents) - Number(r.amount_cents);
  const after = (r: T) => Number(r.balance_after_cents);
  const newest = group.filter((r) => !group.some((o) => o !== r && before(o) === after(r)));
  if (newest.length !== 1) return group;
  const chain = [newest[0]!];
  while (chain.length < group.length) {
    const last = chain.at(-1)!;
    const next = group.filter((r) => !chain.includes(r) && after(r) === before(last));
    if (next.length !== 1) return group;
    chain.push(next[0]!);
  }
  return chain;
}
