/**
 * Starts auto-reloads off the request path: the ledger marks an org when a debit takes it under its threshold
 * (reload_requested_at); this loop, in the worker process, signal-with-starts the autoReloadWorkflow of each marked
 * org and only then clears the mark. At least once: a failed start, or a worker that dies mid-start, leaves the mark
 * for the next tick. A mark set again while the start was in flight (a newer debit) is kept, and a second signal (two
 * workers, or a retry after a lost reply) folds into the running reload, which charges only if still under threshold.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.js';
import type { TemporalService } from '../temporal/temporal.service.js';

export interface ReloadTrigger {
  /** One pass; resolves with how many orgs' reloads were started or signalled. */
  tick(): Promise<number>;
  stop(): Promise<void>;
}

export function startReloadTrigger(
  deps: { orm: MikroORM; temporal: Pick<TemporalService, 'requestAutoReload'>; logger: Logger },
  intervalMs = 1_000,
): ReloadTrigger {
  let running: Promise<number> | undefined;
  const tick = async (): Promise<number> => {
    const em = deps.orm.em.fork();
    // The mark as text (microseconds and zone): cleared below only if it is still exactly this mark.
    const marked = await em.execute<{ id: string; mark: string }[]>(
      `select id, reload_requested_at::text as mark from orgs
        where reload_requested_at is not null order by reload_requested_at limit 50`,
    );
    let signalled = 0;
    for (const { id, mark } of marked) {
      try {
        await deps.temporal.requestAutoReload(id);
      } catch (err) {
        deps.logger.warn({ err, org_id: id }, 'could not start auto-reload; will retry');
        continue;
      }
      await em.execute(
        'update orgs set reload_requested_at = null where id = ? and reload_requested_at = ?::timestamptz',
        [id, mark],
        'run',
      );
      signalled++;
    }
    return signalled;
  };
  const timer = setInterval(() => {
    if (running) return;
    running = tick()
      .catch((err: unknown) => {
        deps.logger.warn({ err }, 'reload trigger tick failed');
        return 0;
      })
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return {
    tick,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
