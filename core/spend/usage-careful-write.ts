/**
 * The usage committer's careful path (core/spend/usage-committer.ts), statement by statement in one transaction: a
 * prepaid balance would be overdrawn by a debit that raced an in-flight call, so such a call is charged what is left
 * (the rest recorded as uncollected). Same books as the one-statement commit: per consumer org a usage batch per part
 * (wholly from credit, with a billable part), its ledger row, one accrual per (batch, provider), key and day spend.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { splitPrice } from '../money/split.js';
import { addKeySpend, chargeCall, crossesReloadThreshold } from '../money/money-rules.js';
import { newId } from '../ids.js';
import { listUnsynced } from './idempotency-seen.js';
import { DAY_SPENT_SET } from './usage-commit-statement.js';
import type { CallRecord, CommittedCall } from './usage-committer.js';

interface OrgRow {
  id: string;
  credit_cents: string;
  balance_version: string;
  billing_mode: 'prepaid' | 'card';
  auto_reload_enabled: boolean;
  auto_reload_threshold_cents: string | null;
}

/** A consumer org locked for the commit: its balance as the calls are charged one by one. */
type LockedOrg = OrgRow & { balance: number; changes: number; reload: boolean };

/** One usage batch of the careful path (usage_batches). */
interface BatchTotals {
  id: string;
  orgId: string;
  calls: number;
  charged: number;
  credit: number;
  billable: number;
  firstId: string;
  lastId: string;
  firstAt: Date;
  lastAt: Date;
}

/** One accrual per (batch, provider): gross and fee summed over the provider's calls, each call split alone. */
interface Accrual {
  id: string;
  batchId: string;
  provider: string;
  consumer: string;
  gross: number;
  fee: number;
  at: Date;
}

/** What charging the calls one by one gathered, to be written. */
interface Books {
  /** The batches of this commit, by `org|part` (part 1: calls with a billable part), in the order they start. */
  batches: Map<string, BatchTotals>;
  accruals: Map<string, Accrual>;
  results: Map<string, CommittedCall>;
  usage: unknown[];
  keySpend: Map<string, number>;
  /** By `key|day`: the key's and each ancestor's spend on the call's day. */
  daySpend: Map<string, number>;
}

/** The totals Postgres returned after the commit, for the fast state. */
interface After {
  orgs: Map<string, { creditCents: number; balanceVersion: number }>;
  keys: Map<string, number>;
  days: Map<string, number>;
}

/** The usage_events columns the careful path writes, in the order `usageValues` gives them. */
const USAGE_COLUMNS = `(id, org_id, key_id, api_slug, api_id, endpoint_id, method, path, status, outcome, cost_cents,
  price_cents_effective, credit_applied_cents, billable_cents, latency_ms, idempotency_key, request_id, client_request_id,
  batch_id, created_at)`;
const USAGE_WIDTH = 20;

/** Commit `given` in `tem`'s transaction; one answer per call, in order. */
export async function writeCarefully(
  tem: EntityManager,
  given: readonly { call: CallRecord }[],
  feePercent: number,
): Promise<CommittedCall[]> {
  const batch = await newCalls(tem, given);
  const orgs = await lockOrgs(tem, batch);
  const books: Books = {
    batches: new Map(),
    accruals: new Map(),
    results: new Map(),
    usage: [],
    keySpend: new Map(),
    daySpend: new Map(),
  };
  for (const call of batch) bookCall(books, call, orgs, feePercent);
  await insertRows(tem, batch.length, books, orgs);
  const after = await updateTotals(tem, books, orgs);
  return given.map(({ call }) => answerOf(call, books.results.get(call.usageId), after));
}

/**
 * The calls to book: those not in Postgres yet, less the idempotent ones whose key an earlier call already claimed
 * (their claims made here, in idempotency_records, and listed unsynced when the call was booked past the fast state).
 */
