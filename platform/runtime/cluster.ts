/**
 * The gateway's process supervisor (GATEWAY_PROCESSES > 1, or `--processes N`): the launcher's primary process forks
 * N node:cluster workers, each a whole gateway-role process (its own services, committer and sweeper) listening on
 * the same port; the cluster module hands accepted connections to the workers in turn. The workers share nothing but
 * Postgres and Redis. The primary holds no services: it reports ready once every worker is, replaces a worker that
 * dies unexpectedly (after a backoff that doubles while replacements keep dying young), and on SIGTERM/SIGINT passes
 * the signal on and waits for every worker's graceful shutdown.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../../core/logger.js';

/** What a worker tells the primary over the IPC channel once its servers listen. */
export const WORKER_READY = { type: 'gateway-worker-ready' } as const;

export interface SupervisorOptions {
  processes: number;
  logger: Logger;
  /** The workers' own shutdown grace; the primary waits this long plus a margin before SIGKILL. */
  graceMs: number;
  /** First replacement delay; doubles per worker that dies within `stableMs` of starting, up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  stableMs?: number;
  /** Called once, when all N workers first report ready. */
  onReady?: () => void;
  /** A worker failed before all were ready: every worker has been stopped; exit with this code. */
  onFailed?: (code: number) => void;
}

export interface Supervisor {
  /** Signal every worker and resolve, with the exit code the primary should use, once all have exited. */
  stop(signal: NodeJS.Signals): Promise<number>;
}

interface Slot {
  index: number;
  worker?: Worker;
  startedAt: number;
  ready: boolean;
  /** Consecutive deaths within `stableMs` of starting: the backoff exponent. */
  quickDeaths: number;
  restartTimer?: NodeJS.Timeout;
}

export function superviseGatewayWorkers(opts: SupervisorOptions): Supervisor {
  const log = opts.logger;
  const backoffMs = opts.backoffMs ?? 500;
  const maxBackoffMs = opts.maxBackoffMs ?? 30_000;
  const stableMs = opts.stableMs ?? 30_000;
  const slots: Slot[] = Array.from({ length: opts.processes }, (_, index) => ({
    index,
    startedAt: 0,
    ready: false,
    quickDeaths: 0,
  }));
  let everReady = false;
  let stopping: Promise<number> | undefined;
  let failed = false;

  const fork = (slot: Slot) => {
    slot.restartTimer = undefined;
    slot.ready = false;
    slot.startedAt = Date.now();
    const worker = cluster.fork();
    slot.worker = worker;
    worker.on('message', (msg: unknown) => {
      if ((msg as { type?: string } | null)?.type !== WORKER_READY.type) return;
      slot.ready = true;
      log.info({ worker: slot.index, worker_pid: worker.process.pid }, 'gateway worker ready');
      if (!everReady && slots.every((s) => s.ready)) {
        everReady = true;
        opts.onReady?.();
      }
    });
    worker.on('exit', (code, signal) => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      if (stopping) return;
      if (!everReady) {
        // A worker that cannot start (port taken, database unreachable) would fail the same way again: stop.
        log.fatal({ worker: slot.index, code, signal }, 'a gateway worker exited before the gateway was ready');
        failed = true;
        void stop('SIGTERM').then((c) => opts.onFailed?.(c));
        return;
      }
      slot.quickDeaths = Date.now() - slot.startedAt < stableMs ? slot.quickDeaths + 1 : 0;
      const delay = Math.min(maxBackoffMs, backoffMs * 2 ** Math.max(0, slot.quickDeaths - 1));
      log.error(
        { worker: slot.index, worker_pid: worker.process.pid, code, signal, restart_in_ms: delay },
        'gateway worker died; replacing it',
      );
      slot.restartTimer = setTimeout(() => fork(slot), delay);
    });
  };

  const stop = (signal: NodeJS.Signals): Promise<number> =>
    (stopping ??= stopWorkers(slots, signal, opts.graceMs, log).then(() => (failed ? 1 : 0)));

  for (const slot of slots) fork(slot);
  return { stop };
}

/** Signals every live worker (restarts cancelled) and resolves once all have exited; SIGKILL after the grace. */
async function stopWorkers(slots: Slot[], signal: NodeJS.Signals, graceMs: number, log: Logger): Promise<void> {
  const live: Promise<void>[] = [];
  for (const slot of slots) {
    if (slot.restartTimer) clearTimeout(slot.restartTimer);
    const worker = slot.worker;
    if (!worker || worker.isDead()) continue;
    live.push(new Promise<void>((resolve) => worker.once('exit', () => resolve())));
    // A signal sent to the whole process group (a terminal's Ctrl-C) already reached the worker; a second one
    // within a second is ignored by the worker's own handler.
    worker.process.kill(signal);
  }
  const force = setTimeout(() => {
    log.warn('gateway workers did not stop in time; killing them');
    for (const slot of slots) slot.worker?.process.kill('SIGKILL');
  }, graceMs + 15_000);
  force.unref();
  await Promise.all(live);
  clearTimeout(force);
}
