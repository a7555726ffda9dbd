/**
 * Group commit of the gateway's calls into Postgres (DESIGN.md, Money; docs/durability.md): every finished call's usage
 * event and, for the paid calls, the books per batch (docs/decisions.md, Books per batch): per consumer org, the calls
 * the commit charged form a usage batch (usage_batches; two when some calls have a billable part and some do not: the
 * collected and the billed calls become payable to providers at different times), each with ONE consumer ledger row
 * (`usage_batch:{batch}`, −the batch's charge, an exact balance_after) and one queued earning per provider
 * (earning_accruals: the sums of each call's charge and of each call's fee, split call by call; folded into the
 * provider's ledger off the hot path, so no call locks the provider's org row). Each usage event points at its batch.
 * The money rules stay per call (charge, credit applied, billable, key spend). Many calls share one transaction: calls
 * queue while a batch is in flight, then go together as multi-row statements. The usage drain
 * (core/spend/usage-drain.ts) feeds it the calls the fast state made durable; a free call served while the fast state
 * is down comes here directly. Idempotent on the usage id: a call already in Postgres is not booked again.
 * Consumer orgs are locked in id order (no deadlocks between gateway processes), balances are computed here from the
 * locked rows, so every ledger row carries its exact balance_after, and the org, key and key-day totals come back for
 * the fast state. A usage batch only ever holds calls whose usage events the same transaction inserts (their primary
 * key): a drain retried after a crash between commit and acknowledgement skips the calls already booked, so no call is
 * in two batches and no batch is written twice.
 *
 * Idempotency backstop: a successful call made with an Idempotency-Key claims (org, key, client key) in
 * idempotency_records in the same statement. A claim that conflicts means an earlier call with that key already
 * committed (the fast state had forgotten it): this call is then not booked at all and comes back `duplicate`.
 *
 * A prepaid org's balance cannot go negative (a CHECK). The fast state reserves before every call, so this only happens
 * when a debit from elsewhere (a chargeback, a payout) lands while a call is in flight; the call is then charged what
 * is left, the rest is recorded as uncollected (`billable_cents` on the usage event) and the provider earns what was
 * charged, so the books still balance.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { splitPrice } from '../money/split.js';
import {
  addKeySpend,
  chargeCall,
  creditAppliedSql,
  crossesReloadThreshold,
  crossesReloadThresholdSql,
} from '../money/money-rules.js';
import { newId } from '../ids.js';
import { listUnsynced } from './idempotency-seen.js';
import type { Logger } from '../logger.js';

export interface CallRecord {
  usageId: string;
  orgId: string;
  keyId: string;
  /** The key's ancestors: a paid call's spend counts against each of them too. */
  ancestorKeyIds?: readonly string[];
  apiId: string;
  apiSlug: string;
  endpointId: string;
  providerOrgId: string;
  method: string;
  path: string;
  status: number;
  outcome: 'success' | 'failed';
  /** What the call costs (0 for free endpoints and failed calls). */
  priceCents: number;
  /** The effective price at the time of the call (recorded even when the call is not charged). */
  priceCentsEffective: number;
  latencyMs: number;
  idempotencyKey: string | null;
  /** With an idempotency key: the request's hash and the billing meta a replay adds (increase, discount). */
  requestHash?: string;
  replayExtra?: Record<string, unknown> | null;
  /** The gateway's request id. */
  requestId: string;
  /** The caller's own X-Request-Id, kept apart. */
  clientRequestId?: string | null;
  /** UTC day of the call, `YYYY-MM-DD`. */
  day: string;
  at: Date;
  /** The charge's split as the fast state decided it when the call settled (the answer said so); else computed here. */
  creditAppliedCents?: number;
  billableCents?: number;
  /** Booked past the fast state's settle: its key is listed in idempotency_unsynced in the same statement. */
  unsynced?: boolean;
}

