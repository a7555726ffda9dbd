/**
 * Group commit for the gateway (DESIGN.md, Money): every finished call's usage event and, for a paid call, its ledger
 * rows (consumer usage, provider earning, platform fee) are durable in Postgres before its response is sent, but many
 * calls share one transaction: calls queue while a batch is in flight, then go together as multi-row statements. Orgs
 * are locked in id order (no deadlocks between gateway processes), balances are computed here from the locked rows, so
 * every ledger row carries its exact balance_after, and the org, key and key-day totals come back for the fast state.
 *
 * A prepaid org's balance cannot go negative (a CHECK). The fast state reserves before every call, so this only happens
 * when a debit from elsewhere (a chargeback, a payout) lands while a call is in flight; the call is then charged what
 * is left, the rest is recorded as uncollected (`billable_cents` on the usage event) and the provider earns what was
 * charged, so the books still balance.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { callEntries } from '../billing/split.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';

export interface CallRecord {
  usageId: string;
  orgId: string;
  keyId: string;
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
  requestId: string;
  /** UTC day of the call, `YYYY-MM-DD`. */
  day: string;
  at: Date;
}

export interface CommittedCall {
  creditAppliedCents: number;
  billableCents: number;
  /** The consumer org's balance after the batch (for the fast state). */
  org: { creditCents: number; balanceVersion: number } | null;
  key: { spentCents: number; daySpentCents: number } | null;
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

export class UsageCommitter {
  private queue: Pending[] = [];
  private flushing = false;
  private idle: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: { orm: MikroORM; logger: Logger; feePercent: number },
    private readonly options: { maxBatch?: number } = {},
  ) {}

  commit(call: CallRecord): Promise<CommittedCall> {
    return new Promise<CommittedCall>((resolve, reject) => {
      this.queue.push({ call, resolve, reject });
      if (!this.flushing) this.idle = this.drain();
    });
  }

  /** Resolves when everything queued so far is committed (shutdown). */
  async flush(): Promise<void> {
    await this.idle;
  }

