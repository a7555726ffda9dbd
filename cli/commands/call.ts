/**
 * `svc call`: one request through the gateway (`{gateway_url}/v1/proxy/{slug}{path}`) with the API key. A person
 * gets the upstream body on stdout and the charge on stderr, so `svc call … > out.json` keeps only the data.
 */
import type { Command } from 'commander';
import { collectPair, parseJsonData, withCallTarget } from '../args.js';
import type { Method } from '../client.js';
import { cliOf, type Cli } from '../context.js';
import { money, pretty } from '../format.js';
import { proxyOperation } from '../operations.js';

interface CallOptions {
  data?: string;
  query?: [string, string][];
  idempotencyKey?: string;
  header?: [string, string][];
}

export function callCommand(program: Command): void {
  withCallTarget(
    program.command('call').description('call an API through the gateway (metered; prints the upstream body)'),
  )
    .option('-d, --data <json>', 'request body: JSON text or @file', parseJsonData)
    .option('-q, --query <k=v>', 'query parameter (repeatable)', collectPair)
    .option('--idempotency-key <key>', 'a retry with the same key is not billed twice')
    .option('-H, --header <name=value>', 'extra request header for the upstream (repeatable)', collectPair)
    .action(async (slug: string, method: Method, path: string, opts: CallOptions, cmd: Command) => {
      const cli = cliOf(cmd);
      const headers: Record<string, string> = Object.fromEntries(opts.header ?? []);
      if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
      const res = await cli.send(proxyOperation(method), {
        params: { apiSlug: slug, path: path.slice(1) },
        query: opts.query ?? [],
        rawBody: opts.data,
        headers,
      });
      cli.print(res, (data) => (data === null ? '' : pretty(data)));
      noteCharge(cli, res.meta);
    });
}

/** The billing fields of the gateway's meta, in one line for a person. */
export function chargeLine(meta: Record<string, unknown>): string | undefined {
  const cost = meta.cost_cents;
  if (typeof cost !== 'number') return undefined;
  if (meta.replayed === true) {
    const original = typeof meta.original_request_id === 'string' ? ` of ${meta.original_request_id}` : '';
    return `replay${original}: not charged again (original cost ${money(cost)})`;
  }
  if (cost === 0) return 'free call: nothing charged';
  // What paid for it, not a balance (issue 22: "credits $0.05" read like what was left).
  const parts: string[] = [];
  if (typeof meta.credit_applied_cents === 'number' && meta.credit_applied_cents > 0) {
    parts.push(`${money(meta.credit_applied_cents)} paid from credits`);
  }
  if (typeof meta.billable_cents === 'number' && meta.billable_cents > 0) {
    parts.push(`${money(meta.billable_cents)} billed to your card`);
  }
  return `charged ${money(cost)}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

function noteCharge(cli: Cli, meta: Record<string, unknown>): void {
  const line = chargeLine(meta);
  if (line) cli.note(line);
}
