/**
 * Operator commands (`npm run admin -- <command>`), against DATABASE_URL or the embedded database. While `npm start`
 * runs on the embedded database the command runs inside it, handed over its operator socket
 * (platform/operators/ops-client.ts); otherwise here, on a connection of its own. Money moves only as ledger rows, with
 * the operator and reason recorded on the row; every action is also logged as a structured audit line. A change the
 * gateways cache (suspension, balance) is announced on the counter store's pub/sub once it is committed (REDIS_URL;
 * core/spend/gateway-events.ts), so every gateway applies it to its next call. The commands themselves live in
 * platform/operators/admin-command.ts.
 *
 *   grant-credits <org> <cents> --reason <text> [--operator <name>] [--key <idempotency key>]
 *   suspend <org> --reason <text> [--operator <name>]
 *   unsuspend <org> [--operator <name>]
 *   set-credit-limit <org> <cents|default> --reason <text> [--operator <name>]
 *   reconcile
 *   rotate-secrets [--dry-run]     re-seal every stored secret under SECRETS_KEY (docs/operations.md, "Rotating
 *                                  SECRETS_KEY"); refuses, writing nothing, if a value opens under no configured key
 *
 * <org> is an org id (`org_…`), its profile slug, or an owner's email (platform/operators/org-lookup.ts); a name that
 * matches no organization exits 1 and says so.
 */
import { ConfigError, loadConfig, type Config } from '../core/config.js';
import { createCounterStore, RedisCounterStore } from '../core/counters/index.js';
import { RedisSpendStore } from '../core/spend/redis-spend-store.js';
import { GatewayEvents } from '../core/spend/gateway-events.js';
import { LedgerService } from '../core/billing/ledger.service.js';
import type { Logger } from '../core/logger.js';
import { runAdmin } from '../platform/operators/admin-command.js';
import { processIO } from '../platform/operators/command-io.js';
import { relayIfRunning } from '../platform/operators/ops-client.js';
import { startEmbeddedDatabase } from '../db/embedded.js';
import { initOrm } from '../db/mikro-orm.config.js';

/** This script's own connection (and counter store), for DATABASE_URL or an embedded database nobody holds. */
async function open(config: Config, audit: Logger) {
  const embedded = config.database.kind === 'pglite' ? await startEmbeddedDatabase(config.database.dataDir) : undefined;
  const orm = await initOrm({
    url: config.database.kind === 'postgres' ? config.database.url : embedded!.url,
    poolMax: 2,
  });
  const ledger = new LedgerService(orm);
  // Without REDIS_URL this is an in-process store: nobody hears, and the gateway sees the change at its refresh.
  const counters = await createCounterStore(config.counters, audit);
  // The org's fast state is forgotten in Redis directly too (not only announced): a lost message cannot hide a
  // suspension from the gateways (issue 21, item 12).
  const spend = counters instanceof RedisCounterStore ? new RedisSpendStore(counters.client) : undefined;
  const events = new GatewayEvents(counters, audit, spend);
  return {
    deps: { config, orm, ledger, events },
    async close() {
      await counters.close();
      await orm.close(true);
      await embedded?.stop();
    },
  };
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const operator = process.env.USER ?? 'operator';
  // A configuration error is reported by runAdmin, after the arguments are checked (as before).
  const config = (() => {
    try {
      return loadConfig();
    } catch (err) {
      if (err instanceof ConfigError) return undefined;
      throw err;
    }
  })();
  if (config) {
    const relayed = await relayIfRunning(config, 'admin', argv);
    if (relayed !== undefined) return relayed;
  }
  return runAdmin(argv, (audit) => open(config ?? loadConfig(), audit), processIO(), operator);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
