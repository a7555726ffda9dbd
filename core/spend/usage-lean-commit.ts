/**
 * The usage committer's lean statement (issue 32; docs/durability.md, "The write path"): Postgres writes only the
 * usage row per call. Everything else the books need per batch (per consumer org its usage batches and ledger rows,
 * per (batch, provider) an accrual, the orgs' balances, the keys' and their ancestors' spend, in all and on their latest day) is
 * aggregated here, in the process, from what the batch already carries: each paid call's price and the split
 * (credit applied, billable) the fast state's settle decided. The statement gets the calls as typed column arrays
 * (`unnest`, no per-row JSON) and a few aggregate rows, so its cost per call is the usage row's insert and little
 * else.
 *
 * It applies to the common case only (`leanEligible`): every paid call carries its split, and no call claims an
 * idempotency key or is booked past the fast state. Anything else goes through the full statement
 * (core/spend/usage-commit-statement.ts), which decides those per call. Both book exactly the same rows.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { crossesReloadThresholdSql } from '../money/money-rules.js';
import { splitPrice } from '../money/split.js';
import { newId } from '../ids.js';
import { DAY_SPENT_SET } from './usage-commit-statement.js';
import type { CallRecord, CommittedCall } from './usage-committer.js';

/** The slice of knex's pg client this file uses (a pooled node-postgres connection). */
interface PooledClient {
  acquireConnection(): Promise<{
    query<R>(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
  }>;
  releaseConnection(connection: unknown): Promise<void>;
}

/** Whether the lean statement can book this batch exactly as the full one would. */
export function leanEligible(batch: readonly { call: CallRecord }[]): boolean {
  for (const { call } of batch) {
    if (call.unsynced === true) return false;
    if (call.idempotencyKey !== null && call.outcome === 'success') return false;
    if (call.priceCents > 0 && (call.creditAppliedCents === undefined || call.billableCents === undefined)) {
      return false;
    }
  }
  return true;
}

const RELOAD_CROSSED = crossesReloadThresholdSql(
  'l.auto_reload_enabled',
  'l.auto_reload_threshold_cents',
  'l.credit_cents',
  'l.credit_cents - t.charged',
);

/** The usage rows' columns, each one array parameter (a Postgres array literal, cast in the statement). */
const USAGE_COLUMNS: readonly [string, string][] = [
  ['id', 'text'],
  ['org_id', 'text'],
  ['key_id', 'text'],
  ['api_slug', 'text'],
  ['api_id', 'text'],
  ['endpoint_id', 'text'],
  ['method', 'text'],
  ['path', 'text'],
  ['status', 'smallint'],
  ['outcome', 'text'],
  ['cost_cents', 'bigint'],
  ['price_cents_effective', 'bigint'],
  ['credit_applied_cents', 'bigint'],
  ['billable_cents', 'bigint'],
  ['latency_ms', 'int'],
  ['idempotency_key', 'text'],
  ['request_id', 'text'],
  ['client_request_id', 'text'],
  ['batch_id', 'text'],
  ['created_at', 'timestamptz'],
];

const N = USAGE_COLUMNS.length;
const LEAN_STATEMENT = `
with b as materialized (
  select * from jsonb_to_recordset($${N + 1}::jsonb) as b(id text, org_id text, ledger_id text, n int, charged bigint,
    credit bigint, billable bigint, first_id text, last_id text, first_at timestamptz, last_at timestamptz, seq int)
),
locked as (
  select o.id, o.credit_cents, o.auto_reload_enabled, o.auto_reload_threshold_cents from orgs o
   where o.id in (select org_id from b) order by o.id for update
),
ins_usage as (
  insert into usage_events (${USAGE_COLUMNS.map(([c]) => c).join(', ')})
  select * from unnest(${USAGE_COLUMNS.map(([, t], i) => `$${i + 1}::${t}[]`).join(', ')})
),
ins_batches as (
  insert into usage_batches (id, org_id, calls, charged_cents, credit_applied_cents, billable_cents, first_usage_id,
    last_usage_id, first_at, last_at)
  select id, org_id, n, charged, credit, billable, first_id, last_id, first_at, last_at from b
),
ins_ledger as (
  insert into ledger_entries (id, org_id, kind, amount_cents, balance_after_cents, idempotency_key, reference, memo,
    created_at)
  select b.ledger_id, b.org_id, 'usage', -b.charged,
         l.credit_cents - sum(b.charged) over (partition by b.org_id order by b.seq),
         'usage_batch:' || b.id, 'usage_batch:' || b.id,
         b.n || case when b.n = 1 then ' paid call' else ' paid calls' end, b.last_at
    from b join locked l on l.id = b.org_id
),
ins_accruals as (
  insert into earning_accruals (id, batch_id, provider_org_id, consumer_org_id, gross_cents, fee_cents, created_at)
  select * from jsonb_to_recordset($${N + 2}::jsonb) as a(id text, batch_id text, provider text, consumer text,
    gross bigint, fee bigint, at timestamptz)
),
totals as (
  select org_id, sum(charged) as charged, sum(n) as n from b group by org_id
),
upd_orgs as (
  update orgs o set credit_cents = l.credit_cents - t.charged, balance_version = o.balance_version + t.n,
         updated_at = now(),
         reload_requested_at = case when ${RELOAD_CROSSED} then coalesce(o.reload_requested_at, now())
                                    else o.reload_requested_at end
    from totals t join locked l on l.id = t.org_id
   where o.id = t.org_id
  returning o.id, o.credit_cents as credit, o.balance_version as version
),
upd_keys as (
  update api_keys k set spent_cents = k.spent_cents + t.s,
         ${DAY_SPENT_SET},
         last_used_at = case when t.own then now() else k.last_used_at end
    from jsonb_to_recordset($${N + 3}::jsonb) as t(key_id text, s bigint, own boolean, day text, ds bigint)
   where k.id = t.key_id
  returning k.id, k.spent_cents as spent, k.spent_day as day, k.day_spent_cents as day_spent
)
select json_build_object(
  'orgs', (select json_agg(upd_orgs) from upd_orgs),
  'keys', (select json_agg(upd_keys) from upd_keys),
  'days', (select json_agg(json_build_object('key_id', id, 'day', day, 'spent', day_spent)) from upd_keys)
) as result`;

/** A Postgres array literal of text values (NULL for null), cast to its column's type in the statement. */
function arrayLiteral(values: readonly (string | number | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null || v === undefined) out += 'NULL';
    else if (typeof v === 'number') out += String(v);
    else out += `"${v.replace(/[\\"]/g, '\\$&')}"`;
  }
  return `${out}}`;
}

