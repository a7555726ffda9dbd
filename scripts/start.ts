/**
 * Process launcher. `all` runs the control plane, gateway, agent-tool server and Temporal worker in one process on
 * embedded defaults (`npm start` ends with `node --import tsx scripts/start.ts all`, after scripts/start.sh installed
 * what a fresh clone lacks); `api`, `gateway`, `mcp` or `worker` runs one role alone, for production. SIGINT/SIGTERM
 * shut down gracefully: in-flight requests finish, then everything closes.
 *
 * `gateway --processes N` (or GATEWAY_PROCESSES=N) runs the gateway as N node:cluster workers on one port
 * (platform/runtime/cluster.ts): this process becomes their supervisor and serves nothing itself. Only the gateway role
 * alone may fork; the other roles keep their single process (run them as separate starts).
 */
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { createApiApp } from '../api/app.js';
import { installRuntimeOnce, startWorker, type RunningWorker } from '../activities/worker.js';
import { startMetricsServer } from '../platform/metrics-server.js';
import { ConfigError, loadConfig, type Config } from '../core/config.js';
import { createLogger, type Logger } from '../core/logger.js';
import { superviseGatewayWorkers, WORKER_READY } from '../platform/runtime/cluster.js';
import { DevServerError } from '../platform/temporal-dev-server.js';
import { startHttpServer, type RunningHttpServer } from '../platform/runtime/http-server.js';
import { createServices, type Services } from '../platform/services.js';
import { seedDemo } from '../core/demo/demo-seed.js';
import { withDemoUpstream } from '../core/demo/demo-upstream.js';
import { otlpTracesEndpoint, startTracing } from '../platform/tracing.js';
import { initOrm, migrateUp } from '../db/mikro-orm.config.js';
import { createGatewayHandler } from '../gateway/app.js';
import type { InProcessGateway } from '../gateway/in-process.js';
import { startGatewayThread, type GatewayThread } from '../gateway/thread.js';
import { RemoteSpendStore } from '../platform/remote-stores.js';
import { RedisCounterStore } from '../core/counters/index.js';
import { enforceRedisRequirements, RedisRequirementsError } from '../core/spend/redis-requirements.js';
import { createMcpApp } from '../mcp/app.js';
import { startOpsServerOrWarn, type OpsServer } from '../platform/operators/ops-server.js';

const ROLES = ['api', 'gateway', 'mcp', 'worker'] as const;
const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string }
).version;
type Role = (typeof ROLES)[number];

function parseRoles(args: string[]): { roles: Set<Role>; allInOne: boolean } {
  const words = args.flatMap((a) => a.split(',')).filter(Boolean);
  if (words.length === 0 || words.includes('all')) return { roles: new Set(ROLES), allInOne: true };
  const unknown = words.filter((w) => !(ROLES as readonly string[]).includes(w));
  if (unknown.length) throw new Error(`Unknown role(s): ${unknown.join(', ')}. Use all, ${ROLES.join(', ')}.`);
  return { roles: new Set(words as Role[]), allInOne: false };
}

/** `--processes N` / `--processes=N`, removed from the arguments; undefined when absent. */
function takeProcesses(args: string[]): { rest: string[]; processes?: string } {
  const rest: string[] = [];
  let processes: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--processes') {
      processes = args[++i];
      if (processes === undefined) throw new ConfigError(['--processes: needs a number']);
    } else if (a.startsWith('--processes=')) processes = a.slice('--processes='.length);
    else rest.push(a);
  }
  return { rest, processes };
}

/**
 * The supervisor of N gateway workers: applies migrations if asked (once, before forking, so workers do not race),
 * forks, says ready when all are, and on a signal waits for every worker's graceful shutdown.
 */
