/** `svc keys list|create|update|revoke`: the org's API keys and their spend caps (amounts in cents or `$`). */
import type { Command } from 'commander';
import { parseList, parseMoney } from '../args.js';
import { UsageError } from '../client.js';
import { cliOf, showing } from '../context.js';
import { fields, money, table, when } from '../format.js';
import { OPERATIONS as OPS } from '../operations.js';
import type { KeySummaryView } from '../../core/keys/keys.schemas.js';

interface CapOptions {
  budget?: number | null;
  perCallMax?: number | null;
  dailyCap?: number | null;
  approvalMode?: boolean;
}

const capsBody = (o: CapOptions) => ({
  budget_cents: o.budget,
  per_call_max_cents: o.perCallMax,
  daily_cap_cents: o.dailyCap,
  approval_mode: o.approvalMode,
});

function withCapOptions(cmd: Command): Command {
  return cmd
    .option(
      '--budget <amount>',
      'lifetime spend cap (the key and its child keys together): cents (500), dollars ($5) or "none"',
      parseMoney,
    )
    .option('--per-call-max <amount>', 'most one call may cost', parseMoney)
    .option('--daily-cap <amount>', 'spend cap per UTC day (the key and its child keys together)', parseMoney)
    .option('--approval-mode', 'spend needs a person’s approval')
    .option('--no-approval-mode', 'turn approval mode off');
}

function keyDetails(k: KeySummaryView): string {
  return fields([
    ['id', k.id],
    ['name', k.name],
    ['prefix', k.keyPrefix],
    ['scopes', k.scopes.join(', ')],
    ['budget', money(k.budget_cents)],
    ['per call max', money(k.per_call_max_cents)],
    ['daily cap', money(k.daily_cap_cents)],
    ['approval mode', k.approval_mode ? 'on' : 'off'],
    ['parent key', k.parent_key_id ?? null],
    ['spent', `${money(k.spent_cents)} (incl. child keys)`],
    ['spent today', `${money(k.spent_today_cents)} (UTC day, incl. child keys)`],
    ['revoked', k.revoked_at ? when(k.revoked_at) : null],
  ]);
}

/** The one rule both spend columns follow (docs/decisions.md, "A key's spend counts its child keys"). */
export const SPEND_NOTE =
  "SPENT and TODAY (UTC day) include each key's child keys (the keys it minted): what BUDGET and DAILY limit.";

export function keysCommands(program: Command): void {
  const keys = program.command('keys').description('list, create, update and revoke API keys');

  keys
    .command('list')
    .description("list the org's API keys with their caps and spend")
    .option('--include-revoked', 'also show revoked keys')
    .action(async (opts: { includeRevoked?: boolean }, cmd: Command) => {
      const cli = cliOf(cmd);
      const query = { include_revoked: opts.includeRevoked ? 'true' : undefined, limit: 200 };
      const res = await cli.send(OPS.listKeys, { query });
      cli.print(res, (items) =>
        table(items, [
          { header: 'ID', value: (k) => k.id },
          { header: 'NAME', value: (k) => k.name, max: 24 },
          { header: 'PREFIX', value: (k) => k.keyPrefix },
          { header: 'BUDGET', value: (k) => money(k.budget_cents), align: 'right' },
          { header: 'SPENT', value: (k) => money(k.spent_cents), align: 'right' },
          { header: 'DAILY', value: (k) => money(k.daily_cap_cents), align: 'right' },
          { header: 'TODAY', value: (k) => money(k.spent_today_cents), align: 'right' },
          { header: 'PER CALL', value: (k) => money(k.per_call_max_cents), align: 'right' },
          { header: 'PARENT', value: (k) => k.parent_key_id ?? '-' },
          { header: 'SCOPES', value: (k) => k.scopes.join(',') },
          { header: 'STATE', value: (k) => (k.revoked_at ? 'revoked' : 'active') },
        ]),
      );
      cli.note(SPEND_NOTE);
    });

  withCapOptions(
    keys
      .command('create')
      .description('create an API key (the plaintext key is shown once)')
      .option('--name <name>', 'a name for the key', 'cli')
      .option('--scopes <list>', 'comma-separated scopes (default: the server’s consumer scopes)', parseList),
  ).action(async (opts: CapOptions & { name: string; scopes?: string[] }, cmd: Command) => {
    const cli = cliOf(cmd);
    const body = { name: opts.name, scopes: opts.scopes, ...capsBody(opts) };
    const res = await cli.send(OPS.createKey, { body });
    cli.print(res, (k) => `${keyDetails(k)}key:  ${k.api_key}\n`);
    cli.note('The key is shown only this once: store it now.');
  });

  withCapOptions(
    keys.command('update').description("change a key's caps").argument('<id>', 'the key id (see: svc keys list)'),
  ).action(async (id: string, opts: CapOptions, cmd: Command) => {
    const cli = cliOf(cmd);
    const body = capsBody(opts);
    if (Object.values(body).every((v) => v === undefined)) {
      throw new UsageError('give at least one of --budget, --per-call-max, --daily-cap, --[no-]approval-mode');
    }
    const res = await cli.send(OPS.patchKey, { params: { id }, body });
    cli.print(res, keyDetails);
  });

  keys
    .command('revoke')
    .description('revoke a key: it is refused from then on')
    .argument('<id>', 'the key id')
    .action(
      showing(
        OPS.revokeKey,
        (k) => `Revoked ${k.id}.\n`,
        (id: string) => ({ params: { id } }),
      ),
    );
}
