/**
 * The all-in-one's gateway on an event loop of its own (issue 32: `npm start` holds its latency): when the gateway
 * shares its process with other roles, scripts/start.ts starts it in a worker thread
 * (gateway/thread-entry.ts) instead of on the main thread. The thread listens on GATEWAY_PORT itself
 * and has its own heap, so the control plane, the agent tools, the Temporal worker, rollups and their collections do
 * not delay a call's answer.
 *
 * What crosses between the threads (Comlink over message ports, platform/remote-stores.ts):
 * - the agent tools' calls (call_api, run_probe) go to the thread's gateway (`gateway.call`);
 * - the thread's metrics are served with the main thread's (/metrics, labelled thread="gateway");
 * - on `npm start`'s embedded defaults, the thread uses the main thread's in-process counters (invalidations, /health)
 *   and the main thread uses the thread's memory spend store (its read barrier, key and org changes), the one copy of
 *   each; on Postgres and Redis each thread has its own connections, as separate processes would.
 * The database: the embedded PGlite serves both threads' connections as one session, unit by unit
 * (db/embedded-thread.js); Postgres is Postgres.
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import type { CounterStore } from '../core/counters/counter-store.js';
import type { Logger } from '../core/logger.js';
import type { MetricsJson } from '../core/metrics/metrics.js';
import type { InProcessGateway } from './in-process.js';
import type { GatewayThreadApi, GatewayThreadData } from './thread-entry.js';
import { countersPort, type RemoteSpendStore } from '../platform/remote-stores.js';

/** How long the thread may take to stop (in-flight calls get the shutdown grace inside it) before it is terminated. */
const STOP_MARGIN_MS = 15_000;
/** The gateway thread's young generation: three semi-spaces of 16 MB (V8's default semi-space size on 64-bit). */
export const GATEWAY_THREAD_YOUNG_MB = 48;

export interface GatewayThreadOptions {
  overrides: Record<string, string | undefined>;
  databaseUrl: string;
  temporalAddress: string;
  logger: Logger;
  graceMs: number;
  /** The main thread's tracing (its OTLP endpoint and service name), when traces are on. */
  tracing?: GatewayThreadData['tracing'];
  /** Embedded mode: the main thread's counters, lent to the thread, and the spend store to attach to its memory store. */
  embedded?: { counters: CounterStore; spend: RemoteSpendStore };
}

export interface GatewayThread {
  url: string;
  /** The agent tools' way in. */
  gateway: InProcessGateway;
  /** The thread's series for the main thread's /metrics. */
  metrics(): Promise<MetricsJson>;
  /** Rejects if the thread stops before stop() is called (the marketplace then shuts down, as for the worker). */
  done: Promise<void>;
  stop(): Promise<void>;
}

function entryUrl(): URL {
  // Under tsx (npm start) this module is TypeScript and so is the entry; compiled, both are JavaScript.
  const ts = import.meta.url.endsWith('.ts');
  return new URL(`./thread-entry.${ts ? 'ts' : 'js'}`, import.meta.url);
}

/** The thread's URL once it listens; a thread that fails or exits first is terminated and its error thrown. */
function listening(worker: Worker, exited: Promise<number>): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    worker.once('error', reject);
    void exited.then((code) => reject(new Error(`the gateway thread exited (${code}) before it listened`)));
    worker.on('message', (m: { ready?: string; error?: string }) => {
      if (m.ready) resolve(m.ready);
      else if (m.error) reject(new Error(`the gateway thread could not start: ${m.error}`));
    });
  }).catch(async (err: unknown) => {
    await worker.terminate();
    throw err;
  });
}

export async function startGatewayThread(opts: GatewayThreadOptions): Promise<GatewayThread> {
  const apiChannel = new MessageChannel();
  const countersChannel = opts.embedded ? new MessageChannel() : undefined;
  const data: GatewayThreadData = {
    overrides: opts.overrides,
    databaseUrl: opts.databaseUrl,
    temporalAddress: opts.temporalAddress,
    api: apiChannel.port2,
    counters: countersChannel?.port2,
    tracing: opts.tracing,
  };
  const ts = entryUrl().pathname.endsWith('.ts');
  const worker = new Worker(entryUrl(), {
    workerData: data,
    transferList: [apiChannel.port2, ...(countersChannel ? [countersChannel.port2] : [])],
    // The main thread's node flags are process-wide (the young generation's size is set below, per thread); the
    // TypeScript entry needs tsx's loader, as `npm start` gives the main thread; `--cpu-prof` flags profile this
    // thread too (a profile file per thread).
    execArgv: [...(ts ? ['--import', 'tsx'] : []), ...process.execArgv.filter((a) => a.startsWith('--cpu-prof'))],
    // V8's default young generation (16 MB semi-spaces), stated: a scavenge's pause grows with what it copies, and on
    // the Redis path a call's objects outlive a scavenge or two (docs/decisions.md, "the young generation"). With
    // 64 MB semi-spaces the thread scavenged every 1.3 s at 500 req/s, 16-30 ms each; with 16 MB every 0.37 s, 5 ms.
    // Applies only when no process-wide --max-semi-space-size is given (scripts/start.sh gives none).
    resourceLimits: { maxYoungGenerationSizeMb: GATEWAY_THREAD_YOUNG_MB },
  });
  if (opts.embedded && countersChannel) {
    Comlink.expose(countersPort(opts.embedded.counters), nodeEndpoint(countersChannel.port1));
  }

  let stopping = false;
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  const url = await listening(worker, exited);
  worker.removeAllListeners('error');
  worker.on('error', (err) => opts.logger.error({ err }, 'the gateway thread failed'));
  const api = Comlink.wrap<GatewayThreadApi>(nodeEndpoint(apiChannel.port1));
  if (opts.embedded) opts.embedded.spend.attach(api.spend as never);

  const done = exited.then((code) => {
    if (!stopping) throw new Error(`the gateway thread stopped unexpectedly (exit code ${code})`);
  });
  done.catch(() => undefined);
  let stopped: Promise<void> | undefined;
  return {
    url,
    gateway: { call: (caller, request) => api.call(caller, request) },
    metrics: () => api.metrics(),
    done,
    stop: () =>
      (stopped ??= (async () => {
        stopping = true;
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, opts.graceMs + STOP_MARGIN_MS)));
        await Promise.race([
          api.stop().catch((err: unknown) => opts.logger.warn({ err }, 'gateway thread stop')),
          timeout,
        ]);
        clearTimeout(timer);
        api[Comlink.releaseProxy]();
        apiChannel.port1.close();
        countersChannel?.port1.close();
        await worker.terminate();
      })()),
  };
}
