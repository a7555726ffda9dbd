/**
 * `svc provider …` after an API exists (issue 31): its endpoints (`endpoints add|update|remove|import`: a draft
 * changes at once, a live API stages them in its open revision), the revision (`revision show|discard`; `svc provider
 * publish` publishes it), retiring (`archive`, `restore`, `delete`), and the lifecycle steps' output (a table of the
 * smoke test's checks, also printed when a publish is refused for a failed one).
 */
import type { Command } from 'commander';
import { parseAmount, parseJsonData } from '../args.js';
import { apiIdOf } from '../api-ref.js';
import { ApiFailure, UsageError } from '../client.js';
import { cliOf, type Cli } from '../context.js';
import { fields, money, table, when } from '../format.js';
import type { EndpointChangesView, RevisionView } from '../../core/providers/endpoint-changes.schemas.js';
import type { LifecycleView, ProviderApiView } from '../../core/providers/providers.schemas.js';
import { OPERATIONS as OPS } from '../operations.js';

const API_ARG = 'the API id, or the slug of one of your APIs';

type Evidence = NonNullable<Extract<LifecycleView, { action: string }>['verification']>;

/** The smoke test's checks, one row each: where it called and what came back. */
export function checksTable(v: Evidence): string {
  return table(v.checks, [
    { header: 'RESULT', value: (c) => (c.ok ? 'ok' : 'FAILED') },
    { header: 'ENDPOINT', value: (c) => `${c.method} ${c.path}`, max: 40 },
    { header: 'TARGET', value: (c) => c.target ?? '' },
    { header: 'STATUS', value: (c) => c.status ?? '-', align: 'right' },
    { header: 'MS', value: (c) => c.latency_ms ?? '-', align: 'right' },
    { header: 'ERROR', value: (c) => c.error ?? '', max: 80 },
  ]);
}

/** A lifecycle step's answer: the outcome in fields, then the checks as a table. */
export function lifecycleText(apiId: string, step: string, d: LifecycleView): string {
  if ('done' in d)
    return `${step}: still running (workflow ${d.workflow_id}); check with: svc provider apis ${apiId}\n`;
  const head = fields([
    ['api', apiId],
    ['action', d.action],
    ['status', d.status],
    ['result', d.message],
  ]);
  return d.verification?.checks.length ? `${head}\n${checksTable(d.verification)}` : head;
}

/** A refused publish whose smoke test failed: its checks go to stderr before the error line. */
export function explainRefusal(cli: Cli, err: unknown): never {
  const evidence = err instanceof ApiFailure ? (err.details?.verification as Evidence | undefined) : undefined;
  if (evidence?.checks?.length) cli.note(checksTable(evidence).trimEnd());
  throw err;
}

function changesText(d: EndpointChangesView): string {
  const rows = [
    ...d.added.map((e) => ({ change: 'added', ...e, note: '' })),
    ...d.updated.map((e) => ({ change: 'changed', ...e, note: '' })),
    ...d.removed.map((e) => ({
      change: 'removed',
      ...e,
      price_cents_effective: null,
      note: e.effect === 'scheduled' ? `410 from ${when(e.sunset_at)}` : e.effect,
    })),
  ];
  const changes = table(
    rows,
    [
      { header: 'CHANGE', value: (r) => r.change },
      { header: 'ENDPOINT', value: (r) => r.endpoint_id },
      { header: 'METHOD', value: (r) => r.method },
      { header: 'PATH', value: (r) => r.path, max: 50 },
      {
        header: 'PRICE',
        value: (r) => (r.price_cents_effective === null ? null : money(r.price_cents_effective)),
        align: 'right',
      },
      { header: 'NOTE', value: (r) => r.note },
    ],
    '(no change)',
  );
  return `${d.message}\n${changes}`;
}

export function revisionText(r: RevisionView): string {
  const head = fields([
    ['revision', `${r.number} (${r.revision_id})`],
    ['status', r.status],
    ['updated', when(r.updated_at)],
  ]);
  const rows = [
    ...r.add.map((e) => ({
      change: 'add',
      endpoint_id: e.endpoint_id,
      route: `${e.method} ${e.path}`,
      detail: money(e.price_cents),
    })),
    ...r.update.map((e) => ({
      change: 'change',
      endpoint_id: e.endpoint_id,
      route: `${e.method} ${e.path}`,
      detail: Object.keys(e)
        .filter((k) => !['endpoint_id', 'method', 'path'].includes(k))
        .join(', '),
    })),
    ...r.remove.map((e) => ({
      change: 'remove',
      endpoint_id: e.endpoint_id,
      route: `${e.method} ${e.path}`,
      detail: '',
    })),
  ];
  const changes = table(rows, [
    { header: 'CHANGE', value: (x) => x.change },
    { header: 'ENDPOINT', value: (x) => x.endpoint_id },
    { header: 'ROUTE', value: (x) => x.route, max: 50 },
    { header: 'DETAIL', value: (x) => x.detail },
  ]);
  return `${head}\n${changes}${r.publish_hint}\n`;
}

function retiredText(a: ProviderApiView): string {
  return fields([
    ['api', `${a.api_id} (${a.slug})`],
    ['status', a.status],
    ['archived', a.archived_at ? when(a.archived_at) : null],
  ]);
}

interface EndpointFlags {
  method?: string;
  path?: string;
  summary?: string;
  price?: string;
  inputSchema?: string;
  outputSchema?: string;
}

