/**
 * The body of `npm run admin -- <command>` (scripts/admin.ts): parses the arguments, opens its dependencies and runs
 * one operator command, writing its JSON result on stdout and audit lines and errors on stderr. The script runs it on
 * its own connection; the running marketplace runs it with its own services when the script hands the command over
 * its operator socket (platform/operators/ops-server.ts). Returns the exit code.
 */
import { parseArgs } from 'node:util';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ReconciliationService } from '../../core/billing/reconciliation.service.js';
import { systemClock } from '../../core/clock.js';
import { ConfigError, type Config } from '../../core/config.js';
import type { GatewayEvents } from '../../core/spend/gateway-events.js';
import type { LedgerService } from '../../core/billing/ledger.service.js';
import { createLogger, type Logger } from '../../core/logger.js';
import { rotateSecrets } from '../rotate-secrets.js';
import { resolveSecretsKey, SecretBox } from '../../core/secrets/secret-box.js';
import { Org } from '../../db/entities/index.js';
import { println, type CommandIO } from './command-io.js';
import { resolveOrg } from './org-lookup.js';

export const ADMIN_USAGE = `usage: npm run admin -- <command>
  grant-credits <org> <cents> --reason <text> [--operator <name>] [--key <idempotency key>]
  suspend <org> --reason <text> [--operator <name>]
  unsuspend <org> [--operator <name>]
  set-credit-limit <org> <cents|default> --reason <text> [--operator <name>]
  reconcile
  rotate-secrets [--dry-run]
<org> is an org id (org_…), its profile slug, or the email of one of its owners.`;

class UsageError extends Error {}

export interface AdminDeps {
  config: Config;
  orm: MikroORM;
  ledger: LedgerService;
  events: GatewayEvents;
}

/** Opens the dependencies (the audit logger is the command's, on its stderr); close() releases what it opened. */
export type OpenAdminDeps = (audit: Logger) => Promise<{ deps: AdminDeps; close(): Promise<void> }>;

interface Parsed {
  command: string;
  args: string[];
  values: { reason?: string; operator?: string; key?: string; 'dry-run'?: boolean };
}

function parseAdminArgs(argv: string[]): Parsed {
  // Negative amounts (`-50`) are values, not flags: keep them out of the option parser.
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
  const positionals = parsed.positionals.map((p) =>
    p.replace(/^__neg(\d+)$/, (_m, i: string) => negatives.get(Number(i)) ?? p),
  );
  const [command, ...args] = positionals;
  if (!command) throw new UsageError('missing command');
  return { command, args, values: parsed.values };
}

interface Run {
  p: Parsed;
  deps: AdminDeps;
  audit: Logger;
  operator: string;
  io: CommandIO;
}

/** The org a command names (id, slug or owner email: org-lookup.ts); a name matching none fails with exit code 1. */
async function orgOf(deps: AdminDeps, name: string): Promise<string> {
  return (await resolveOrg(deps.orm.em.fork(), name)).id;
}

async function grantCredits({ p, deps, audit, operator, io }: Run): Promise<number> {
  const [name, rawCents] = p.args;
  const cents = Number(rawCents);
  if (!name || !Number.isSafeInteger(cents) || cents === 0)
    throw new UsageError('grant-credits needs an org and a non-zero integer of cents');
  if (!p.values.reason) throw new UsageError('--reason is required');
  const orgId = await orgOf(deps, name);
  const entry = await deps.ledger.post({
    orgId,
    kind: cents > 0 ? 'grant' : 'adjustment',
    amountCents: cents,
    idempotencyKey: p.values.key,
    reference: `admin:${operator}`,
    memo: p.values.reason,
  });
  await deps.events.orgChanged(orgId);
  audit.info(
    { action: 'grant-credits', operator, org_id: orgId, cents, reason: p.values.reason, ledger_entry: entry.id },
    'admin action',
  );
  println(
    io.stdout,
    JSON.stringify({
      ok: true,
      org_id: orgId,
      ledger_entry: entry.id,
      balance_after_cents: entry.balanceAfterCents,
      replayed: entry.replayed,
    }),
  );
  return 0;
}

async function suspension({ p, deps, audit, operator, io }: Run): Promise<number> {
  const { command, values } = p;
  const [name] = p.args;
  if (!name) throw new UsageError(`${command} needs an org`);
  if (command === 'suspend' && !values.reason) throw new UsageError('--reason is required');
  const orgId = await orgOf(deps, name);
  const em = deps.orm.em.fork();
  const org = await em.findOneOrFail(Org, orgId);
  org.suspended = command === 'suspend';
  org.suspendedReason = command === 'suspend' ? `operator: ${values.reason}` : null;
  await em.flush();
  await deps.events.orgChanged(orgId);
  audit.info({ action: command, operator, org_id: orgId, reason: values.reason ?? null }, 'admin action');
  println(io.stdout, JSON.stringify({ ok: true, org_id: orgId, suspended: org.suspended }));
  return 0;
}