export interface CommittedCall {
  /** An earlier call with the same idempotency key is already booked: this one was not (answer it as a replay). */
  duplicate: boolean;
  creditAppliedCents: number;
  billableCents: number;
  /** The consumer org's balance after the batch (for the fast state). */
  org: { creditCents: number; balanceVersion: number } | null;
  key: { spentCents: number; daySpentCents: number } | null;
  /** Each ancestor's lifetime spend after the batch, in `ancestorKeyIds` order (for the fast state). */
  ancestorSpentCents: number[] | null;
  /** Each ancestor's spend on the call's day after the batch, in `ancestorKeyIds` order (for the fast state). */
  ancestorDaySpentCents: number[] | null;
}

interface Pending {
  call: CallRecord;
  resolve: (c: CommittedCall) => void;
  reject: (e: unknown) => void;
}

interface OrgRow {
  id: string;
  credit_cents: string;
  balance_version: string;
  billing_mode: 'prepaid' | 'card';
  auto_reload_enabled: boolean;
  auto_reload_threshold_cents: string | null;
}

const MAX_BATCH = 256;
/**
 * Batches in flight at once per process. One: measured on the benchmark, two or four overlapping batches were slower
 * (they queue on the same org rows and each is smaller). Orgs are locked in id order first in every batch, so batches
 * of several gateway processes queue instead of deadlocking.
 */
const MAX_IN_FLIGHT = 1;

