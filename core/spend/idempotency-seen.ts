/**
 * A first-seen Idempotency-Key answered from Redis alone (issue 21 item 14; docs/durability.md, "A first-seen
 * Idempotency-Key"). Postgres's `idempotency_records` stays the system of record; the fast state keeps, per org, a
 * set of short hashes of every idempotent call the org booked (the settle adds each) and a stamp `ok` saying the set
 * is complete. The admission script reads both: a key whose hash is absent from a complete set is new, so Postgres is
 * not asked. This module is each gateway process's part:
 *
 * - `rebuild(orgId)`: the set is not stamped (never built, or Redis lost its data): read the org's booked keys from
 *   Postgres into the set, then stamp it, unless the set's epoch, read before Postgres was, changed meanwhile.
 * - The unsynced loop: calls booked in Postgres past a settle (the direct booking after an unknown settle outcome, a
 *   free call while the fast state was down) are listed in `idempotency_unsynced` in their booking's statement. Every
 *   500 ms each process adds the listed keys to the seen sets and deletes the rows; a first-seen key skips Postgres
 *   only until 1 s after the start of this process's last check that found the table empty (`fastPath`).
 * - `booked(...)`: after such a direct booking, the booking process adds the key itself; if it cannot, it waits
 *   longer than any process's allowance before answering, so no process can still skip Postgres for that key.
 */
import { createHash } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.js';
import type { SpendStore } from './spend-store.js';
import type { CallRecord } from './usage-committer.js';

/** How often each process moves `idempotency_unsynced` rows into the seen sets. */
export const UNSYNCED_INTERVAL_MS = 500;
/** A check that found `idempotency_unsynced` empty allows the fast path this long after the check started. */
export const FAST_PATH_ALLOWANCE_MS = 1_000;
/** A direct booking whose key could not be added to the seen set waits this long (> the allowance) before answering. */
export const UNSYNCED_WAIT_MS = 2_000;
/** Between taking the epoch and reading Postgres: calls settled before a data loss finish their drain to Postgres. */
const REBUILD_DELAY_MS = 1_000;
/** Rows per read, of the unsynced table and of an org's records during a rebuild. */
const BATCH = 1_000;
/** An org whose rebuild failed or could not stamp is not rebuilt again by this process sooner than this. */
const REBUILD_RETRY_MS = 1_000;

