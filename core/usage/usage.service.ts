/**
 * Usage history (GET /v1/usage, the get_usage tool): the gateway's metered calls of the caller's org, newest first,
 * filtered by time and key, paginated, with totals for the whole filtered range.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import { addFilter } from '../db/sql.js';
import { ValidationError } from '../errors.js';
import { Pagination, pageInfo, type Page } from '../pagination.js';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` (a UTC day) or a full ISO 8601 timestamp with a zone. */
const Instant = z
  .string()
  .refine((v) => DATE_ONLY.test(v) || z.iso.datetime({ offset: true }).safeParse(v).success, {
    message: 'must be a date (YYYY-MM-DD) or an ISO 8601 timestamp with a time zone',
  })
  .refine((v) => !Number.isNaN(Date.parse(v)), 'is not a real date');

export const UsageQuery = Pagination.extend({
  from: Instant.optional(),
  to: Instant.optional(),
  key_id: z.string().max(40).optional(),
}).strict();
export type UsageQuery = z.infer<typeof UsageQuery>;

export interface UsageRecord {
  id: string;
  created_at: string;
  key_id: string;
  api_slug: string;
  endpoint_id: string | null;
  method: string;
  path: string;
  status: number;
  outcome: string;
  cost_cents: number;
  price_cents_effective: number;
  credit_applied_cents: number;
  billable_cents: number;
  latency_ms: number;
  request_id: string;
  idempotency_key: string | null;
}

export interface UsagePage extends Page<UsageRecord> {
  range: { from: string; to: string };
  summary: { calls: number; successful_calls: number; cost_cents: number; billable_cents: number };
}

type MoneyField = 'cost_cents' | 'price_cents_effective' | 'credit_applied_cents' | 'billable_cents';
/** A raw row: bigint money arrives as text, and so does timestamptz (MikroORM's pg type parsers). */
type Row = Omit<UsageRecord, MoneyField> & Record<MoneyField, string>;