async function newCalls(tem: EntityManager, given: readonly { call: CallRecord }[]): Promise<CallRecord[]> {
  const known = await tem.execute<{ id: string }[]>(
    `select id from usage_events where (id, created_at) in (${given.map(() => '(?, ?::timestamptz)').join(',')})`,
    given.flatMap(({ call }) => [call.usageId, call.at]),
  );
  const inPostgres = new Set(known.map((r) => r.id));
  const all = given.filter((p) => !inPostgres.has(p.call.usageId)).map((p) => p.call);
  const claims = all.filter((c) => c.idempotencyKey !== null && c.outcome === 'success');
  const claimed = new Set<string>();
  if (claims.length > 0) {
    const rowsBack = await tem.execute<{ usage_id: string }[]>(
      `insert into idempotency_records (org_id, key_id, idempotency_key, usage_id, request_hash, extra, created_at)
       values ${rows(claims.length, 7)} on conflict do nothing returning usage_id`,
      claims.flatMap((call) => [
        call.orgId,
        call.keyId,
        call.idempotencyKey,
        call.usageId,
        call.requestHash ?? '',
        call.replayExtra ? JSON.stringify(call.replayExtra) : null,
        call.at,
      ]),
    );
    for (const r of rowsBack) claimed.add(r.usage_id);
    await listUnsynced(
      tem,
      claims.filter((c) => c.unsynced && claimed.has(c.usageId)),
    );
  }
  return all.filter((c) => !(c.idempotencyKey !== null && c.outcome === 'success' && !claimed.has(c.usageId)));
}

/** The paid calls' consumer orgs, locked in id order (no deadlocks between gateway processes). */
async function lockOrgs(tem: EntityManager, batch: readonly CallRecord[]): Promise<Map<string, LockedOrg>> {
  const orgIds = [...new Set(batch.filter((c) => c.priceCents > 0).map((c) => c.orgId))].sort();
  const orgs = new Map<string, LockedOrg>();
  if (orgIds.length === 0) return orgs;
  const found = await tem.execute<OrgRow[]>(
    `select id, credit_cents, balance_version, billing_mode, auto_reload_enabled, auto_reload_threshold_cents
       from orgs where id in (${orgIds.map(() => '?').join(',')}) order by id for update`,
    orgIds,
  );
  for (const r of found) orgs.set(r.id, { ...r, balance: Number(r.credit_cents), changes: 0, reload: false });
  return orgs;
}

/** Charge one call against its org's balance and add it to the books. */
function bookCall(books: Books, call: CallRecord, orgs: Map<string, LockedOrg>, feePercent: number): void {
  let creditApplied = 0;
  let billable = 0;
  let batchId: string | null = null;
  if (call.priceCents > 0) {
    const consumer = orgs.get(call.orgId);
    if (!consumer) throw new Error(`org of call ${call.usageId} not found`);
    const charge = chargeCall(call.priceCents, consumer.balance, consumer.billing_mode);
    const charged = charge.chargedCents;
    creditApplied = charge.creditAppliedCents;
    billable = charge.billableCents;
    const before = consumer.balance;
    if (charged > 0) {
      consumer.balance -= charged;
      consumer.changes += 1;
      batchId = addToBatch(books, call, charged, creditApplied, billable, feePercent);
    }
    const threshold =
      consumer.auto_reload_threshold_cents === null ? null : Number(consumer.auto_reload_threshold_cents);
    if (crossesReloadThreshold(consumer.auto_reload_enabled, threshold, before, consumer.balance)) {
      consumer.reload = true;
    }
    if (charged > 0) {
      addKeySpend(books.keySpend, call.keyId, call.ancestorKeyIds, charged);
      const onDay = (id: string) => `${id}|${call.day}`;
      addKeySpend(books.daySpend, onDay(call.keyId), call.ancestorKeyIds?.map(onDay), charged);
    }
  }
  books.usage.push(
    ...usageValues(call, { outcome: call.outcome, cost: call.priceCents, creditApplied, billable, batchId }),
  );
  books.results.set(call.usageId, {
    ancestorSpentCents: null,
    ancestorDaySpentCents: null,
    duplicate: false,
    creditAppliedCents: creditApplied,
    billableCents: billable,
    org: null,
    key: null,
  });
}