  private async drain(): Promise<void> {
    this.flushing = true;
    try {
      // Let the calls finishing in this tick of the event loop join the first batch.
      await new Promise<void>((r) => setImmediate(r));
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.options.maxBatch ?? MAX_BATCH);
        try {
          const results = await this.deps.orm.em.fork().transactional((tem) => this.write(tem, batch));
          batch.forEach((p, i) => p.resolve(results[i]!));
        } catch (err) {
          this.deps.logger.error({ err, calls: batch.length }, 'usage commit failed');
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private async write(tem: EntityManager, batch: Pending[]): Promise<CommittedCall[]> {
    const paid = batch.filter((p) => p.call.priceCents > 0);
    const orgIds = [...new Set(paid.flatMap((p) => [p.call.orgId, p.call.providerOrgId]))].sort();
    const orgs = new Map<string, OrgRow & { balance: number; changes: number; reload: boolean }>();
    if (orgIds.length > 0) {
      const rows = await tem.execute<OrgRow[]>(
        `select id, credit_cents, balance_version, billing_mode, auto_reload_enabled, auto_reload_threshold_cents
           from orgs where id in (${orgIds.map(() => '?').join(',')}) order by id for update`,
        orgIds,
      );
      for (const r of rows) orgs.set(r.id, { ...r, balance: Number(r.credit_cents), changes: 0, reload: false });
    }

    const ledger: unknown[] = [];
    let ledgerRows = 0;
    const results: CommittedCall[] = [];
    const usage: unknown[] = [];
    const keySpend = new Map<string, number>();
    const daySpend = new Map<string, { keyId: string; day: string; cents: number }>();
    for (const { call } of batch) {
      let creditApplied = 0;
      let billable = 0;
      if (call.priceCents > 0) {
        const consumer = orgs.get(call.orgId);
        const provider = orgs.get(call.providerOrgId);
        if (!consumer || !provider) throw new Error(`org of call ${call.usageId} not found`);
        const prepaid = consumer.billing_mode === 'prepaid';
        const charged = prepaid ? Math.min(call.priceCents, Math.max(0, consumer.balance)) : call.priceCents;
        creditApplied = Math.min(charged, Math.max(0, consumer.balance));
        billable = call.priceCents - creditApplied;
        const before = consumer.balance;
        for (const entry of callEntries({
          usageId: call.usageId,
          consumerOrgId: call.orgId,
          providerOrgId: call.providerOrgId,
          priceCents: charged,
          feePercent: this.deps.feePercent,
        })) {
          const org = orgs.get(entry.orgId)!;
          org.balance += entry.amountCents;
          org.changes += 1;
          ledger.push(
            newId('ledgerEntry'),
            entry.orgId,
            entry.kind,
            entry.amountCents,
            org.balance,
            entry.idempotencyKey,
            entry.reference,
            call.at,
          );
          ledgerRows += 1;
        }
        const threshold =
          consumer.auto_reload_threshold_cents === null ? null : Number(consumer.auto_reload_threshold_cents);
        if (consumer.auto_reload_enabled && threshold !== null && before >= threshold && consumer.balance < threshold) {
          consumer.reload = true;
        }
        if (charged > 0) {
          keySpend.set(call.keyId, (keySpend.get(call.keyId) ?? 0) + charged);
          const dk = `${call.keyId}|${call.day}`;
          const d = daySpend.get(dk) ?? { keyId: call.keyId, day: call.day, cents: 0 };
          d.cents += charged;
          daySpend.set(dk, d);
        }
      }
      usage.push(
        call.usageId,
        call.orgId,
        call.keyId,
        call.apiSlug,
        call.apiId,
        call.endpointId,
        call.method,
        call.path.slice(0, 2000),
        call.status,
        call.outcome,
        call.priceCents,
        call.priceCentsEffective,
        creditApplied,
        billable,
        Math.round(call.latencyMs),
        call.idempotencyKey,
        call.requestId,
        call.at,
      );
      results.push({ creditAppliedCents: creditApplied, billableCents: billable, org: null, key: null });
    }

    await tem.execute(
      `insert into usage_events (id, org_id, key_id, api_slug, api_id, endpoint_id, method, path, status, outcome,
         cost_cents, price_cents_effective, credit_applied_cents, billable_cents, latency_ms, idempotency_key,
         request_id, created_at)
       values ${rows(batch.length, 18)}`,
      usage,
      'run',
    );
    const orgAfter = new Map<string, { creditCents: number; balanceVersion: number }>();
    const keyAfter = new Map<string, number>();
    const dayAfter = new Map<string, number>();
    if (ledgerRows > 0) {
      await tem.execute(
        `insert into ledger_entries (id, org_id, kind, amount_cents, balance_after_cents, idempotency_key, reference,
           created_at) values ${rows(ledgerRows, 8)}`,
        ledger,
        'run',
      );
      const changed = [...orgs.values()].filter((o) => o.changes > 0);
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
        [...daySpend.values()].flatMap((d) => [d.keyId, d.day, d.cents]),
      );
      for (const d of days) dayAfter.set(`${d.key_id}|${d.day}`, Number(d.spent_cents));
    }
    batch.forEach(({ call }, i) => {
      const r = results[i]!;
      r.org = orgAfter.get(call.orgId) ?? null;
      const spent = keyAfter.get(call.keyId);
      const day = dayAfter.get(`${call.keyId}|${call.day}`);
      r.key = spent !== undefined && day !== undefined ? { spentCents: spent, daySpentCents: day } : null;
    });
    return results;
  }
}

function rows(count: number, width: number): string {
  const one = `(${Array.from({ length: width }, () => '?').join(',')})`;
  return Array.from({ length: count }, () => one).join(',');
}
