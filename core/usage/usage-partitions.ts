/**
 * usage_events partition maintenance (issue 13; docs/decisions.md, Usage partitions), run by usagePartitionsWorkflow
 * on the `usage-partitions` Temporal Schedule (daily) and once at worker start.
 *
 * usage_events is range-partitioned by `created_at`: one partition per UTC month, named `usage_events_pYYYYMM`, plus
 * `usage_events_default`, which catches a row no monthly partition covers (so a call's commit never fails for want of
 * a partition). Each run, under an advisory lock:
 *
 * 1. ensure: the previous month, this month and the next AHEAD_MONTHS months have a partition, and so does every
 *    month some row in the default partition belongs to (those rows are moved into it: a monthly partition cannot be
 *    attached while the default one holds rows of its range).
 * 2. retire: a monthly partition is detached and dropped once its whole range is older than USAGE_RETENTION_DAYS
 *    *and* the catalog rollups have folded it in for good: its end is at or before the rollups' usage watermark minus
 *    the hourly late allowance (the furthest back a rollup run ever reads again). Before the rollups' first run
 *    nothing is dropped. The default partition is never dropped.
 *
 * Ledger rows, usage batches, earning accruals and payments are never touched: the books do not need old usage rows
 * (reconciliation compares balances with ledger sums, and ties each usage batch, kept forever, to its ledger row and
 * earnings by the batch's own totals; a ledger row of a call booked before batches carries `usage:{id}`).
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { toDate } from '../db/sql.js';
import type { UsagePartitionsResult } from '../temporal/contracts.js';

/**
 * The rollups' hourly full refresh (core/catalog/rollups/rollups.service.ts): calls committed up to two hours late still land
 * in their hour, so a partition is dropped only once the rollups have read past it by this much.
 */
export const HOURLY_LATE_ALLOWANCE_MS = 2 * 60 * 60 * 1000;

/** Months created ahead of the current one: a stopped cluster has three months before rows land in the default. */
export const AHEAD_MONTHS = 3;
export const PARENT = 'usage_events';
export const DEFAULT_PARTITION = 'usage_events_default';
const MONTHLY = /^usage_events_p(\d{4})(\d{2})$/;
const DAY_MS = 86_400_000;
const LOCK_KEY = 'usage-partitions';

export interface UsagePartition {
  name: string;
  /** Inclusive start and exclusive end (UTC month). */
  from: Date;
  to: Date;
}

const monthStart = (year: number, month0: number) => new Date(Date.UTC(year, month0, 1));
const partitionName = (from: Date) =>
  `usage_events_p${from.getUTCFullYear()}${String(from.getUTCMonth() + 1).padStart(2, '0')}`;

/** The monthly partition covering `at`. */
export function partitionFor(at: Date): UsagePartition {
  const from = monthStart(at.getUTCFullYear(), at.getUTCMonth());
  const to = monthStart(at.getUTCFullYear(), at.getUTCMonth() + 1);
  return { name: partitionName(from), from, to };
}

export class UsagePartitionsService {
  constructor(
    private readonly deps: {
      orm: MikroORM;
      clock: Clock;
      logger: Logger;
      /** USAGE_RETENTION_DAYS. */
      retentionDays: number;
      /** The catalog rollups' usage watermark (RollupsService.watermark). */
      rollupsWatermark: () => Promise<Date | null>;
    },
  ) {}