function endpointBody(o: EndpointFlags): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (o.method !== undefined) body.method = o.method.toUpperCase();
  if (o.path !== undefined) body.path = o.path;
  if (o.summary !== undefined) body.summary = o.summary;
  if (o.price !== undefined) body.price_cents = parseAmount(o.price);
  if (o.inputSchema !== undefined) body.input_schema = JSON.parse(o.inputSchema) as unknown;
  if (o.outputSchema !== undefined) body.output_schema = JSON.parse(o.outputSchema) as unknown;
  return body;
}

function withEndpointFlags(cmd: Command): Command {
  return cmd
    .option('--summary <text>', 'one-line summary')
    .option('--input-schema <json>', 'the input JSON Schema ({path, query, body} groups), JSON or @file', parseJsonData)
    .option('--output-schema <json>', 'the output JSON Schema, JSON or @file', parseJsonData);
}

/** `endpoints add|update|remove|import`. */
function endpointCommands(provider: Command): void {
  const endpoints = provider
    .command('endpoints')
    .description("change an API's endpoints (a draft at once; a live API's wait in its revision until publish)");

  withEndpointFlags(
    endpoints
      .command('add')
      .description('add an endpoint')
      .argument('<api>', API_ARG)
      .argument('<method>', 'GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS')
      .argument('<path>', 'the path template, e.g. /forecast/{city}')
      .option('--price <amount>', 'price per call in cents, or dollars with $ (default free)'),
  ).action(async (ref: string, method: string, path: string, o: EndpointFlags, cmd: Command) => {
    const cli = cliOf(cmd);
    const apiId = await apiIdOf(cli, ref);
    const body = endpointBody({ ...o, method, path });
    cli.print(await cli.send(OPS.addProviderEndpoint, { params: { api_id: apiId }, body }), changesText);
  });

  withEndpointFlags(
    endpoints
      .command('update')
      .description('change an endpoint (a new method or path makes it a new endpoint)')
      .argument('<api>', API_ARG)
      .argument('<endpoint_id>', 'the endpoint id (svc provider apis <api> lists them)')
      .option('--method <method>', 'a new method')
      .option('--path <path>', 'a new path template'),
  ).action(async (ref: string, endpointId: string, o: EndpointFlags, cmd: Command) => {
    const body = endpointBody(o);
    if (Object.keys(body).length === 0) throw new UsageError('give at least one of the change options');
    const cli = cliOf(cmd);
    const params = { api_id: await apiIdOf(cli, ref), endpoint_id: endpointId };
    cli.print(await cli.send(OPS.updateProviderEndpoint, { params, body }), changesText);
  });

  endpoints
    .command('remove')
    .description('remove an endpoint (a live API: after the notice period; 410 afterwards)')
    .argument('<api>', API_ARG)
    .argument('<endpoint_id>', 'the endpoint id')
    .action(async (ref: string, endpointId: string, _o, cmd: Command) => {
      const cli = cliOf(cmd);
      const params = { api_id: await apiIdOf(cli, ref), endpoint_id: endpointId };
      cli.print(await cli.send(OPS.removeProviderEndpoint, { params }), changesText);
    });

  endpoints
    .command('import')
    .description('re-import the endpoints from an OpenAPI document (matched by method and path; ids and prices kept)')
    .argument('<api>', API_ARG)
    .argument('<url>', 'the document URL')
    .option('--keep-missing', 'keep the endpoints the document no longer has')
    .action(async (ref: string, url: string, o: { keepMissing?: boolean }, cmd: Command) => {
      const cli = cliOf(cmd);
      const body = { url, keep_missing: o.keepMissing === true };
      const res = await cli.send(OPS.importProviderEndpoints, { params: { api_id: await apiIdOf(cli, ref) }, body });
      cli.print(res, changesText);
    });
}

/** `revision show|discard`, `archive`, `restore`, `delete`. */
export function providerChangeCommands(provider: Command): void {
  endpointCommands(provider);
  const revision = provider.command('revision').description("a live API's staged endpoint changes");
  revision
    .command('show', { isDefault: true })
    .description('show the open revision')
    .argument('<api>', API_ARG)
    .action(async (ref: string, _o, cmd: Command) => {
      const cli = cliOf(cmd);
      const res = await cli.send(OPS.getProviderRevision, { params: { api_id: await apiIdOf(cli, ref) } });
      cli.print(res, revisionText);
    });
  revision
    .command('discard')
    .description('discard the open revision (nothing it staged is applied)')
    .argument('<api>', API_ARG)
    .action(async (ref: string, _o, cmd: Command) => {
      const cli = cliOf(cmd);
      const res = await cli.send(OPS.discardProviderRevision, { params: { api_id: await apiIdOf(cli, ref) } });
      cli.print(res, revisionText);
    });

  const retire = (name: 'archive' | 'restore', description: string) =>
    provider
      .command(name)
      .description(description)
      .argument('<api>', API_ARG)
      .action(async (ref: string, _o, cmd: Command) => {
        const cli = cliOf(cmd);
        const op = name === 'archive' ? OPS.archiveProviderApi : OPS.restoreProviderApi;
        cli.print(await cli.send(op, { params: { api_id: await apiIdOf(cli, ref) } }), retiredText);
      });
  retire('archive', 'retire a draft API (unpublish it first): its URLs answer 410, its history stays');
  retire('restore', 'bring an archived API back as a draft');
  provider
    .command('delete')
    .description('delete a draft that was never live (one that was is archived instead)')
    .argument('<api>', API_ARG)
    .action(async (ref: string, _o, cmd: Command) => {
      const cli = cliOf(cmd);
      const res = await cli.send(OPS.deleteProviderApi, { params: { api_id: await apiIdOf(cli, ref) } });
      cli.print(res, (d) => `Deleted ${d.slug} (${d.api_id}).\n`);
    });
}