/** The slice of knex's pg client this file uses (a pooled node-postgres connection). */
interface PooledClient {
  acquireConnection(): Promise<{
    query<R>(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
  }>;
  releaseConnection(connection: unknown): Promise<void>;
}
const CHECK_VIOLATION = '23514';
const UNIQUE_VIOLATION = '23505';

interface CommitResult {
  orgs: { id: string; credit: number | string; version: number | string }[] | null;
  keys: { id: string; spent: number | string }[] | null;
  days: { key_id: string; day: string; spent: number | string }[] | null;
  usage: { id: string; credit: number | string; billable: number | string }[] | null;
}

/** The money rules inside the statement (core/money/money-rules.ts). */
const CREDIT_APPLIED = creditAppliedSql('c.price', 'r.balance_after + c.price');
const RELOAD_CROSSED = crossesReloadThresholdSql(
  'auto_reload_enabled',
  'auto_reload_threshold_cents',
  'balance_after - amount',
  'balance_after',
);

const COMMIT_TEMPLATE = `
with raw as (
  select * from jsonb_to_recordset(?::jsonb) as c(
    seq int, id text, org_id text, key_id text, provider_id text, api_slug text, api_id text, endpoint_id text,
    method text, path text, status int, outcome text, price bigint, eff bigint, fee bigint, latency int, idem text,
    req_hash text, extra jsonb, request_id text, client_request_id text, day text, created_at timestamptz,
    bid0 text, bid1 text, lid0 text, lid1 text, aid0 text, aid1 text, anc text[], cr bigint, bl bigint, uns boolean)
),
input as (
  select * from raw r /*KNOWN*/
),
claimed as (
  insert into idempotency_records (org_id, key_id, idempotency_key, usage_id, request_hash, extra, created_at)
  select org_id, key_id, idem, id, req_hash, extra, created_at from input where idem is not null and outcome = 'success'
  on conflict do nothing
  returning usage_id
),
ins_unsynced as (
  insert into idempotency_unsynced (org_id, key_id, idempotency_key, created_at)
  select org_id, key_id, idem, created_at from input where uns and id in (select usage_id from claimed)
  on conflict do nothing
),
calls as (
  select * from input i where i.idem is null or i.outcome <> 'success' or i.id in (select usage_id from claimed)
),
locked as (
  select o.id, o.credit_cents, o.auto_reload_enabled, o.auto_reload_threshold_cents from orgs o
   where o.id in (select org_id from calls where price > 0)
   order by o.id for update
),
running as (
  select c.seq, c.org_id, -c.price as amount, c.id as usage_id,
         l.credit_cents - sum(c.price) over (partition by c.org_id order by c.seq) as balance_after,
         l.auto_reload_enabled, l.auto_reload_threshold_cents
    from calls c join locked l on l.id = c.org_id where c.price > 0
),
priced as (
  select c.*, r.usage_id is not null as paid, coalesce(c.cr, ${CREDIT_APPLIED}, 0) as credit,
         coalesce(c.bl, c.price - coalesce(${CREDIT_APPLIED}, 0)) as billable
    from calls c left join running r on r.usage_id = c.id
),
booked as (
  select p.*,
         case when p.paid then case when p.billable > 0 then p.bid1 else p.bid0 end end as batch_id,
         case when p.billable > 0 then p.lid1 else p.lid0 end as ledger_id,
         case when p.billable > 0 then p.aid1 else p.aid0 end as accrual_id
    from priced p
),
batches as (
  select batch_id, org_id, min(ledger_id) as ledger_id, count(*) as n, sum(price) as charged, sum(credit) as credit,
         sum(billable) as billable, (array_agg(id order by seq))[1] as first_id,
         (array_agg(id order by seq desc))[1] as last_id, min(created_at) as first_at, max(created_at) as last_at,
         min(seq) as first_seq
    from booked where paid group by batch_id, org_id
),
ins_batches as (
  insert into usage_batches (id, org_id, calls, charged_cents, credit_applied_cents, billable_cents, first_usage_id,
    last_usage_id, first_at, last_at)
  select batch_id, org_id, n, charged, credit, billable, first_id, last_id, first_at, last_at from batches
),
ins_ledger as (
  insert into ledger_entries (id, org_id, kind, amount_cents, balance_after_cents, idempotency_key, reference, memo,
    created_at)
  select b.ledger_id, b.org_id, 'usage', -b.charged,
         l.credit_cents - sum(b.charged) over (partition by b.org_id order by b.first_seq),
         'usage_batch:' || b.batch_id, 'usage_batch:' || b.batch_id,
         b.n || case when b.n = 1 then ' paid call' else ' paid calls' end, b.last_at
    from batches b join locked l on l.id = b.org_id
),
ins_accruals as (
  insert into earning_accruals (id, batch_id, provider_org_id, consumer_org_id, gross_cents, fee_cents, created_at)
  select min(accrual_id), batch_id, provider_id, org_id, sum(price), sum(fee), max(created_at)
    from booked where paid group by batch_id, provider_id, org_id
),
ins_usage as (
  insert into usage_events (id, org_id, key_id, api_slug, api_id, endpoint_id, method, path, status, outcome,
    cost_cents, price_cents_effective, credit_applied_cents, billable_cents, latency_ms, idempotency_key, request_id,
    client_request_id, batch_id, created_at)
  select c.id, c.org_id, c.key_id, c.api_slug, c.api_id, c.endpoint_id, c.method, c.path, c.status, c.outcome, c.price,
         c.eff, c.credit, c.billable, c.latency, c.idem, c.request_id, c.client_request_id, c.batch_id, c.created_at
    from booked c
  returning id, credit_applied_cents as credit, billable_cents as billable
),
totals as (
  select org_id, (array_agg(balance_after order by seq desc))[1] as final, count(*) as n,
         bool_or(${RELOAD_CROSSED}) as reload
    from running group by org_id
),
upd_orgs as (
  update orgs o set credit_cents = t.final, balance_version = o.balance_version + t.n, updated_at = now(),
         reload_requested_at = case when t.reload then coalesce(o.reload_requested_at, now()) else o.reload_requested_at end
    from totals t where o.id = t.org_id
  returning o.id, o.credit_cents as credit, o.balance_version as version
),
upd_keys as (
  update api_keys k set spent_cents = k.spent_cents + t.s,
         last_used_at = case when t.own then now() else k.last_used_at end
    from (select key_id, sum(price) as s, bool_or(own) as own from (
            select key_id, price, true as own from calls where price > 0
            union all
            select a.key_id, c.price, false from calls c cross join lateral unnest(c.anc) as a(key_id) where c.price > 0
          ) spend group by key_id) t
   where k.id = t.key_id
  returning k.id, k.spent_cents as spent
),
upd_days as (
  insert into key_day_spend (key_id, day, spent_cents)
  select key_id, day, sum(price) from (
           select key_id, day, price from calls where price > 0
           union all
           select a.key_id, c.day, c.price from calls c cross join lateral unnest(c.anc) as a(key_id) where c.price > 0
         ) spend group by key_id, day
  on conflict (key_id, day) do update set spent_cents = key_day_spend.spent_cents + excluded.spent_cents
  returning key_id, day, spent_cents as spent
)
select json_build_object(
  'orgs', (select json_agg(upd_orgs) from upd_orgs),
  'keys', (select json_agg(upd_keys) from upd_keys),
  'days', (select json_agg(upd_days) from upd_days),
  'usage', (select json_agg(ins_usage) from ins_usage)
) as result`;

/** The common case: no call of the batch is in Postgres yet (a duplicate fails the statement on a unique key). */
const ONE_STATEMENT_COMMIT = COMMIT_TEMPLATE.replace('/*KNOWN*/', '');
/**
 * After a unique violation: some calls of the batch are already in Postgres (drained again after a drainer died
 * between its commit and its acknowledgement), and are skipped. A separate statement because the probe runs per call
 * across usage_events' partitions, which the common case should not pay for.
 */
const DEDUP_COMMIT = COMMIT_TEMPLATE.replace(
  '/*KNOWN*/',
  'where not exists (select 1 from usage_events u where u.id = r.id and u.created_at = r.created_at)',
);

export class UsageCommitter {
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly drained: (() => void)[] = [];

