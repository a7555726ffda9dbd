/**
 * Operator commands (`npm run admin -- <command>`), against DATABASE_URL (or the embedded database when the
 * marketplace is not running). Money moves only as ledger rows, with the operator and reason recorded on the row;
 * every action is also logged as a structured audit line. A change the gateways cache (suspension, balance) is announced
 * on the counter store's pub/sub once it is committed (REDIS_URL; core/gateway-events.ts), so every gateway applies it
 * to its next call.
 *
 *   grant-credits <org_id> <cents> --reason <text> [--operator <name>] [--key <idempotency key>]
 *   suspend <org_id> --reason <text> [--operator <name>]
 *   unsuspend <org_id> [--operator <name>]
 *   set-credit-limit <org_id> <cents|default> --reason <text> [--operator <name>]
 *   reconcile
 *   rotate-secrets [--dry-run]     re-seal every stored secret under SECRETS_KEY (docs/operations.md, "Rotating
 *                                  SECRETS_KEY"); refuses, writing nothing, if a value opens under no configured key
 */
import { parseArgs } from 'node:util';
import { ReconciliationService } from '../core/billing/reconciliation.service.js';
import { systemClock } from '../core/clock.js';
import { ConfigError, loadConfig } from '../core/config.js';
import { createCounterStore, RedisCounterStore } from '../core/counters/index.js';
import { RedisSpendStore } from '../core/spend/redis-spend-store.js';
import { GatewayEvents } from '../core/gateway-events.js';
import { LedgerService } from '../core/ledger/ledger.service.js';
import { createLogger } from '../core/logger.js';
import { rotateSecrets } from '../core/secrets/rotate-secrets.js';
import { resolveSecretsKey, SecretBox } from '../core/secrets/secret-box.js';
import { startEmbeddedDatabase } from '../db/embedded.js';
import { Org } from '../db/entities/index.js';
import { initOrm } from '../db/mikro-orm.config.js';

const USAGE = `usage: npm run admin -- <command>
  grant-credits <org_id> <cents> --reason <text> [--operator <name>] [--key <idempotency key>]
  suspend <org_id> --reason <text> [--operator <name>]
  unsuspend <org_id> [--operator <name>]
  set-credit-limit <org_id> <cents|default> --reason <text> [--operator <name>]
  reconcile
  rotate-secrets [--dry-run]`;

class UsageError extends Error {}