interface BatchRow {
  id: string;
  org_id: string;
  ledger_id: string;
  n: number;
  charged: number;
  credit: number;
  billable: number;
  first_id: string;
  last_id: string;
  first_at: string;
  last_at: string;
  seq: number;
}

interface AccrualRow {
  id: string;
  batch_id: string;
  provider: string;
  consumer: string;
  gross: number;
  fee: number;
  at: string;
}

/** The per-batch rows the statement writes besides the usage rows, summed from the calls. */
class Aggregates {
  readonly batches = new Map<string, BatchRow>();
  readonly accruals = new Map<string, AccrualRow>();
  /** Per key: its spend, whether its own calls (not a descendant's) spent, its latest day and the spend that day. */
  readonly keySpend = new Map<string, { key_id: string; s: number; own: boolean; day: string; ds: number }>();

  constructor(private readonly feePercent: number) {}

  /** A paid call (with its split) into its org's batch, its provider's accrual and the keys' spend; its batch id. */
  add(c: CallRecord, seq: number, at: string): string {
    const billable = c.billableCents!;
    // Per consumer org: one batch for calls paid wholly from credit, one for calls with a billable part.
    const part = `${c.orgId}|${billable > 0 ? 1 : 0}`;
    let b = this.batches.get(part);
    if (!b) {
      b = {
        id: newId('usageBatch'),
        org_id: c.orgId,
        ledger_id: newId('ledgerEntry'),
        n: 0,
        charged: 0,
        credit: 0,
        billable: 0,
        first_id: c.usageId,
        last_id: c.usageId,
        first_at: at,
        last_at: at,
        seq,
      };
      this.batches.set(part, b);
    }
    b.n += 1;
    b.charged += c.priceCents;
    b.credit += c.creditAppliedCents!;
    b.billable += billable;
    b.last_id = c.usageId;
    if (at < b.first_at) b.first_at = at;
    if (at > b.last_at) b.last_at = at;
    this.accrue(b.id, c, at);
    this.spend(c.keyId, c.day, c.priceCents, true);
    for (const id of c.ancestorKeyIds ?? []) this.spend(id, c.day, c.priceCents, false);
    return b.id;
  }

  /** One accrual per (batch, provider): gross and fee summed, the fee split call by call. */
  private accrue(batchId: string, c: CallRecord, at: string): void {
    const key = `${batchId}|${c.providerOrgId}`;
    let a = this.accruals.get(key);
    if (!a) {
      a = {
        id: newId('earningAccrual'),
        batch_id: batchId,
        provider: c.providerOrgId,
        consumer: c.orgId,
        gross: 0,
        fee: 0,
        at,
      };
      this.accruals.set(key, a);
    }
    a.gross += c.priceCents;
    a.fee += splitPrice(c.priceCents, this.feePercent).platformFeeCents;
    if (at > a.at) a.at = at;
  }