  constructor(
    private readonly deps: {
      orm: MikroORM;
      logger: Logger;
      feePercent: number;
      /** Use a named prepared statement (real Postgres; the embedded PGlite path runs it unprepared). */
      prepared?: boolean;
    },
    private readonly options: {
      maxBatch?: number;
      maxInFlight?: number;
      /**
       * A batch starts at least this long after the previous one started (default 0). For the embedded database,
       * whose statements run on this process's event loop: fewer, larger transactions, so a call's answer rarely
       * waits behind one (the calls are durable in the fast state's stream meanwhile; `flush` does not wait).
       */
      minIntervalMs?: number;
    } = {},
  ) {}

  private lastStart = 0;
  /** A batch waiting for the interval, and how to start it at once (`flush`). */
  private waiting: NodeJS.Timeout | undefined;
  private startNow: (() => void) | undefined;
  /** `flush` is waiting: batches go at once. */
  private hurry = 0;

  commit(call: CallRecord): Promise<CommittedCall> {
    return new Promise<CommittedCall>((resolve, reject) => {
      this.queue.push({ call, resolve, reject });
      this.pump();
    });
  }

  /**
   * Commit one call in a batch of its own, now (the drain's retries): a call Postgres keeps refusing then fails only
   * itself, never the calls that would have shared its batch.
   */
  commitAlone(call: CallRecord): Promise<CommittedCall> {
    return new Promise<CommittedCall>((resolve, reject) => {
      void this.writeBatch([{ call, resolve, reject }]);
    });
  }

  /** Resolves when everything queued so far is committed (shutdown). */
  async flush(): Promise<void> {
    this.hurry += 1;
    try {
      if (this.waiting) this.startNow?.();
      this.pump();
      while (this.queue.length > 0 || this.inFlight > 0) {
        await new Promise<void>((r) => this.drained.push(r));
      }
    } finally {
      this.hurry -= 1;
    }
  }