  /** The monthly partitions that exist, oldest first (the default partition is not listed). */
  async list(em: EntityManager = this.deps.orm.em.fork()): Promise<UsagePartition[]> {
    const rows = await em.execute<{ name: string }[]>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = 'usage_events'::regclass order by c.relname`,
    );
    const out: UsagePartition[] = [];
    for (const { name } of rows) {
      const m = MONTHLY.exec(name);
      if (m) out.push(partitionFor(monthStart(Number(m[1]), Number(m[2]) - 1)));
    }
    return out;
  }

  /** Create the partitions that should exist (step 1); returns the names created and the rows moved. */
  async ensure(): Promise<{ created: string[]; moved: number }> {
    const now = this.deps.clock.now();
    const created: string[] = [];
    let moved = 0;
    const wanted = new Map<string, UsagePartition>();
    for (let i = -1; i <= AHEAD_MONTHS; i++) {
      const p = partitionFor(monthStart(now.getUTCFullYear(), now.getUTCMonth() + i));
      wanted.set(p.name, p);
    }
    const em = this.deps.orm.em.fork();
    const stray = await em.execute<{ month: Date | string }[]>(
      `select distinct date_trunc('month', created_at, 'UTC') as month from ${DEFAULT_PARTITION}`,
    );
    for (const { month } of stray) {
      const p = partitionFor(toDate(month));
      wanted.set(p.name, p);
    }
    const existing = new Set((await this.list(em)).map((p) => p.name));
    for (const p of [...wanted.values()].sort((a, b) => a.from.getTime() - b.from.getTime())) {
      if (existing.has(p.name)) continue;
      const n = await this.create(p);
      if (n !== null) {
        created.push(p.name);
        moved += n;
      }
    }
    return { created, moved };
  }

  /**
   * One month's partition: made as a plain table, filled with that month's rows from the default partition (locked
   * against inserts meanwhile), then attached. Null when another run made it first.
   */
  private async create(p: UsagePartition): Promise<number | null> {
    return this.deps.orm.em.fork().transactional(async (tem) => {
      await tem.execute(`select pg_advisory_xact_lock(hashtext(?))`, [LOCK_KEY]);
      const [exists] = await tem.execute<{ n: number }[]>(`select 1 as n from pg_class where relname = ?`, [p.name]);
      if (exists) return null;
      const range = [p.from.toISOString(), p.to.toISOString()];
      await tem.execute(`lock table ${DEFAULT_PARTITION} in exclusive mode`);
      await tem.execute(`create table "${p.name}" (like ${PARENT} including defaults including constraints)`);
      const [row] = await tem.execute<{ n: string }[]>(
        `with moved as (
           delete from ${DEFAULT_PARTITION} where created_at >= ? and created_at < ? returning *
         ), ins as (insert into "${p.name}" select * from moved returning 1)
         select count(*) as n from ins`,
        range,
      );
      // DDL takes no bind parameters: the bounds are our own ISO instants.
      await tem.execute(
        `alter table ${PARENT} attach partition "${p.name}" for values from ('${range[0]}') to ('${range[1]}')`,
      );
      const n = Number(row?.n ?? 0);
      this.deps.logger.info({ partition: p.name, moved_from_default: n }, 'usage partition created');
      return n;
    });
  }

  /** Detach and drop the partitions past retention whose calls the rollups have folded in for good (step 2). */
  async retire(): Promise<Pick<UsagePartitionsResult, 'retired' | 'kept_unprocessed' | 'retention_cutoff'>> {
    const cutoff = new Date(this.deps.clock.now().getTime() - this.deps.retentionDays * DAY_MS);
    const watermark = await this.deps.rollupsWatermark();
    const processedBefore = watermark ? new Date(watermark.getTime() - HOURLY_LATE_ALLOWANCE_MS) : null;
    const retired: string[] = [];
    const kept: string[] = [];
    for (const p of await this.list()) {
      if (p.to > cutoff) continue;
      if (!processedBefore || p.to > processedBefore) {
        kept.push(p.name);
        continue;
      }
      await this.deps.orm.em.fork().transactional(async (tem) => {
        await tem.execute(`select pg_advisory_xact_lock(hashtext(?))`, [LOCK_KEY]);
        const [exists] = await tem.execute<{ n: number }[]>(`select 1 as n from pg_class where relname = ?`, [p.name]);
        if (!exists) return;
        await tem.execute(`alter table ${PARENT} detach partition "${p.name}"`);
        await tem.execute(`drop table "${p.name}"`);
        retired.push(p.name);
      });
    }
    if (retired.length > 0) this.deps.logger.info({ retired, cutoff }, 'usage partitions retired');
    if (kept.length > 0) {
      this.deps.logger.warn(
        { kept, watermark },
        'usage partitions past retention kept: rollups have not folded them in',
      );
    }
    return { retired, kept_unprocessed: kept, retention_cutoff: cutoff.toISOString() };
  }

  /** One scheduled run: ensure, then retire. */
  async maintain(): Promise<UsagePartitionsResult> {
    const { created, moved } = await this.ensure();
    const retire = await this.retire();
    const watermark = await this.deps.rollupsWatermark();
    return {
      created,
      moved_from_default: moved,
      ...retire,
      rollups_watermark: watermark?.toISOString() ?? null,
    };
  }
}
