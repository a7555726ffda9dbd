/** Money: usage history, balance, credit packs and checkout (prints the hosted checkout URL to open in a browser). */
import { InvalidArgumentError, type Command } from 'commander';
import { parseAmount, parsePositiveInt, parseNonNegativeInt } from '../args.js';
import { UsageError } from '../client.js';
import { cliOf, showing } from '../context.js';
import { fields, money, table, when } from '../format.js';
import { OPERATIONS as OPS } from '../operations.js';
import type { UsageMeta } from '../../core/usage/usage.schemas.js';

/** `2026-11-01` or a full ISO instant, as the usage route takes them. */
function parseInstant(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(value) || Number.isNaN(Date.parse(value))) {
    throw new InvalidArgumentError('expected a date (2026-11-01) or an ISO time (2026-11-01T12:00:00Z).');
  }
  return value;
}

export function billingCommands(program: Command): void {
  program
    .command('usage')
    .description('your metered calls and their cost over a time range')
    .option('--from <date>', 'start (date or ISO time; default: 30 days ago)', parseInstant)
    .option('--to <date>', 'end (date or ISO time; default: now)', parseInstant)
    .option('--key-id <id>', 'only calls made with this key')
    .option('--limit <n>', 'at most this many rows (max 200)', parsePositiveInt)
    .option('--offset <n>', 'skip this many rows', parseNonNegativeInt)
    .action(async (opts: { from?: string; to?: string; keyId?: string; limit?: number; offset?: number }, cmd) => {
      const cli = cliOf(cmd as Command);
      const query = { from: opts.from, to: opts.to, key_id: opts.keyId, limit: opts.limit, offset: opts.offset };
      const res = await cli.send(OPS.listUsage, { query });
      cli.print(res, (items, meta) => {
        const rows = table(
          items,
          [
            { header: 'TIME', value: (u) => when(u.created_at) },
            { header: 'API', value: (u) => u.api_slug },
            { header: 'CALL', value: (u) => `${u.method} ${u.path}`, max: 40 },
            { header: 'STATUS', value: (u) => u.status, align: 'right' },
            { header: 'OUTCOME', value: (u) => u.outcome },
            { header: 'COST', value: (u) => money(u.cost_cents), align: 'right' },
            { header: 'MS', value: (u) => u.latency_ms, align: 'right' },
          ],
          'No calls in this range.',
        );
        const s = meta.summary as UsageMeta['summary'] | undefined;
        const range = meta.range as { from: string; to: string } | undefined;
        const total = s
          ? `${s.calls} calls (${s.successful_calls} ok), cost ${money(s.cost_cents)}` +
            // Prepaid calls are paid from credits; only card-on-file usage is billed (issue 22).
            (s.billable_cents > 0 ? `, ${money(s.billable_cents)} billed to your card` : ', paid from credits') +
            (range ? ` from ${when(range.from)} to ${when(range.to)}` : '') +
            '\n'
          : '';
        return rows + total;
      });
    });

  program
    .command('balance')
    .description('your credits, billing mode and payment method')
    .action(
      showing(OPS.getBalance, (b) =>
        fields([
          ['credits', money(b.credit_cents)],
          ['owed', b.billable_cents ? money(b.billable_cents) : null],
          ['billing mode', b.billing_mode],
          ['payment method', b.has_payment_method ? 'on file' : 'none'],
          ['auto-reload', b.auto_reload_enabled ? 'on' : 'off'],
          ['suspended', b.suspended ? 'yes' : 'no'],
        ]),
      ),
    );

  program
    .command('packs')
    .description('the credit packs checkout sells')
    .action(
      showing(OPS.listPacks, (packs) =>
        table(packs, [
          { header: 'PACK', value: (p) => p.name },
          { header: 'PRICE', value: (p) => money(p.price_cents), align: 'right' },
          { header: 'CREDITS', value: (p) => money(p.credit_cents), align: 'right' },
        ]),
      ),
    );

  program
    .command('checkout')
    .description('buy credits: prints a hosted checkout URL to open in a browser (needs billing:write)')
    .option('--pack <name>', 'a credit pack (see: svc packs)')
    .option('--amount <amount>', 'a custom amount: cents (500) or dollars ($5)', parseAmount)
    .option('--success-url <url>', 'where the browser goes after paying')
    .option('--cancel-url <url>', 'where the browser goes on cancel')
    .action(async (opts: { pack?: string; amount?: number; successUrl?: string; cancelUrl?: string }, cmd) => {
      const cli = cliOf(cmd as Command);
      if ((opts.pack === undefined) === (opts.amount === undefined)) {
        throw new UsageError('give exactly one of --pack or --amount');
      }
      const body = {
        pack: opts.pack,
        amount_cents: opts.amount,
        success_url: opts.successUrl,
        cancel_url: opts.cancelUrl,
      };
      const res = await cli.send(OPS.checkout, { body });
      cli.print(res, (c) => `${c.checkout_url}\n`);
      cli.note(`Open the URL to pay ${money(res.data.amount_cents)} for ${money(res.data.credit_cents)} of credits.`);
    });
}