  /**
   * Start a batch on the next turn of the event loop (so the calls finishing in this one join it), unless the
   * maximum of batches is already in flight: then the queue waits and grows into the next batch.
   */
  private pump(): void {
    if (this.scheduled || this.queue.length === 0 || this.inFlight >= (this.options.maxInFlight ?? MAX_IN_FLIGHT)) {
      return;
    }
    this.scheduled = true;
    const wait = this.hurry > 0 ? 0 : this.lastStart + (this.options.minIntervalMs ?? 0) - performance.now();
    const start = () => {
      this.scheduled = false;
      if (this.queue.length === 0) return;
      this.lastStart = performance.now();
      const batch = this.queue.splice(0, this.options.maxBatch ?? MAX_BATCH);
      this.inFlight += 1;
      void this.writeBatch(batch).finally(() => {
        this.inFlight -= 1;
        if (this.queue.length === 0 && this.inFlight === 0) for (const r of this.drained.splice(0)) r();
        this.pump();
      });
      this.pump();
    };
    if (wait <= 0) {
      setImmediate(start);
      return;
    }
    this.waiting = setTimeout(() => {
      this.waiting = undefined;
      start();
    }, wait);
    this.startNow = () => {
      clearTimeout(this.waiting);
      this.waiting = undefined;
      setImmediate(start);
    };
  }

  private async writeBatch(batch: Pending[]): Promise<void> {
    try {
      let results: CommittedCall[];
      try {
        results = await this.writeOneStatement(batch, false).catch((err: unknown) => {
          if ((err as { code?: string }).code !== UNIQUE_VIOLATION) throw err;
          return this.writeOneStatement(batch, true); // some of the batch is booked already: skip those
        });
      } catch (err) {
        // A prepaid balance would go negative (a debit from elsewhere raced an in-flight call): the careful path.
        if ((err as { code?: string }).code !== CHECK_VIOLATION) throw err;
        results = await this.deps.orm.em.fork().transactional((tem) => this.write(tem, batch));
      }
      batch.forEach((p, i) => p.resolve(results[i]!));
    } catch (err) {
      this.deps.logger.error({ err, calls: batch.length }, 'usage commit failed');
      for (const p of batch) p.reject(err);
    }
  }