async function main(): Promise<number> {
  // Negative amounts (`-50`) are values, not flags: keep them out of the option parser.
  const argv = process.argv.slice(2);
  const negatives = new Map<number, string>();
  argv.forEach((a, i) => /^-\d+$/.test(a) && negatives.set(i, a));
  let parsed;
  try {
    parsed = parseArgs({
      args: argv.map((a, i) => (negatives.has(i) ? `__neg${i}` : a)),
      allowPositionals: true,
      options: {
        reason: { type: 'string' },
        operator: { type: 'string' },
        key: { type: 'string' },
        'dry-run': { type: 'boolean' },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const values = parsed.values;
  const positionals = parsed.positionals.map((p) =>
    p.replace(/^__neg(\d+)$/, (_m, i: string) => negatives.get(Number(i)) ?? p),
  );
  const [command, ...args] = positionals;
  if (!command) throw new UsageError('missing command');
  const operator = values.operator ?? process.env.USER ?? 'operator';
  const config = loadConfig();
  // Audit lines go to stderr; stdout carries only the command's JSON result.
  const audit = createLogger({ level: 'info', name: 'admin' }, process.stderr);
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
  try {
    switch (command) {
      case 'grant-credits': {
        const [orgId, rawCents] = args;
        const cents = Number(rawCents);
        if (!orgId || !Number.isSafeInteger(cents) || cents === 0)
          throw new UsageError('grant-credits needs an org id and a non-zero integer of cents');
        if (!values.reason) throw new UsageError('--reason is required');
        const entry = await ledger.post({
          orgId,
          kind: cents > 0 ? 'grant' : 'adjustment',
          amountCents: cents,
          idempotencyKey: values.key,
          reference: `admin:${operator}`,
          memo: values.reason,
        });
        await events.orgChanged(orgId);
        audit.info(
          { action: 'grant-credits', operator, org_id: orgId, cents, reason: values.reason, ledger_entry: entry.id },
          'admin action',
        );
        console.log(
          JSON.stringify({
            ok: true,
            ledger_entry: entry.id,
            balance_after_cents: entry.balanceAfterCents,
            replayed: entry.replayed,
          }),
        );
        return 0;
      }
      case 'suspend':
      case 'unsuspend': {
        const [orgId] = args;
        if (!orgId) throw new UsageError(`${command} needs an org id`);
        if (command === 'suspend' && !values.reason) throw new UsageError('--reason is required');
        const em = orm.em.fork();
        const org = await em.findOne(Org, orgId);
        if (!org) throw new UsageError(`no org ${orgId}`);
        org.suspended = command === 'suspend';
        org.suspendedReason = command === 'suspend' ? `operator: ${values.reason}` : null;
        await em.flush();
        await events.orgChanged(orgId);
        audit.info({ action: command, operator, org_id: orgId, reason: values.reason ?? null }, 'admin action');
        console.log(JSON.stringify({ ok: true, org_id: orgId, suspended: org.suspended }));
        return 0;
      }
      case 'set-credit-limit': {
        // A card-billed org's bound on unpaid usage between charges; `default` returns to CARD_CREDIT_LIMIT_CENTS.
        const [orgId, raw] = args;
        const cents = raw === 'default' ? null : Number(raw);
        if (!orgId || (cents !== null && (!Number.isSafeInteger(cents) || cents < 0)))
          throw new UsageError('set-credit-limit needs an org id and a whole number of cents >= 0, or "default"');
        if (!values.reason) throw new UsageError('--reason is required');
        const em = orm.em.fork();
        const org = await em.findOne(Org, orgId);
        if (!org) throw new UsageError(`no org ${orgId}`);
        org.creditLimitCents = cents;
        await em.flush();
        await events.orgChanged(orgId);
        audit.info(
          { action: command, operator, org_id: orgId, credit_limit_cents: cents, reason: values.reason },
          'admin action',
        );
        console.log(
          JSON.stringify({
            ok: true,
            org_id: orgId,
            credit_limit_cents: cents ?? config.billing.cardCreditLimitCents,
            default: cents === null,
          }),
        );
        return 0;
      }
      case 'reconcile': {
        const report = await new ReconciliationService({ orm, ledger, clock: systemClock, logger: audit }).run();
        console.log(JSON.stringify(report, null, 2));
        return report.ok ? 0 : 1;
      }
      case 'rotate-secrets': {
        const dryRun = values['dry-run'] === true;
        const box = new SecretBox(resolveSecretsKey(config.secretsKey, config.dataDir).key, config.previousSecretsKeys);
        const result = await rotateSecrets({ orm, box, dryRun });
        const { failures, ...counts } = result;
        audit.info(
          { action: command, operator, ...counts, failed_ids: failures.map((f) => `${f.table}:${f.id}`) },
          'admin action',
        );
        console.log(JSON.stringify(result, null, 2));
        if (!result.ok)
          console.error(
            `error: ${result.failed} stored secret(s) open under none of the configured keys (SECRETS_KEY ` +
              `${result.key_id}, SECRETS_KEY_PREVIOUS ${result.previous_key_ids.join(', ') || 'unset'}); ` +
              `${result.resealed ? `${result.resealed} other(s) were re-sealed` : 'nothing was re-sealed'}. Add the ` +
              'key they were sealed under to SECRETS_KEY_PREVIOUS and run again.',
          );
        return result.ok ? 0 : 1;
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } finally {
    await counters.close();
    await orm.close(true);
    await embedded?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      console.error(`error: ${err.message}\n${USAGE}`);
      process.exit(2);
    }
    console.error(
      err instanceof ConfigError ? err.message : `error: ${err instanceof Error ? err.message : String(err)}`,
    );
    process.exit(1);
  },
);
