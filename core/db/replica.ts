/**
 * Catalog search may read from a streaming replica of the primary (DATABASE_READ_URL; docs/operations.md, "Read
 * replica"). A replica answers what the primary had committed up to its replay lag ago, which is what search promises
 * (lag + its 0.4 s refresh). A read that must reflect a write just committed on the primary (search's forced sync)
 * first waits here until the replica has replayed the primary's WAL position read at the start, for a bounded time:
 * a replica that falls behind slows such a read by at most the bound and is never waited on forever.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.js';

/** How long a read waits for the replica by default: far above normal lag (ms), short enough to answer a request. */
export const REPLICA_WAIT_MS = 1_000;
const POLL_MS = 10;

/**
 * Waits until `replica` has replayed everything `primary` had written when this was called (`pg_current_wal_lsn()`),
 * for at most `timeoutMs`. True when it has: at once when both are the same ORM, or when `replica` is not a standby
 * (a promoted one answers for itself). False when the time ran out.
 */
export async function waitForReplica(
  primary: MikroORM,
  replica: MikroORM,
  timeoutMs: number = REPLICA_WAIT_MS,
): Promise<boolean> {
  if (primary === replica) return true;
  const deadline = Date.now() + timeoutMs;
  const [{ lsn }] = await primary.em.fork().execute<[{ lsn: string }]>('select pg_current_wal_lsn()::text as lsn');
  const em = replica.em.fork();
  for (;;) {
    const [row] = await em.execute<[{ standby: boolean; replayed: boolean | null }]>(
      'select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn() >= ?::pg_lsn as replayed',
      [lsn],
    );
    if (!row.standby || row.replayed) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * A read's barrier for search (SearchService's forced sync): waits for the replica as above and never fails the read.
 * A replica still behind after the bound, or a failed check, is logged and the read goes on (as stale as the lag).
 */
export function replicaBarrier(
  primary: MikroORM,
  replica: MikroORM,
  logger: Logger,
  timeoutMs: number = REPLICA_WAIT_MS,
): () => Promise<boolean> {
  return async () => {
    try {
      const caughtUp = await waitForReplica(primary, replica, timeoutMs);
      if (!caughtUp) logger.warn({ timeoutMs }, 'read replica: still behind the primary; reading anyway');
      return caughtUp;
    } catch (err) {
      logger.warn({ err }, 'read replica: could not compare positions with the primary; reading anyway');
      return false;
    }
  };
}