  /**
   * The common case in one statement (one round trip, its own implicit transaction): the batch goes in as one JSON
   * parameter; the orgs are locked in id order; each ledger row's balance_after is the locked balance plus a running
   * sum in call order; usage events, ledger rows, balances (version bumped, auto-reload crossing marked), key spend
   * and key-day spend are written by data-modifying CTEs. The prepaid CHECK makes it fail rather than overdraw.
   */
  private async writeOneStatement(batch: Pending[], dedup: boolean): Promise<CommittedCall[]> {
    const fee = this.deps.feePercent;
    // Ids the statement may need, minted here: per consumer org its batch and ledger row for calls paid wholly from
    // credit (0) and for calls with a billable part (1), and per (org, provider) the accrual of each; unused ones lapse.
    const orgIds = new Map<string, { bid0: string; bid1: string; lid0: string; lid1: string }>();
    const accrualIds = new Map<string, { aid0: string; aid1: string }>();
    const calls = batch.map(({ call }, seq) => {
      const split = call.priceCents > 0 ? splitPrice(call.priceCents, fee) : null;
      let ids = orgIds.get(call.orgId);
      let aids = accrualIds.get(`${call.orgId}|${call.providerOrgId}`);
      if (split && !ids) {
        ids = {
          bid0: newId('usageBatch'),
          bid1: newId('usageBatch'),
          lid0: newId('ledgerEntry'),
          lid1: newId('ledgerEntry'),
        };
        orgIds.set(call.orgId, ids);
      }
      if (split && !aids) {
        aids = { aid0: newId('earningAccrual'), aid1: newId('earningAccrual') };
        accrualIds.set(`${call.orgId}|${call.providerOrgId}`, aids);
      }
      return {
        seq,
        id: call.usageId,
        org_id: call.orgId,
        key_id: call.keyId,
        provider_id: call.providerOrgId,
        api_slug: call.apiSlug,
        api_id: call.apiId,
        endpoint_id: call.endpointId,
        method: call.method,
        path: call.path.slice(0, 2000),
        status: call.status,
        outcome: call.outcome,
        price: call.priceCents,
        eff: call.priceCentsEffective,
        fee: split?.platformFeeCents ?? 0,
        latency: Math.round(call.latencyMs),
        idem: call.idempotencyKey,
        req_hash: call.requestHash ?? '',
        extra: call.replayExtra ?? null,
        request_id: call.requestId,
        client_request_id: call.clientRequestId ?? null,
        day: call.day,
        created_at: call.at.toISOString(),
        bid0: ids?.bid0 ?? null,
        bid1: ids?.bid1 ?? null,
        lid0: ids?.lid0 ?? null,
        lid1: ids?.lid1 ?? null,
        aid0: aids?.aid0 ?? null,
        aid1: aids?.aid1 ?? null,
        anc: call.ancestorKeyIds ?? [],
        cr: call.creditAppliedCents ?? null,
        bl: call.billableCents ?? null,
        uns: call.unsynced === true,
      };
    });
    const result = await this.runCommit(JSON.stringify(calls), dedup);
    const orgs = new Map((result.orgs ?? []).map((o) => [o.id, o]));
    const keys = new Map((result.keys ?? []).map((k) => [k.id, Number(k.spent)]));
    const days = new Map((result.days ?? []).map((d) => [`${d.key_id}|${d.day}`, Number(d.spent)]));
    const usage = new Map((result.usage ?? []).map((u) => [u.id, u]));
    return batch.map(({ call }) => {
      const o = orgs.get(call.orgId);
      const spent = keys.get(call.keyId);
      const day = days.get(`${call.keyId}|${call.day}`);
      const u = usage.get(call.usageId);
      const anc = call.ancestorKeyIds ?? [];
      const ancDays = anc.map((id) => `${id}|${call.day}`);
      return {
        ancestorSpentCents: anc.length > 0 && anc.every((id) => keys.has(id)) ? anc.map((id) => keys.get(id)!) : null,
        ancestorDaySpentCents:
          anc.length > 0 && ancDays.every((d) => days.has(d)) ? ancDays.map((d) => days.get(d)!) : null,
        duplicate: u === undefined,
        creditAppliedCents: Number(u?.credit ?? 0),
        billableCents: Number(u?.billable ?? 0),
        org: o ? { creditCents: Number(o.credit), balanceVersion: Number(o.version) } : null,
        key: spent !== undefined && day !== undefined ? { spentCents: spent, daySpentCents: day } : null,
      };
    });
  }

  /**
   * Run the commit statement. On Postgres it is a named prepared statement on a pooled connection: planning this
   * statement costs more than running it for a small batch, and a prepared statement is planned once per connection.
   */
  private async runCommit(json: string, dedup: boolean): Promise<CommitResult> {
    const statement = dedup ? DEDUP_COMMIT : ONE_STATEMENT_COMMIT;
    const connection = this.deps.orm.em.getConnection();
    if (!this.deps.prepared) {
      const [row] = await connection.execute<{ result: CommitResult }[]>(statement, [json]);
      return row!.result;
    }
    const client = connection.getKnex().client as unknown as PooledClient;
    const pgConnection = await client.acquireConnection();
    try {
      const res = await pgConnection.query<{ result: CommitResult }>({
        name: dedup ? 'usage_commit_dedup_v9' : 'usage_commit_v9',
        text: statement.replace('?::jsonb', '$1::jsonb'),
        values: [json],
      });
      return res.rows[0]!.result;
    } finally {
      await client.releaseConnection(pgConnection);
    }
  }