async function setCreditLimit({ p, deps, audit, operator, io }: Run): Promise<number> {
  // A card-billed org's bound on unpaid usage between charges; `default` returns to CARD_CREDIT_LIMIT_CENTS.
  const [name, raw] = p.args;
  const cents = raw === 'default' ? null : Number(raw);
  if (!name || (cents !== null && (!Number.isSafeInteger(cents) || cents < 0)))
    throw new UsageError('set-credit-limit needs an org and a whole number of cents >= 0, or "default"');
  if (!p.values.reason) throw new UsageError('--reason is required');
  const orgId = await orgOf(deps, name);
  const em = deps.orm.em.fork();
  const org = await em.findOneOrFail(Org, orgId);
  org.creditLimitCents = cents;
  await em.flush();
  await deps.events.orgChanged(orgId);
  audit.info(
    { action: p.command, operator, org_id: orgId, credit_limit_cents: cents, reason: p.values.reason },
    'admin action',
  );
  println(
    io.stdout,
    JSON.stringify({
      ok: true,
      org_id: orgId,
      credit_limit_cents: cents ?? deps.config.billing.cardCreditLimitCents,
      default: cents === null,
    }),
  );
  return 0;
}

async function reconcile({ deps, audit, io }: Run): Promise<number> {
  const { orm, ledger } = deps;
  const report = await new ReconciliationService({ orm, ledger, clock: systemClock, logger: audit }).run();
  println(io.stdout, JSON.stringify(report, null, 2));
  return report.ok ? 0 : 1;
}

/** Re-seals every stored secret under SECRETS_KEY; in the running marketplace too (it holds the same keys). */
async function rotate({ p, deps, audit, operator, io }: Run): Promise<number> {
  const { config } = deps;
  const dryRun = p.values['dry-run'] === true;
  const box = new SecretBox(resolveSecretsKey(config.secretsKey, config.dataDir).key, config.previousSecretsKeys);
  const result = await rotateSecrets({ orm: deps.orm, box, dryRun });
  const { failures, ...counts } = result;
  audit.info(
    { action: p.command, operator, ...counts, failed_ids: failures.map((f) => `${f.table}:${f.id}`) },
    'admin action',
  );
  println(io.stdout, JSON.stringify(result, null, 2));
  if (!result.ok)
    println(
      io.stderr,
      `error: ${result.failed} stored secret(s) open under none of the configured keys (SECRETS_KEY ` +
        `${result.key_id}, SECRETS_KEY_PREVIOUS ${result.previous_key_ids.join(', ') || 'unset'}); ` +
        `${result.resealed ? `${result.resealed} other(s) were re-sealed` : 'nothing was re-sealed'}. Add the ` +
        'key they were sealed under to SECRETS_KEY_PREVIOUS and run again.',
    );
  return result.ok ? 0 : 1;
}

const COMMANDS: Record<string, (run: Run) => Promise<number>> = {
  'grant-credits': grantCredits,
  suspend: suspension,
  unsuspend: suspension,
  'set-credit-limit': setCreditLimit,
  reconcile,
  'rotate-secrets': rotate,
};

/**
 * Runs `npm run admin -- <argv>`; `defaultOperator` names the operator when --operator is absent (the user who typed
 * the command). Usage errors answer 2, other failures 1 (an org name that matches no organization among them).
 */
export async function runAdmin(
  argv: string[],
  open: OpenAdminDeps,
  io: CommandIO,
  defaultOperator = 'operator',
): Promise<number> {
  try {
    const p = parseAdminArgs(argv);
    const operator = p.values.operator ?? defaultOperator;
    // Audit lines go to stderr; stdout carries only the command's JSON result.
    const audit = createLogger({ level: 'info', name: 'admin' }, io.stderr);
    const opened = await open(audit);
    const { deps } = opened;
    try {
      const handler = COMMANDS[p.command];
      if (!handler) throw new UsageError(`unknown command "${p.command}"`);
      return await handler({ p, deps, audit, operator, io });
    } finally {
      await opened.close();
    }
  } catch (err) {
    if (err instanceof UsageError) {
      println(io.stderr, `error: ${err.message}\n${ADMIN_USAGE}`);
      return 2;
    }
    println(
      io.stderr,
      err instanceof ConfigError ? err.message : `error: ${err instanceof Error ? err.message : String(err)}`,
    );
    return 1;
  }
}