export class UsageService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
  ) {}

  /** Resolve the half-open range [from, to): a date-only `to` includes that whole UTC day. */
  resolveRange(query: Pick<UsageQuery, 'from' | 'to'>): { from: Date; to: Date } {
    const to = query.to
      ? DATE_ONLY.test(query.to)
        ? new Date(Date.parse(`${query.to}T00:00:00Z`) + DAY_MS)
        : new Date(query.to)
      : this.clock.now();
    const from = query.from
      ? new Date(DATE_ONLY.test(query.from) ? `${query.from}T00:00:00Z` : query.from)
      : new Date(to.getTime() - 30 * DAY_MS);
    if (from >= to)
      throw new ValidationError('`from` must be before `to`.', {
        details: { from: from.toISOString(), to: to.toISOString() },
      });
    if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS) {
      throw new ValidationError(`The range may span at most ${MAX_RANGE_DAYS} days.`);
    }
    return { from, to };
  }

  /** GET /v1/usage and get_usage: `search` over the query's range and key. */
  async list(principal: Principal, query: UsageQuery): Promise<UsagePage> {
    const { from, to } = this.resolveRange(query);
    return this.search(principal, { from, to, keyId: query.key_id }, query);
  }

  /** One page of calls (newest first) and the totals of the whole filtered range. */
  async search(principal: Principal, f: UsageFilter, page: { limit: number; offset: number }): Promise<UsagePage> {
    const em = this.orm.em.fork();
    const { where, params } = filterSql(principal, f);
    const rows = await em.execute<Row[]>(
      `select ${RECORD_COLUMNS} from usage_events where ${where} order by created_at desc, id desc limit ? offset ?`,
      [...params, page.limit, page.offset],
    );
    const [totals] = await em.execute<{ calls: string; ok: string; cost: string; billable: string }[]>(
      `select count(*) as calls, count(*) filter (where outcome = 'success') as ok,
              coalesce(sum(cost_cents), 0) as cost, coalesce(sum(billable_cents), 0) as billable
         from usage_events where ${where}`,
      params,
    );
    const total = Number(totals?.calls ?? 0);
    return {
      items: rows.map(toRecord),
      pagination: pageInfo(page.limit, page.offset, rows.length, total),
      range: { from: f.from.toISOString(), to: f.to.toISOString() },
      summary: {
        calls: total,
        successful_calls: Number(totals?.ok ?? 0),
        cost_cents: Number(totals?.cost ?? 0),
        billable_cents: Number(totals?.billable ?? 0),
      },
    };
  }

  /** Calls, failures and spend per UTC day of [from, to), every day present (0 when there were no calls). */
  async daily(principal: Principal, f: UsageFilter): Promise<UsageDay[]> {
    const { where, params } = filterSql(principal, f);
    const rows = await this.orm.em.fork().execute<{ day: string; calls: string; failed: string; cost: string }[]>(
      `with days as (
         select to_char(d, 'YYYY-MM-DD') as day
           from generate_series(date_trunc('day', ?::timestamptz at time zone 'UTC'),
                                date_trunc('day', (?::timestamptz - interval '1 microsecond') at time zone 'UTC'),
                                interval '1 day') as d
       ), used as (
         select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*) as calls,
                count(*) filter (where outcome = 'failed') as failed,
                coalesce(sum(cost_cents) filter (where outcome = 'success'), 0) as cost
           from usage_events where ${where} group by 1
       )
       select days.day, coalesce(used.calls, 0) as calls, coalesce(used.failed, 0) as failed,
              coalesce(used.cost, 0) as cost
         from days left join used on used.day = days.day order by days.day`,
      [f.from, f.to, ...params],
    );
    return rows.map((r) => ({
      day: r.day,
      calls: Number(r.calls),
      failed: Number(r.failed),
      cost_cents: Number(r.cost),
    }));
  }

  /** Every filtered call, oldest first, in batches (keyset on created_at and id): for the CSV export. */
  async *walk(principal: Principal, f: UsageFilter, batch = 2_000): AsyncGenerator<UsageRecord[]> {
    const { where, params } = filterSql(principal, f);
    let after: { at: string; id: string } | undefined;
    for (;;) {
      const rows = await this.orm.em
        .fork()
        .execute<Row[]>(
          `select ${RECORD_COLUMNS} from usage_events where ${where}${after ? ' and (created_at, id) > (?::timestamptz, ?)' : ''} order by created_at, id limit ?`,
          [...params, ...(after ? [after.at, after.id] : []), batch],
        );
      if (rows.length === 0) return;
      yield rows.map(toRecord);
      if (rows.length < batch) return;
      // The raw timestamp (microseconds): an ISO string in milliseconds would repeat rows of the same millisecond.
      const last = rows[rows.length - 1]!;
      after = { at: String(last.created_at), id: last.id };
    }
  }
}

/** The console's usage filter (api/pages/console): `list`'s, plus an API slug and an outcome. */
export interface UsageFilter {
  from: Date;
  to: Date;
  keyId?: string;
  apiSlug?: string;
  outcome?: 'success' | 'failed';
}

export interface UsageDay {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  calls: number;
  failed: number;
  /** Successful calls' cost (what the org was charged for them). */
  cost_cents: number;
}

const RECORD_COLUMNS = `id, created_at, key_id, api_slug, endpoint_id, method, path, status, outcome, cost_cents,
  price_cents_effective, credit_applied_cents, billable_cents, latency_ms, request_id, idempotency_key`;

function toRecord(r: Row): UsageRecord {
  return {
    ...r,
    created_at: new Date(r.created_at).toISOString(),
    cost_cents: Number(r.cost_cents),
    price_cents_effective: Number(r.price_cents_effective),
    credit_applied_cents: Number(r.credit_applied_cents),
    billable_cents: Number(r.billable_cents),
  };
}

function filterSql(principal: Principal, f: UsageFilter): { where: string; params: unknown[] } {
  const filters = ['org_id = ?', 'created_at >= ?', 'created_at < ?'];
  const params: unknown[] = [principal.orgId, f.from, f.to];
  addFilter(filters, params, 'key_id = ?', f.keyId);
  addFilter(filters, params, 'api_slug = ?', f.apiSlug);
  addFilter(filters, params, 'outcome = ?', f.outcome);
  return { where: filters.join(' and '), params };
}
