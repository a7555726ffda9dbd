/**
 * Process launcher. `all` runs the control plane, gateway, agent-tool server and Temporal worker in one process on
 * embedded defaults (`npm start` ends with `node --import tsx scripts/start.ts all`, after scripts/start.sh installed
 * what a fresh clone lacks); `api`, `gateway`, `mcp` or `worker` runs one role alone, for production. SIGINT/SIGTERM
 * shut down gracefully: in-flight requests finish, then everything closes.
 */
import { createApiApp } from '../api/app.js';
import { startWorker, type RunningWorker } from '../activities/worker.js';
import { ConfigError, loadConfig } from '../core/config.js';
import { DevServerError } from '../core/temporal/dev-server.js';
import { startHttpServer, type RunningHttpServer } from '../core/runtime/http-server.js';
import { createServices } from '../core/services.js';
import { migrateUp } from '../db/mikro-orm.config.js';
import { createGatewayHandler, type GatewayHandler } from '../gateway/app.js';
import { createMcpApp } from '../mcp/app.js';

const ROLES = ['api', 'gateway', 'mcp', 'worker'] as const;
type Role = (typeof ROLES)[number];

function parseRoles(args: string[]): { roles: Set<Role>; allInOne: boolean } {
  const words = args.flatMap((a) => a.split(',')).filter(Boolean);
  if (words.length === 0 || words.includes('all')) return { roles: new Set(ROLES), allInOne: true };
  const unknown = words.filter((w) => !(ROLES as readonly string[]).includes(w));
  if (unknown.length) throw new Error(`Unknown role(s): ${unknown.join(', ')}. Use all, ${ROLES.join(', ')}.`);
  return { roles: new Set(words as Role[]), allInOne: false };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  // `npm start -- --demo` (or DEMO_CATALOG=1): import the public directory into an empty catalog at start.
  const demo = args.includes('--demo');
  const { roles, allInOne } = parseRoles(args.filter((a) => a !== '--demo'));
  const config = loadConfig();
  const services = await createServices(config);
  const log = services.logger;

  if (config.migrateOnStart ?? allInOne) {
    const applied = await migrateUp(services.orm);
    if (applied.length) log.info({ applied }, 'migrations applied');
  }
  if ((demo || config.demoCatalog) && (await services.directoryImport.catalogEmpty())) {
    log.info('demo catalog: importing the public APIs directory (first start only)');
    const report = await services.directoryImport.importFile();
    log.info({ inserted: report.inserted, indexed: report.indexed }, 'demo catalog imported');
  }

  const servers: RunningHttpServer[] = [];
  let worker: RunningWorker | undefined;
  let closeMcp: (() => Promise<void>) | undefined;
  let closeGateway: (() => Promise<void>) | undefined;
  let gateway: GatewayHandler | undefined;
  const common = { host: config.host, logger: log, graceMs: config.shutdownGraceMs };

  if (roles.has('api')) {
    const app = createApiApp(services);
    servers.push(await startHttpServer({ ...common, name: 'api', port: config.ports.api, handler: app.callback() }));
  }
  if (roles.has('gateway')) {
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
  if (roles.has('worker')) worker = await startWorker(services);

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
    await step('mcp sessions', async () => closeMcp?.());
    await step('gateway', async () => closeGateway?.());
    await step('worker', async () => worker?.shutdown());
    await step('services', () => services.close());
    log.info('stopped');
    await new Promise<void>((resolve) => log.flush(() => resolve()));
    process.exit(0);
  };
  process.on('SIGINT', (s) => void shutdown(s));
  process.on('SIGTERM', (s) => void shutdown(s));
  worker?.done.catch((err: unknown) => {
    log.fatal({ err }, 'temporal worker stopped unexpectedly');
    void shutdown('worker-failure');
  });

  const label: Record<string, string> = { api: 'control plane', gateway: 'gateway', mcp: 'agent tools' };
  const lines = servers.map((s) => `  ${label[s.name]!.padEnd(15)} ${s.url}${s.name === 'mcp' ? '/mcp' : ''}`);
  if (worker) lines.push(`  ${'worker'.padEnd(15)} task queue "${config.temporal.taskQueue}"`);
  if (services.runtime.temporalUiUrl) lines.push(`  ${'Temporal UI'.padEnd(15)} ${services.runtime.temporalUiUrl}`);
  const backends = [
    services.runtime.databaseBackend === 'pglite' ? 'PGlite (embedded)' : 'Postgres',
    services.counters.backend === 'memory' ? 'in-process counters' : 'Redis',
    config.temporal.kind === 'embedded' ? 'Temporal dev server' : `Temporal at ${config.temporal.address}`,
    config.mail.kind === 'console' ? 'mail to console' : 'SMTP',
  ];
  console.log(`\nMarketplace is running (${backends.join(', ')}):\n${lines.join('\n')}\n`);
  log.info({ surfaces: Object.fromEntries(servers.map((s) => [s.name, s.url])), roles: [...roles] }, 'ready');
}

process.on('unhandledRejection', (reason) => {
  console.error('Unhandled promise rejection:', reason);
  process.exit(1);
});

main().catch((err: unknown) => {
  // Problems the person starting us must fix print as their message alone; anything else with its stack.
  console.error(err instanceof ConfigError || err instanceof DevServerError ? err.message : err);
  process.exit(1);
});
