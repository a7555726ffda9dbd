/**
 * Crash safety: a reservation whose gateway died between reserve and commit is never settled. Every gateway process
 * looks for reservations past their expiry (the upstream timeout plus a margin) every GATEWAY_SWEEP_INTERVAL_MS. If
 * the call's usage row exists the call was committed and only the settle was lost: the reservation is released into
 * spend (the fast state then reads the balance again); otherwise it is voided, which refunds the held amount and
 * frees the idempotency key for a retry. Void and settle are atomic and idempotent, so processes may race.
 */
import type { Services } from '../core/services.js';
import { loadSnapshot } from './snapshot.js';

export interface Sweeper {
  sweepOnce(): Promise<{ voided: number; settled: number }>;
  stop(): Promise<void>;
}

export function startSweeper(services: Pick<Services, 'spend' | 'orm' | 'clock' | 'logger' | 'config'>): Sweeper {
  const log = services.logger.child({ component: 'reservation-sweeper' });
  let running: Promise<unknown> = Promise.resolve();

  async function sweepOnce(): Promise<{ voided: number; settled: number }> {
    const expired = await services.spend.expired(services.clock.now().getTime(), 200);
    let voided = 0;
    let settled = 0;
    if (expired.length === 0) return { voided, settled };
    const rows = await services.orm.em.fork().execute<{ id: string }[]>(
      `select id from usage_events where id in (${expired.map(() => '?').join(',')}) and outcome = 'success'`,
      expired.map((r) => r.reservationId),
    );
    const committed = new Set(rows.map((r) => r.id));
    for (const ref of expired) {
      if (committed.has(ref.reservationId)) {
        // Committed: release the hold into spend with Postgres's totals (the idempotency claim expires on its own).
        const snap = await loadSnapshot(services, ref.orgId, ref.keyId, ref.day);
        await services.spend.settle({
          ...ref,
          idempotencyKey: null,
          org: snap.org,
          key: snap.key ?? null,
          record: null,
          idempotencyTtlMs: 0,
          nowMs: services.clock.now().getTime(),
        });
        settled += 1;
      } else if (await services.spend.void(ref)) {
        voided += 1;
      }
    }
    if (voided + settled > 0) log.warn({ voided, settled }, 'released reservations nobody settled');
    return { voided, settled };
  }

  const timer = setInterval(() => {
    running = sweepOnce().catch((err: unknown) => log.warn({ err }, 'reservation sweep failed'));
  }, services.config.gateway.sweepIntervalMs);
  timer.unref();

  return {
    sweepOnce,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