  /**
   * The careful path, statement by statement in one transaction: a prepaid balance would be overdrawn by a debit that
   * raced an in-flight call, so such a call is charged what is left (the rest recorded as uncollected).
   */
  private async write(tem: EntityManager, given: Pending[]): Promise<CommittedCall[]> {
    const known = await tem.execute<{ id: string }[]>(
      `select id from usage_events where (id, created_at) in (${given.map(() => '(?, ?::timestamptz)').join(',')})`,
      given.flatMap(({ call }) => [call.usageId, call.at]),
    );
    const inPostgres = new Set(known.map((r) => r.id));
    const all = given.filter((p) => !inPostgres.has(p.call.usageId));
    const claims = all.filter((p) => p.call.idempotencyKey !== null && p.call.outcome === 'success');
    const claimed = new Set<string>();
    if (claims.length > 0) {
      const rowsBack = await tem.execute<{ usage_id: string }[]>(
        `insert into idempotency_records (org_id, key_id, idempotency_key, usage_id, request_hash, extra, created_at)
         values ${rows(claims.length, 7)} on conflict do nothing returning usage_id`,
        claims.flatMap(({ call }) => [
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
      const unsynced = claims.filter((p) => p.call.unsynced && claimed.has(p.call.usageId)).map((p) => p.call);
      await listUnsynced(tem, unsynced);
    }
    const isDuplicate = (c: CallRecord) =>
      c.idempotencyKey !== null && c.outcome === 'success' && !claimed.has(c.usageId);
    const batch = all.filter((p) => !isDuplicate(p.call));

    const paid = batch.filter((p) => p.call.priceCents > 0);
    const orgIds = [...new Set(paid.map((p) => p.call.orgId))].sort();
    const orgs = new Map<string, OrgRow & { balance: number; changes: number; reload: boolean }>();
    if (orgIds.length > 0) {
      const found = await tem.execute<OrgRow[]>(
        `select id, credit_cents, balance_version, billing_mode, auto_reload_enabled, auto_reload_threshold_cents
           from orgs where id in (${orgIds.map(() => '?').join(',')}) order by id for update`,
        orgIds,
      );
      for (const r of found) orgs.set(r.id, { ...r, balance: Number(r.credit_cents), changes: 0, reload: false });
    }

    /** The batches of this commit, by `org|part` (part 1: calls with a billable part), in the order they start. */
    const batches = new Map<string, BatchTotals>();
    /** One accrual per (batch, provider): gross and fee summed over the provider's calls, each call split alone. */
    const accruals = new Map<string, { id: string; batchId: string; provider: string; consumer: string } & Sums>();
    const results = new Map<string, CommittedCall>();
    const usage: unknown[] = [];
    const keySpend = new Map<string, number>();
    /** By `key|day`: the key's and each ancestor's spend on the call's day. */
    const daySpend = new Map<string, number>();
    for (const { call } of batch) {
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
          const part = `${call.orgId}|${billable > 0 ? 1 : 0}`;
          let b = batches.get(part);
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
            batches.set(part, b);
          }
          b.calls += 1;
          b.charged += charged;
          b.credit += creditApplied;
          b.billable += billable;
          b.lastId = call.usageId;
          if (call.at < b.firstAt) b.firstAt = call.at;
          if (call.at > b.lastAt) b.lastAt = call.at;
          batchId = b.id;
          const split = splitPrice(charged, this.deps.feePercent);
          const akey = `${b.id}|${call.providerOrgId}`;
          let a = accruals.get(akey);
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
            accruals.set(akey, a);
          }
          a.gross += charged;
          a.fee += split.platformFeeCents;
          if (call.at > a.at) a.at = call.at;
        }
        const threshold =
          consumer.auto_reload_threshold_cents === null ? null : Number(consumer.auto_reload_threshold_cents);
        if (crossesReloadThreshold(consumer.auto_reload_enabled, threshold, before, consumer.balance)) {
          consumer.reload = true;
        }
        if (charged > 0) {
          addKeySpend(keySpend, call.keyId, call.ancestorKeyIds, charged);
          const onDay = (id: string) => `${id}|${call.day}`;
          addKeySpend(daySpend, onDay(call.keyId), call.ancestorKeyIds?.map(onDay), charged);
        }
      }
      usage.push(
        ...usageValues(call, { outcome: call.outcome, cost: call.priceCents, creditApplied, billable, batchId }),
      );
      results.set(call.usageId, {
        ancestorSpentCents: null,
        ancestorDaySpentCents: null,
        duplicate: false,
        creditAppliedCents: creditApplied,
        billableCents: billable,
        org: null,
        key: null,
      });
    }