/** A charged call into its org's batch of its part and its provider's accrual there: the batch's id. */
function addToBatch(
  books: Books,
  call: CallRecord,
  charged: number,
  creditApplied: number,
  billable: number,
  feePercent: number,
): string {
  const part = `${call.orgId}|${billable > 0 ? 1 : 0}`;
  let b = books.batches.get(part);
  if (!b) {
    b = {
      id: newId('usageBatch'),
      orgId: call.orgId,
      calls: 0,
      charged: 0,
      credit: 0,
      billable: 0,
      firstId: call.usageId,
      lastId: call.usageId,
      firstAt: call.at,
      lastAt: call.at,
    };
    books.batches.set(part, b);
  }
  b.calls += 1;
  b.charged += charged;
  b.credit += creditApplied;
  b.billable += billable;
  b.lastId = call.usageId;
  if (call.at < b.firstAt) b.firstAt = call.at;
  if (call.at > b.lastAt) b.lastAt = call.at;
  const split = splitPrice(charged, feePercent);
  const akey = `${b.id}|${call.providerOrgId}`;
  let a = books.accruals.get(akey);
  if (!a) {
    a = {
      id: newId('earningAccrual'),
      batchId: b.id,
      provider: call.providerOrgId,
      consumer: call.orgId,
      gross: 0,
      fee: 0,
      at: call.at,
    };
    books.accruals.set(akey, a);
  }
  a.gross += charged;
  a.fee += split.platformFeeCents;
  if (call.at > a.at) a.at = call.at;
  return b.id;
}

/** The usage events, the batches with their ledger rows, the accruals. */
async function insertRows(tem: EntityManager, calls: number, books: Books, orgs: Map<string, LockedOrg>) {
  if (calls > 0) {
    await tem.execute(
      `insert into usage_events ${USAGE_COLUMNS} values ${rows(calls, USAGE_WIDTH)}`,
      books.usage,
      'run',
    );
  }
  const { batches, accruals } = books;
  if (batches.size > 0) {
    // Each batch's ledger row: the org's balance before the commit less this and the org's earlier batches.
    const balance = new Map([...orgs.values()].map((o) => [o.id, Number(o.credit_cents)]));
    const ledger: unknown[] = [];
    const batchRows: unknown[] = [];
    for (const b of batches.values()) {
      const after = balance.get(b.orgId)! - b.charged;
      balance.set(b.orgId, after);
      const key = `usage_batch:${b.id}`;
      const memo = `${b.calls} paid call${b.calls === 1 ? '' : 's'}`;
      ledger.push(newId('ledgerEntry'), b.orgId, 'usage', -b.charged, after, key, key, memo, b.lastAt);
      batchRows.push(b.id, b.orgId, b.calls, b.charged, b.credit, b.billable, b.firstId, b.lastId, b.firstAt, b.lastAt);
    }
    await tem.execute(
      `insert into usage_batches (id, org_id, calls, charged_cents, credit_applied_cents, billable_cents,
         first_usage_id, last_usage_id, first_at, last_at) values ${rows(batches.size, 10)}`,
      batchRows,
      'run',
    );
    await tem.execute(
      `insert into ledger_entries (id, org_id, kind, amount_cents, balance_after_cents, idempotency_key, reference,
         memo, created_at) values ${rows(batches.size, 9)}`,
      ledger,
      'run',
    );
  }
  if (accruals.size > 0) {
    await tem.execute(
      `insert into earning_accruals (id, batch_id, provider_org_id, consumer_org_id, gross_cents, fee_cents, created_at)
       values ${rows(accruals.size, 7)}`,
      [...accruals.values()].flatMap((a) => [a.id, a.batchId, a.provider, a.consumer, a.gross, a.fee, a.at]),
      'run',
    );
  }
}

