/**
 * Crash safety for reservations (docs/durability.md): a reservation whose gateway died between admission and its
 * settle or void is never ended by it. Every gateway process looks for reservations past their expiry (the upstream
 * timeout plus a margin) every GATEWAY_SWEEP_INTERVAL_MS and voids them: the held amount is refunded and the
 * idempotency claim freed for a retry. Void and settle remove the same reservation atomically on the fast state, so
 * exactly one of them wins: a call that outlived its reservation cannot be charged afterwards (its settle finds the
 * reservation gone and the caller is told 503). Voids are idempotent, so processes may race.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { SpendStore } from './spend-store.js';

export interface Sweeper {
  /** One sweep of every shard now (tests, operators); the timer sweeps a part at a time. */
  sweepOnce(): Promise<{ voided: number }>;
  stop(): Promise<void>;
}

const SWEEP_BATCH = 200;
/** Each sweep interval is covered by this many smaller scans (no burst of 1,024 reads at once). */
const SCAN_PARTS = 16;

export function startSweeper(deps: { spend: SpendStore; clock: Clock; logger: Logger; intervalMs: number }): Sweeper {
  const log = deps.logger.child({ component: 'reservation-sweeper' });
  let running: Promise<unknown> = Promise.resolve();

  async function sweepOnce(part?: { of: number }): Promise<{ voided: number }> {
    const expired = await deps.spend.expired(deps.clock.now().getTime(), SWEEP_BATCH, part);
    let voided = 0;
    for (const ref of expired) if (await deps.spend.void(ref)) voided += 1;
    if (voided > 0) log.warn({ voided }, 'released reservations nobody settled');
    return { voided };
  }

  const timer = setInterval(
    () => {
      running = sweepOnce({ of: SCAN_PARTS }).catch((err: unknown) => log.warn({ err }, 'reservation sweep failed'));
    },
    Math.max(1, Math.floor(deps.intervalMs / SCAN_PARTS)),
  );
  timer.unref();

  return {
    sweepOnce: () => sweepOnce(),
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