async function runGatewayPrimary(config: Config): Promise<void> {
  const log = createLogger({ level: config.logLevel });
  if (config.migrateOnStart && config.database.kind === 'postgres') {
    const orm = await initOrm({ url: config.database.url, poolMax: 1 });
    try {
      const applied = await migrateUp(orm);
      if (applied.length) log.info({ applied }, 'migrations applied');
    } finally {
      await orm.close();
    }
  }
  if (config.demoCatalog) log.warn('DEMO_CATALOG is ignored by a multi-process gateway; import from another role');
  const processes = config.gateway.processes;
  const url = config.urls.gateway;
  const supervisor = superviseGatewayWorkers({
    processes,
    logger: log,
    graceMs: config.shutdownGraceMs,
    onReady: () => {
      console.log(`\nMarketplace gateway is running as ${processes} processes:\n  ${'gateway'.padEnd(15)} ${url}\n`);
      log.info({ surfaces: { gateway: url }, roles: ['gateway'], processes }, 'ready');
    },
    onFailed: (code) => exitAfterFlush(log, code),
  });
  let signalled = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (signalled) return;
    signalled = true;
    log.info({ signal }, 'shutting down: stopping the gateway workers');
    void supervisor.stop(signal).then((code) => {
      log.info('stopped');
      exitAfterFlush(log, code);
    });
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

/** A free loopback port (for a listener we do not open ourselves). */
function loopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** `--demo`'s sample APIs (core/demo/demo-seed.ts); a failure is logged and the marketplace runs without them. */
async function seedDemoOrWarn(services: Services, log: Logger): Promise<void> {
  try {
    const report = await seedDemo(services);
    if (report.created.length || report.published.length || report.moved.length || report.history) {
      log.info({ ...report, history: report.history ?? undefined }, 'demo: sample APIs ready');
    }
  } catch (err) {
    log.warn({ err }, 'demo: the sample APIs could not be set up; the rest of the marketplace runs');
  }
}

function exitAfterFlush(log: ReturnType<typeof createLogger>, code: number): void {
  log.flush(() => process.exit(code));
}

async function main(): Promise<void> {
  const { rest: args, processes } = takeProcesses(process.argv.slice(2));
  // `npm start -- --demo` (or DEMO_CATALOG=1): import the public directory into an empty catalog at start.
  const demo = args.includes('--demo');
  const { roles, allInOne } = parseRoles(args.filter((a) => a !== '--demo'));
  // The flag is DEMO_CATALOG for the whole process: the demo upstream is served and allowed by name (core/demo/).
  const overrides = { GATEWAY_PROCESSES: processes, ...(demo ? { DEMO_CATALOG: 'true' } : {}) };
  const config = loadConfig(undefined, undefined, overrides);
  const clustered = config.gateway.processes > 1;
  if (clustered && (allInOne || roles.size !== 1 || !roles.has('gateway'))) {
    throw new ConfigError([
      `GATEWAY_PROCESSES=${config.gateway.processes}: only the gateway role alone runs several processes; ` +
        'start it separately (`scripts/start.ts gateway --processes N`) and the other roles in their own processes',
    ]);
  }
  if (clustered && cluster.isPrimary) return runGatewayPrimary(config);

  // Before the services: their Temporal client takes the tracing interceptor only when tracing is on.
  const traced = {
    serviceName: `${process.env.OTEL_SERVICE_NAME?.trim() || 'svc-marketplace'}${allInOne ? '' : `-${[...roles].join('-')}`}`,
    endpoint: otlpTracesEndpoint(),
    serviceVersion: PACKAGE_VERSION,
  };
  const tracing = startTracing(traced);
  // The gateway beside other roles runs on a thread of its own (gateway/thread.ts); on the embedded
  // defaults that thread holds the memory spend store, and this thread reaches it through `memorySpend`.
  const gatewayThreaded = roles.has('gateway') && roles.size > 1 && !cluster.isWorker;
  const memorySpend = gatewayThreaded ? new RemoteSpendStore() : undefined;
  const services = await createServices(config, { memorySpend });
  const log = services.logger;
  if (tracing.enabled) log.info({ endpoint: otlpTracesEndpoint() }, 'tracing: exporting spans over OTLP');

  // A cluster worker leaves migrations and the demo import to its primary.
  if (!cluster.isWorker && (config.migrateOnStart ?? allInOne)) {
    const applied = await migrateUp(services.orm);
    if (applied.length) log.info({ applied }, 'migrations applied');
  }
  if (!cluster.isWorker && config.demoCatalog && (await services.directoryImport.catalogEmpty())) {
    log.info('demo catalog: importing the public APIs directory (first start only)');
    const report = await services.directoryImport.importFile();
    log.info({ inserted: report.inserted, indexed: report.indexed }, 'demo catalog imported');
  }

  // On the embedded database this process is its only client: operator commands (`npm run admin`, `npm run
  // catalog:import`) are handed to it on a socket beside the data and run here (platform/operators/ops-server.ts).
  const ops: OpsServer | undefined =
    config.database.kind === 'pglite' ? await startOpsServerOrWarn(services, config.database.dataDir) : undefined;

  // The money path (the gateway, and the agent-tool server's in-process gateway) refuses a Redis that breaks its
  // durability contract (docs/durability.md): checked now and at every reconnect.
  if ((roles.has('gateway') || roles.has('mcp')) && services.counters instanceof RedisCounterStore) {
    const spend = services.spend;
    await enforceRedisRequirements(
      services.counters.client,
      { production: config.env === 'production', check: config.redisRequirementsCheck },
      log,
      (violation) => (spend.refusal = violation),
    );
  }

  const servers: RunningHttpServer[] = [];
  let worker: RunningWorker | undefined;
  let closeMcp: (() => Promise<void>) | undefined;
  let closeGateway: (() => Promise<void>) | undefined;
  let gateway: InProcessGateway | undefined;
  let gatewayThread: GatewayThread | undefined;
  const common = { host: config.host, logger: log, graceMs: config.shutdownGraceMs };

  if (roles.has('api')) {
    const app = createApiApp(services);
    // With the demo on, the control plane's port also serves the sample APIs' upstream (core/demo/demo-upstream.ts).
    const handler = config.demoCatalog ? withDemoUpstream(app.callback()) : app.callback();
    servers.push(await startHttpServer({ ...common, name: 'api', port: config.ports.api, handler }));
  }
  if (gatewayThreaded) {
    gatewayThread = await startGatewayThread({
      overrides,
      databaseUrl: services.runtime.databaseUrl,
      temporalAddress: services.runtime.temporalAddress,
      logger: log,
      graceMs: config.shutdownGraceMs,
      tracing: traced.endpoint ? { ...traced, endpoint: traced.endpoint } : undefined,
      embedded:
        memorySpend && services.spend === memorySpend ? { counters: services.counters, spend: memorySpend } : undefined,
    });
    const thread = gatewayThread;
    gateway = thread.gateway;
    closeGateway = () => thread.stop();
    if (config.metrics) services.metrics.addRemote(() => thread.metrics());
  } else if (roles.has('gateway')) {
    const handler = createGatewayHandler(services);
    gateway = handler;
    closeGateway = () => handler.close();
    servers.push(
      await startHttpServer({
        ...common,
        name: 'gateway',
        port: config.ports.gateway,
        handler,
      }),
    );
  }
  if (roles.has('mcp')) {
    // call_api and run_probe use the gateway in process: the gateway role's handler when this process has one.
    const mcp = createMcpApp(services, { gateway });
    closeMcp = () => mcp.close();
    servers.push(
      await startHttpServer({ ...common, name: 'mcp', port: config.ports.mcp, handler: mcp.app.callback() }),
    );
  }
  let temporalMetrics: string | undefined;
  if (roles.has('worker') && config.metrics) {
    // The Temporal SDK serves its own series on a loopback port; this process's /metrics appends them.
    temporalMetrics = `127.0.0.1:${await loopbackPort()}`;
    installRuntimeOnce('WARN', { prometheusBindAddress: temporalMetrics });
  }
  if (roles.has('worker')) worker = await startWorker(services, { tracing });
  // The sample APIs once their upstream listens: imported from it over HTTP like any provider's (core/demo/).
  if (!cluster.isWorker && config.demoCatalog && roles.has('api')) await seedDemoOrWarn(services, log);
  if (config.metrics) {
    if (roles.has('api')) services.metrics.watchLedgerDrift(async () => (await services.ledger.findDrift()).length);
    // Gateway processes of one cluster share METRICS_PORT's neighbourhood: worker N serves on METRICS_PORT + N.
    const port = config.metrics.port + (cluster.isWorker ? (cluster.worker?.id ?? 0) : 0);
    const source = temporalMetrics;
    servers.push(
      await startMetricsServer(services.metrics, {
        host: config.metrics.host,
        port,
        logger: log,
        more: source
          ? async () => (await fetch(`http://${source}/metrics`, { signal: AbortSignal.timeout(2_000) })).text()
          : undefined,
      }),
    );
  }

  // A terminal's Ctrl-C reaches the whole process group and npm relays it too, so one keypress can arrive twice:
  // only a repeat more than a second later means "stop waiting".
  let stoppingSince: number | undefined;
  const shutdown = async (signal: string) => {
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince > 1_000) {
        log.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      return;
    }
    stoppingSince = Date.now();
    log.info({ signal }, 'shutting down: finishing in-flight work');
    const step = async (name: string, fn: () => Promise<unknown>) => {
      const t = performance.now();
      await fn();
      log.debug({ step: name, ms: Math.round(performance.now() - t) }, 'shutdown step done');
    };
    await step('http servers', () => Promise.allSettled(servers.map((s) => s.close())));
    await step('operator socket', async () => ops?.stop());
    await step('mcp sessions', async () => closeMcp?.());
    await step('gateway', async () => closeGateway?.());
    await step('worker', async () => worker?.shutdown());
    await step('services', () => services.close());
    await step('tracing', () => tracing.shutdown());
    log.info('stopped');
    await new Promise<void>((resolve) => log.flush(() => resolve()));
    process.exit(0);
  };
  process.on('SIGINT', (s) => void shutdown(s));
  process.on('SIGTERM', (s) => void shutdown(s));
  if (cluster.isWorker) {
    // The supervisor gone (killed, or crashed) means nobody restarts or stops us: finish in-flight work and exit.
    process.on('disconnect', () => void shutdown('supervisor-gone'));
    process.send?.(WORKER_READY);
    log.info({ worker: cluster.worker?.id, url: servers[0]?.url }, 'gateway worker listening');
    return;
  }
  worker?.done.catch((err: unknown) => {
    log.fatal({ err }, 'temporal worker stopped unexpectedly');
    void shutdown('worker-failure');
  });
  gatewayThread?.done.catch((err: unknown) => {
    log.fatal({ err }, 'the gateway thread stopped unexpectedly');
    void shutdown('gateway-failure');
  });

  const label: Record<string, string> = {
    api: 'control plane',
    gateway: 'gateway',
    mcp: 'agent tools',
    metrics: 'metrics',
  };
  const suffix: Record<string, string> = { mcp: '/mcp', metrics: '/metrics' };
  // The gateway thread's listener beside this thread's, in the usual order (control plane, gateway, agent tools).
  const surfaces = servers.map((s) => ({ name: s.name, url: s.url }));
  if (gatewayThread) surfaces.splice(roles.has('api') ? 1 : 0, 0, { name: 'gateway', url: gatewayThread.url });
  const lines = surfaces.map((s) => `  ${label[s.name]!.padEnd(15)} ${s.url}${suffix[s.name] ?? ''}`);
  if (worker) lines.push(`  ${'worker'.padEnd(15)} task queue "${config.temporal.taskQueue}"`);
  if (services.runtime.temporalUiUrl) lines.push(`  ${'Temporal UI'.padEnd(15)} ${services.runtime.temporalUiUrl}`);
  const backends = [
    services.runtime.databaseBackend === 'pglite' ? 'PGlite (embedded)' : 'Postgres',
    services.counters.backend === 'memory' ? 'in-process counters' : 'Redis',
    config.temporal.kind === 'embedded' ? 'Temporal dev server' : `Temporal at ${config.temporal.address}`,
    config.mail.kind === 'console' ? 'mail to console' : 'SMTP',
  ];
  console.log(`\nMarketplace is running (${backends.join(', ')}):\n${lines.join('\n')}\n`);
  log.info({ surfaces: Object.fromEntries(surfaces.map((s) => [s.name, s.url])), roles: [...roles] }, 'ready');
}

process.on('unhandledRejection', (reason) => {
  console.error('Unhandled promise rejection:', reason);
  process.exit(1);
});

main().catch((err: unknown) => {
  // Problems the person starting us must fix print as their message alone; anything else with its stack.
  const plain = err instanceof ConfigError || err instanceof DevServerError || err instanceof RedisRequirementsError;
  console.error(plain ? err.message : err);
  process.exit(1);
});
