/**
 * Crash safety: a reservation whose gateway died between reserve and commit is never settled. Every gateway process
 * looks for reservations past their expiry (the upstream timeout plus a margin) every GATEWAY_SWEEP_INTERVAL_MS. If
 * the call's usage row exists the call was committed and only the settle was lost: the reservation is released into
 * spend (the fast state then reads the balance again), and its idempotency key stays claimed. Otherwise the call is
 * first fenced — recorded as failed under its own usage id, so a commit still in flight can never land after it (the
 * usage id is the primary key) — and then voided, which refunds the held amount and frees the idempotency key for a
 * retry. Fence, void and settle are idempotent, so processes may race.
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
    const em = services.orm.em.fork();
    // Fence every expired reservation that has no usage row yet: an abandoned call, recorded as failed and unbilled.
    await em.execute(
      `insert into usage_events (id, org_id, key_id, api_slug, method, path, status, outcome, latency_ms, request_id)
       select r.id, r.org_id, r.key_id, '-', '-', '-', 0, 'failed', 0, r.id
         from jsonb_to_recordset(?::jsonb) as r(id text, org_id text, key_id text)
       on conflict (id) do nothing`,
      [JSON.stringify(expired.map((r) => ({ id: r.reservationId, org_id: r.orgId, key_id: r.keyId })))],
      'run',
    );
    const rows = await em.execute<{ id: string }[]>(
      `select id from usage_events where id in (${expired.map(() => '?').join(',')}) and outcome = 'success'`,
      expired.map((r) => r.reservationId),
    );
    const committed = new Set(rows.map((r) => r.id));
    for (const ref of expired) {
      if (committed.has(ref.reservationId)) {
        // Committed: release the hold into spend with Postgres's totals (the idempotency claim expires on its own).
        const snap = await loadSnapshot(services, ref.orgId, ref.keyId, ref.day, ref.ancestorKeyIds);
        await services.spend.settle({
          ...ref,
          idempotencyKey: null,
          org: snap.org,
          key: snap.key ?? null,
          ancestorSpentCents: snap.ancestors?.map((a) => a.spentCents) ?? null,
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