/** The short hash of a key's idempotency key in its org's seen set: 8 bytes of SHA-256(key id NUL client key), hex. */
export function seenKeyHash(keyId: string, clientKey: string): string {
  return createHash('sha256').update(keyId).update('\0').update(clientKey).digest('hex').slice(0, 16);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

interface KeyRow {
  org_id: string;
  key_id: string;
  idempotency_key: string;
}

export class SeenKeys {
  /** Monotonic time (ms) until which a first-seen key may skip Postgres. */
  private allowedUntil = 0;
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> = Promise.resolve();
  /** Orgs being rebuilt, or rebuilt (or tried) recently: monotonic time of the last start. */
  private readonly rebuilds = new Map<string, number>();
  private readonly log: Logger;

  constructor(
    private readonly deps: { spend: SpendStore; orm: MikroORM; logger: Logger },
    private readonly options: { rebuildDelayMs?: number } = {},
  ) {
    this.log = deps.logger.child({ component: 'idempotency-seen' });
  }

  /** Start the unsynced loop (each gateway process). */
  start(): this {
    if (this.timer) return this;
    this.timer = setInterval(() => {
      this.syncing = this.syncOnce().catch((err: unknown) => {
        this.log.warn({ err: (err as Error).message }, 'idempotency_unsynced check failed; asking Postgres meanwhile');
      });
    }, UNSYNCED_INTERVAL_MS);
    this.timer.unref();
    this.syncing = this.syncOnce().catch(() => undefined);
    return this;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.syncing;
  }

  /** May a first-seen key skip Postgres in this process now? */
  fastPath(): boolean {
    return performance.now() < this.allowedUntil;
  }

  /** Move every listed direct booking into the seen sets; allow the fast path once the table was found empty. */
  async syncOnce(): Promise<void> {
    for (;;) {
      const startedAt = performance.now();
      const rows = await this.deps.orm.em
        .fork()
        .execute<KeyRow[]>(
          'select org_id, key_id, idempotency_key from idempotency_unsynced order by created_at limit ?',
          [BATCH],
        );
      if (rows.length === 0) {
        this.allowedUntil = Math.max(this.allowedUntil, startedAt + FAST_PATH_ALLOWANCE_MS);
        return;
      }
      await this.deps.spend.addSeen(
        rows.map((r) => ({ orgId: r.org_id, hash: seenKeyHash(r.key_id, r.idempotency_key) })),
      );
      await this.forget(rows);
    }
  }

  private async forget(rows: readonly KeyRow[]): Promise<void> {
    await this.deps.orm.em.fork().execute(
      `delete from idempotency_unsynced where (org_id, key_id, idempotency_key) in
         (${rows.map(() => '(?, ?, ?)').join(',')})`,
      rows.flatMap((r) => [r.org_id, r.key_id, r.idempotency_key]),
      'run',
    );
  }

  /**
   * A call was booked in Postgres past the settle (and listed in `idempotency_unsynced`): add its key to the seen set
   * before answering; if the fast state cannot take it, wait out every process's fast-path allowance instead.
   */
  async booked(orgId: string, keyId: string, clientKey: string): Promise<void> {
    const started = performance.now();
    const added = await Promise.race([
      this.deps.spend.addSeen([{ orgId, hash: seenKeyHash(keyId, clientKey) }]).then(
        () => true,
        (err: unknown) => {
          this.log.warn({ err: (err as Error).message, org_id: orgId }, 'seen set not updated; waiting out fast paths');
          return false;
        },
      ),
      sleep(FAST_PATH_ALLOWANCE_MS).then(() => false),
    ]);
    if (!added) {
      // The commit preceded `started`: past started + UNSYNCED_WAIT_MS no allowance from an earlier check remains.
      await sleep(started + UNSYNCED_WAIT_MS - performance.now());
      return;
    }
    await this.forget([{ org_id: orgId, key_id: keyId, idempotency_key: clientKey }]).catch(() => undefined);
  }

  /** The org's seen set is not stamped complete: rebuild it in the background (at most one at a time per org). */
  rebuild(orgId: string): void {
    const last = this.rebuilds.get(orgId);
    const now = performance.now();
    if (last !== undefined && now - last < REBUILD_RETRY_MS) return;
    if (this.rebuilds.size > 10_000) this.rebuilds.clear();
    this.rebuilds.set(orgId, Number.POSITIVE_INFINITY); // running: never started twice at once
    this.rebuildNow(orgId)
      .then((stamped) => {
        if (!stamped) this.log.info({ org_id: orgId }, 'seen set changed during its rebuild; not stamped');
      })
      .catch((err: unknown) => this.log.warn({ err: (err as Error).message, org_id: orgId }, 'seen set rebuild failed'))
      .finally(() => this.rebuilds.set(orgId, performance.now()));
  }

  /** Read the org's booked keys into its seen set, then stamp it if no data was lost meanwhile. True if stamped. */
  async rebuildNow(orgId: string): Promise<boolean> {
    const epoch = await this.deps.spend.seenEpoch(orgId);
    await sleep(this.options.rebuildDelayMs ?? REBUILD_DELAY_MS);
    let after: [string, string] = ['', ''];
    for (;;) {
      const rows = await this.deps.orm.em.fork().execute<{ key_id: string; idempotency_key: string }[]>(
        `select key_id, idempotency_key from idempotency_records
          where org_id = ? and (key_id, idempotency_key) > (?, ?)
          order by key_id, idempotency_key limit ?`,
        [orgId, after[0], after[1], BATCH],
      );
      if (rows.length > 0) {
        await this.deps.spend.addSeen(rows.map((r) => ({ orgId, hash: seenKeyHash(r.key_id, r.idempotency_key) })));
        const last = rows[rows.length - 1]!;
        after = [last.key_id, last.idempotency_key];
      }
      if (rows.length < BATCH) break;
    }
    return this.deps.spend.completeSeen(orgId, epoch);
  }
}

/**
 * List calls booked past the settle in `idempotency_unsynced`, inside the booking's transaction (the group commit's
 * careful path; its one-statement path does the same in a CTE, `ins_unsynced`).
 */
export async function listUnsynced(tem: EntityManager, calls: readonly CallRecord[]): Promise<void> {
  if (calls.length === 0) return;
  await tem.execute(
    `insert into idempotency_unsynced (org_id, key_id, idempotency_key, created_at)
     values ${calls.map(() => '(?, ?, ?, ?)').join(',')} on conflict do nothing`,
    calls.flatMap((c) => [c.orgId, c.keyId, c.idempotencyKey, c.at]),
    'run',
  );
}