  private spend(keyId: string, day: string, price: number, own: boolean): void {
    const k = this.keySpend.get(keyId);
    if (!k) {
      this.keySpend.set(keyId, { key_id: keyId, s: price, own, day, ds: price });
      return;
    }
    k.s += price;
    k.own ||= own;
    // Only the latest day's spend is kept on the key (DAY_SPENT_SET); a batch across midnight starts the new day.
    if (day === k.day) k.ds += price;
    else if (day > k.day) {
      k.day = day;
      k.ds = price;
    }
  }
}

/** One call's values in USAGE_COLUMNS' order. */
function usageValues(c: CallRecord, batchId: string | null, at: string): (string | number | null)[] {
  const paid = c.priceCents > 0;
  return [
    c.usageId,
    c.orgId,
    c.keyId,
    c.apiSlug,
    c.apiId,
    c.endpointId,
    c.method,
    c.path.slice(0, 2000),
    c.status,
    c.outcome,
    c.priceCents,
    c.priceCentsEffective,
    paid ? c.creditAppliedCents! : 0,
    paid ? c.billableCents! : 0,
    Math.round(c.latencyMs),
    c.idempotencyKey,
    c.requestId,
    c.clientRequestId ?? null,
    batchId,
    at,
  ];
}

/** The statement's parameters: the usage columns, then the batches, accruals and key spend. */
export function leanParams(batch: readonly { call: CallRecord }[], feePercent: number): string[] {
  const cols: (string | number | null)[][] = USAGE_COLUMNS.map(() => new Array<string | number | null>(batch.length));
  const books = new Aggregates(feePercent);
  batch.forEach(({ call }, i) => {
    const at = call.at.toISOString();
    const values = usageValues(call, call.priceCents > 0 ? books.add(call, i, at) : null, at);
    for (let j = 0; j < N; j++) cols[j]![i] = values[j]!;
  });
  return [
    ...cols.map(arrayLiteral),
    JSON.stringify([...books.batches.values()]),
    JSON.stringify([...books.accruals.values()]),
    JSON.stringify([...books.keySpend.values()]),
  ];
}

interface LeanResult {
  orgs: { id: string; credit: number | string; version: number | string }[] | null;
  keys: { id: string; spent: number | string }[] | null;
  days: { key_id: string; day: string; spent: number | string }[] | null;
}

/** Run the lean statement: a named prepared statement on Postgres, a plain one on the embedded database. */
export async function runLeanCommit(orm: MikroORM, prepared: boolean, params: string[]): Promise<LeanResult> {
  const connection = orm.em.getConnection();
  if (!prepared) {
    // Knex's positional bindings follow the order the parameters appear in the text.
    const order = [...LEAN_STATEMENT.matchAll(/\$(\d+)::/g)].map((m) => Number(m[1]) - 1);
    const text = LEAN_STATEMENT.replace(/\$(\d+)::/g, '?::');
    const [row] = await connection.execute<{ result: LeanResult }[]>(
      text,
      order.map((i) => params[i]),
    );
    return row!.result;
  }
  const client = connection.getKnex().client as unknown as PooledClient;
  const pgConnection = await client.acquireConnection();
  try {
    const res = await pgConnection.query<{ result: LeanResult }>({
      name: 'usage_commit_lean_v1',
      text: LEAN_STATEMENT,
      values: params,
    });
    return res.rows[0]!.result;
  } finally {
    await client.releaseConnection(pgConnection);
  }
}

/** Each call's answer: every call was inserted (a duplicate fails the statement), with the split it carried. */
export function leanCommitted(batch: readonly { call: CallRecord }[], result: LeanResult): CommittedCall[] {
  const orgs = new Map((result.orgs ?? []).map((o) => [o.id, o]));
  const keys = new Map((result.keys ?? []).map((k) => [k.id, Number(k.spent)]));
  const days = new Map((result.days ?? []).map((d) => [`${d.key_id}|${d.day}`, Number(d.spent)]));
  return batch.map(({ call }) => {
    const o = orgs.get(call.orgId);
    const spent = keys.get(call.keyId);
    const day = days.get(`${call.keyId}|${call.day}`);
    const anc = call.ancestorKeyIds ?? [];
    const ancDays = anc.map((id) => `${id}|${call.day}`);
    const paid = call.priceCents > 0;
    return {
      ancestorSpentCents: anc.length > 0 && anc.every((id) => keys.has(id)) ? anc.map((id) => keys.get(id)!) : null,
      ancestorDaySpentCents:
        anc.length > 0 && ancDays.every((d) => days.has(d)) ? ancDays.map((d) => days.get(d)!) : null,
      duplicate: false,
      creditAppliedCents: paid ? call.creditAppliedCents! : 0,
      billableCents: paid ? call.billableCents! : 0,
      org: o ? { creditCents: Number(o.credit), balanceVersion: Number(o.version) } : null,
      key: spent !== undefined && day !== undefined ? { spentCents: spent, daySpentCents: day } : null,
    };
  });
}
