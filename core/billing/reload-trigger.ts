/**
 * Starts auto-reloads off the request path: the ledger marks an org when a debit takes it under its threshold
 * (reload_requested_at); this loop, in the worker process, claims marked orgs and signal-with-starts their
 * autoReloadWorkflow. A failed start puts the mark back, so the next tick retries.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.js';
import type { TemporalService } from '../temporal/temporal.service.js';

export interface ReloadTrigger {
  tick(): Promise<number>;
  stop(): Promise<void>;
}

export function startReloadTrigger(
  deps: { orm: MikroORM; temporal: TemporalService; logger: Logger },
  intervalMs = 1_000,
): ReloadTrigger {
  let running: Promise<number> | undefined;
  const tick = async (): Promise<number> => {
    const em = deps.orm.em.fork();
    const claimed = await em.execute<{ id: string }[]>(
      `update orgs set reload_requested_at = null
        where id in (select id from orgs where reload_requested_at is not null order by reload_requested_at limit 50 for update skip locked)
        returning id`,
    );
    for (const { id } of claimed) {
      try {
        await deps.temporal.requestAutoReload(id);
      } catch (err) {
        deps.logger.warn({ err, org_id: id }, 'could not start auto-reload; will retry');
        await em.execute(
          'update orgs set reload_requested_at = coalesce(reload_requested_at, now()) where id = ?',
          [id],
          'run',
        );
      }
    }
    return claimed.length;
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