/** The orgs' balances (version bumped, auto-reload crossing marked), the keys' and key-days' spend. */
async function updateTotals(tem: EntityManager, books: Books, orgs: Map<string, LockedOrg>): Promise<After> {
  const after: After = { orgs: new Map(), keys: new Map(), days: new Map() };
  const changed = [...orgs.values()].filter((o) => o.changes > 0 || o.reload);
  if (changed.length > 0) {
    const updated = await tem.execute<{ id: string; credit_cents: string; balance_version: string }[]>(
      `update orgs o set credit_cents = v.c, balance_version = o.balance_version + v.n, updated_at = now(),
         reload_requested_at = case when v.r then coalesce(o.reload_requested_at, now()) else o.reload_requested_at end
       from (values ${changed.map(() => '(?, ?::bigint, ?::bigint, ?::boolean)').join(',')}) v(id, c, n, r)
       where o.id = v.id returning o.id, o.credit_cents, o.balance_version`,
      changed.flatMap((o) => [o.id, o.balance, o.changes, o.reload]),
    );
    for (const u of updated) {
      after.orgs.set(u.id, { creditCents: Number(u.credit_cents), balanceVersion: Number(u.balance_version) });
    }
  }
  const { keySpend, daySpend } = books;
  if (keySpend.size > 0) {
    // Per key its latest day in the batch and the spend that day (only the latest day is kept: DAY_SPENT_SET).
    const latest = new Map<string, { day: string; cents: number }>();
    for (const [dk, cents] of daySpend) {
      const [keyId, day] = dk.split('|') as [string, string];
      const l = latest.get(keyId);
      if (!l || day > l.day) latest.set(keyId, { day, cents });
    }
    const keys = await tem.execute<{ id: string; spent_cents: string; spent_day: string; day_spent_cents: string }[]>(
      `update api_keys k set spent_cents = k.spent_cents + t.s, ${DAY_SPENT_SET}, last_used_at = now()
         from (values ${[...keySpend.keys()].map(() => '(?, ?::bigint, ?::text, ?::bigint)').join(',')}) t(id, s, day, ds)
        where k.id = t.id returning k.id, k.spent_cents, k.spent_day, k.day_spent_cents`,
      [...keySpend.entries()].flatMap(([id, cents]) => [id, cents, latest.get(id)!.day, latest.get(id)!.cents]),
    );
    for (const k of keys) {
      after.keys.set(k.id, Number(k.spent_cents));
      after.days.set(`${k.id}|${k.spent_day}`, Number(k.day_spent_cents));
    }
  }
  return after;
}

/** A call's answer: not booked (a duplicate), or booked with the totals after the commit. */
function answerOf(call: CallRecord, r: CommittedCall | undefined, after: After): CommittedCall {
  if (!r) {
    return {
      duplicate: true,
      creditAppliedCents: 0,
      billableCents: 0,
      org: null,
      key: null,
      ancestorSpentCents: null,
      ancestorDaySpentCents: null,
    };
  }
  const { keys, days } = after;
  r.org = after.orgs.get(call.orgId) ?? null;
  const anc = call.ancestorKeyIds ?? [];
  if (anc.length > 0 && anc.every((id) => keys.has(id))) r.ancestorSpentCents = anc.map((id) => keys.get(id)!);
  const ancDays = anc.map((id) => `${id}|${call.day}`);
  if (anc.length > 0 && ancDays.every((d) => days.has(d))) r.ancestorDaySpentCents = ancDays.map((d) => days.get(d)!);
  const spent = keys.get(call.keyId);
  const day = days.get(`${call.keyId}|${call.day}`);
  r.key = spent !== undefined && day !== undefined ? { spentCents: spent, daySpentCents: day } : null;
  return r;
}

function usageValues(
  call: CallRecord,
  o: { outcome: CallRecord['outcome']; cost: number; creditApplied: number; billable: number; batchId: string | null },
): unknown[] {
  return [
    call.usageId,
    call.orgId,
    call.keyId,
    call.apiSlug,
    call.apiId,
    call.endpointId,
    call.method,
    call.path.slice(0, 2000),
    call.status,
    o.outcome,
    o.cost,
    call.priceCentsEffective,
    o.creditApplied,
    o.billable,
    Math.round(call.latencyMs),
    call.idempotencyKey,
    call.requestId,
    call.clientRequestId ?? null,
    o.batchId,
    call.at,
  ];
}

function rows(count: number, width: number): string {
  const one = `(${Array.from({ length: width }, () => '?').join(',')})`;
  return Array.from({ length: count }, () => one).join(',');
}
