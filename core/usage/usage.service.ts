/**
 * Usage history (GET /v1/usage, the get_usage tool): the gateway's metered calls of the caller's org, newest first,
 * filtered by time and key, paginated, with totals for the whole filtered range.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
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

  async list(principal: Principal, query: UsageQuery): Promise<UsagePage> {
    const { from, to } = this.resolveRange(query);
    const em = this.orm.em.fork();
    const filters = ['org_id = ?', 'created_at >= ?', 'created_at < ?'];
    const params: unknown[] = [principal.orgId, from, to];
    if (query.key_id) {
      filters.push('key_id = ?');
      params.push(query.key_id);
    }
    const where = filters.join(' and ');
    const rows = await em.execute<Row[]>(
      `select id, created_at, key_id, api_slug, endpoint_id, method, path, status, outcome, cost_cents,
              price_cents_effective, credit_applied_cents, billable_cents, latency_ms, request_id, idempotency_key
         from usage_events where ${where}
        order by created_at desc, id desc limit ? offset ?`,
      [...params, query.limit, query.offset],
    );
    const [totals] = await em.execute<{ calls: string; ok: string; cost: string; billable: string }[]>(
      `select count(*) as calls, count(*) filter (where outcome = 'success') as ok,
              coalesce(sum(cost_cents), 0) as cost, coalesce(sum(billable_cents), 0) as billable
         from usage_events where ${where}`,
      params,
    );
    const total = Number(totals?.calls ?? 0);
    return {
      items: rows.map((r) => ({
        ...r,
        created_at: new Date(r.created_at).toISOString(),
        cost_cents: Number(r.cost_cents),
        price_cents_effective: Number(r.price_cents_effective),
        credit_applied_cents: Number(r.credit_applied_cents),
        billable_cents: Number(r.billable_cents),
      })),
      pagination: pageInfo(query.limit, query.offset, rows.length, total),
      range: { from: from.toISOString(), to: to.toISOString() },
      summary: {
        calls: total,
        successful_calls: Number(totals?.ok ?? 0),
        cost_cents: Number(totals?.cost ?? 0),
        billable_cents: Number(totals?.billable ?? 0),
      },
    };
  }
}