    if (batch.length > 0) {
      await tem.execute(
        `insert into usage_events ${USAGE_COLUMNS}
         values ${rows(batch.length, USAGE_WIDTH)}`,
        usage,
        'run',
      );
    }
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
        batchRows.push(
          b.id,
          b.orgId,
          b.calls,
          b.charged,
          b.credit,
          b.billable,
          b.firstId,
          b.lastId,
          b.firstAt,
          b.lastAt,
        );
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
    const orgAfter = new Map<string, { creditCents: number; balanceVersion: number }>();
    const keyAfter = new Map<string, number>();
    const dayAfter = new Map<string, number>();
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
        orgAfter.set(u.id, { creditCents: Number(u.credit_cents), balanceVersion: Number(u.balance_version) });
      }
    }
    if (keySpend.size > 0) {
      const keys = await tem.execute<{ id: string; spent_cents: string }[]>(
        `update api_keys k set spent_cents = k.spent_cents + v.s, last_used_at = now()
           from (values ${[...keySpend.keys()].map(() => '(?, ?::bigint)').join(',')}) v(id, s)
          where k.id = v.id returning k.id, k.spent_cents`,
        [...keySpend.entries()].flat(),
      );
      for (const k of keys) keyAfter.set(k.id, Number(k.spent_cents));
      const days = await tem.execute<{ key_id: string; day: string; spent_cents: string }[]>(
        `insert into key_day_spend (key_id, day, spent_cents) values ${rows(daySpend.size, 3)}
         on conflict (key_id, day) do update set spent_cents = key_day_spend.spent_cents + excluded.spent_cents
         returning key_id, day, spent_cents`,
        [...daySpend.entries()].flatMap(([dk, cents]) => [...dk.split('|'), cents]),
      );
      for (const d of days) dayAfter.set(`${d.key_id}|${d.day}`, Number(d.spent_cents));
    }
    return given.map(({ call }) => {
      const r = results.get(call.usageId);
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
      r.org = orgAfter.get(call.orgId) ?? null;
      const anc = call.ancestorKeyIds ?? [];
      if (anc.length > 0 && anc.every((id) => keyAfter.has(id)))
        r.ancestorSpentCents = anc.map((id) => keyAfter.get(id)!);
      const ancDays = anc.map((id) => `${id}|${call.day}`);
      if (anc.length > 0 && ancDays.every((d) => dayAfter.has(d)))
        r.ancestorDaySpentCents = ancDays.map((d) => dayAfter.get(d)!);
      const spent = keyAfter.get(call.keyId);
      const day = dayAfter.get(`${call.keyId}|${call.day}`);
      r.key = spent !== undefined && day !== undefined ? { spentCents: spent, daySpentCents: day } : null;
      return r;
    });
  }
}

/** The usage_events columns the careful path writes, in the order `usageValues` gives them. */
const USAGE_COLUMNS = `(id, org_id, key_id, api_slug, api_id, endpoint_id, method, path, status, outcome, cost_cents,
  price_cents_effective, credit_applied_cents, billable_cents, latency_ms, idempotency_key, request_id, client_request_id,
  batch_id, created_at)`;
const USAGE_WIDTH = 20;

interface Sums {
  gross: number;
  fee: number;
  at: Date;
}

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
