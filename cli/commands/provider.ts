/**
 * `svc provider …`: a provider's own APIs (create, import, credentials, pricing, verify, publish, unpublish),
 * legal documents and analytics. Every route needs provider:write (a signed-in person or an email-verified key).
 */
import type { Command } from 'commander';
import { collect, collectPair, jsonObject, parseAmount, parseJsonData, parseList, parseTextOrFile } from '../args.js';
import { apiIdOf } from '../api-ref.js';
import { UsageError } from '../client.js';
import { cliOf, showing, type Cli } from '../context.js';
import { fields, money, pretty, table, when } from '../format.js';
import type { EndpointView } from '../../core/pricing/pricing.schemas.js';
import type {
  AnalyticsView as Analytics,
  LifecycleView as Lifecycle,
  ProviderApiView as ApiView,
} from '../../core/providers/providers.schemas.js';
import type { DocumentView } from '../../core/terms/terms.schemas.js';
import { OPERATIONS as OPS } from '../operations.js';
import { explainRefusal, lifecycleText, providerChangeCommands } from './provider-changes.js';

interface ListingFlags {
  data?: string;
  name?: string;
  slug?: string;
  summary?: string;
  upstream?: string;
  description?: string;
  category?: string;
  tags?: string[];
  docsUrl?: string;
  endpoint?: string[];
}

/** `GET /forecast/{city}=5`: method, path and an optional price (cents or dollars; default free). */
function parseEndpoint(spec: string): Record<string, unknown> {
  const m = /^([A-Za-z]+)\s+(\/\S*?)(?:=(\S+))?$/.exec(spec.trim());
  if (!m) throw new UsageError(`--endpoint "${spec}": expected "METHOD /path" or "METHOD /path=price"`);
  const endpoint: Record<string, unknown> = { method: m[1]!.toUpperCase(), path: m[2] };
  if (m[3] !== undefined) endpoint.price_cents = parseAmount(m[3]);
  return endpoint;
}

/** The JSON body from --data, with each flag given laid over it. */
function listingBody(o: ListingFlags): Record<string, unknown> {
  const body = jsonObject(o.data);
  const set = (k: string, v: unknown) => {
    if (v !== undefined) body[k] = v;
  };
  set('name', o.name);
  set('slug', o.slug);
  set('summary', o.summary);
  set('base_url', o.upstream);
  set('description', o.description);
  set('category', o.category);
  set('tags', o.tags);
  set('docs_url', o.docsUrl);
  if (o.endpoint?.length) body.endpoints = o.endpoint.map(parseEndpoint);
  return body;
}

function withListingFlags(cmd: Command): Command {
  return cmd
    .option('-d, --data <json>', 'the whole body as JSON text or @file (flags override its fields)', parseJsonData)
    .option('--name <name>', 'display name')
    .option('--slug <slug>', 'URL name in the catalog (lower-case, digits, hyphens)')
    .option('--summary <text>', 'one-line summary')
    .option('--upstream <url>', "the upstream base URL (the body's base_url)")
    .option('--description <text>', 'longer description')
    .option('--category <slug>', 'a category slug (see: svc categories)')
    .option('--tags <list>', 'comma-separated tags', parseList)
    .option('--docs-url <url>', 'documentation URL')
    .option('--endpoint <spec>', 'an endpoint "METHOD /path[=price]" (repeatable)', collect);
}

/** The endpoint a cancelled price increase leaves (DELETE …/pending-price answers with the endpoint, not the API). */
function endpointText(e: EndpointView): string {
  return fields([
    ['endpoint', e.endpoint_id],
    ['route', `${e.method} ${e.path}`],
    ['price', money(e.price_cents)],
    ['now', money(e.price_cents_effective)],
    [
      'pending',
      e.price_increase ? `${money(e.price_increase.price_cents)} from ${when(e.price_increase.effective_at)}` : 'none',
    ],
  ]);
}

function apiText(a: ApiView): string {
  const head = fields([
    ['api', `${a.api_id} (${a.slug})`],
    ['name', a.name],
    ['status', a.status],
    ['revision', a.open_revision ? `${a.open_revision.number} open (svc provider revision show ${a.slug})` : null],
    ['summary', a.summary],
    ['base url', a.base_url],
    ['credential', a.credential.set ? `set (${a.credential.injection})` : 'not set'],
    ['verification', a.verification.status],
    ['published', a.published_at ? when(a.published_at) : null],
    ['listing', a.listing_url],
    ['gateway', a.gateway_url],
  ]);
  const endpoints = table(
    a.endpoints,
    [
      { header: 'ENDPOINT', value: (e) => e.endpoint_id },
      { header: 'METHOD', value: (e) => e.method },
      { header: 'PATH', value: (e) => e.path },
      { header: 'PRICE', value: (e) => money(e.price_cents_effective), align: 'right' },
      // Only while a removal is announced.
      ...(a.endpoints.some((e) => e.removal)
        ? [
            {
              header: 'REMOVAL',
              value: (e: EndpointView) => (e.removal ? `410 from ${when(e.removal.sunset_at)}` : ''),
            },
          ]
        : []),
    ],
    '(no endpoints)',
  );
  return `${head}\n${endpoints}`;
}

const API_ARG = 'the API id, or the slug of one of your APIs';

/** The lifecycle steps, by the name the commands and their output use. */
const STEPS = {
  verify: OPS.verifyProviderApi,
  publish: OPS.publishProviderApi,
  unpublish: OPS.unpublishProviderApi,
} as const;

/** A lifecycle step: the outcome and a table of the smoke test's checks (on stderr too when a publish is refused). */
async function lifecycle(cli: Cli, ref: string, step: keyof typeof STEPS, body?: unknown): Promise<void> {
  const apiId = await apiIdOf(cli, ref);
  const res = await cli
    .send<Lifecycle>(STEPS[step], { params: { api_id: apiId }, body })
    .catch((err: unknown) => explainRefusal(cli, err));
  cli.print(res, (d) => lifecycleText(apiId, step, d));
}

export function providerCommands(program: Command): void {
  const provider = program.command('provider').description('manage the APIs you provide');

  provider
    .command('apis')
    .description('list your APIs, or show one with its endpoints')
    .argument('[api]', 'an API id (or its slug) to show in full')
    .action(async (ref: string | undefined, _opts, cmd: Command) => {
      const cli = cliOf(cmd);
      if (ref) {
        const apiId = await apiIdOf(cli, ref);
        const res = await cli.send(OPS.getProviderApi, { params: { api_id: apiId } });
        cli.print(res, apiText);
        return;
      }
      const res = await cli.send(OPS.listProviderApis, { query: { limit: 200 } });
      cli.print(res, (items) =>
        table(
          items,
          [
            { header: 'ID', value: (a) => a.api_id },
            { header: 'SLUG', value: (a) => a.slug },
            { header: 'NAME', value: (a) => a.name, max: 30 },
            { header: 'STATUS', value: (a) => a.status },
            { header: 'ENDPOINTS', value: (a) => a.endpoint_count, align: 'right' },
            { header: 'VERIFIED', value: (a) => a.verification_status },
          ],
          'No APIs yet: svc provider create or svc provider import.',
        ),
      );
    });

  withListingFlags(provider.command('create').description('create a draft API from flags or a JSON body')).action(
    async (opts: ListingFlags, cmd: Command) => {
      const cli = cliOf(cmd);
      const res = await cli.send(OPS.createProviderApi, { body: listingBody(opts) });
      cli.print(res, apiText);
    },
  );

  withListingFlags(
    provider
      .command('import')
      .description('create a draft API from an OpenAPI document URL (or an external docs URL)')
      .argument('<url>', 'the document URL')
      .option('--type <type>', 'openapi_url or external_url', 'openapi_url'),
  ).action(async (url: string, opts: ListingFlags & { type: string }, cmd: Command) => {
    const cli = cliOf(cmd);
    const body = { ...listingBody(opts), import_from: { type: opts.type, url } };
    const res = await cli.send(OPS.createProviderApi, { body });
    cli.print(res, apiText);
  });

  withListingFlags(
    provider.command('update').description("change a draft or live API's listing fields").argument('<api>', API_ARG),
  ).action(async (ref: string, opts: ListingFlags, cmd: Command) => {
    const cli = cliOf(cmd);
    const apiId = await apiIdOf(cli, ref);
    const res = await cli.send(OPS.updateProviderApi, { params: { api_id: apiId }, body: listingBody(opts) });
    cli.print(res, apiText);
  });

  provider
    .command('credentials')
    .description('store the upstream secret the gateway attaches to calls')
    .argument('<api>', API_ARG)
    .requiredOption('--secret <secret>', 'the secret, or @file to read it from a file', parseTextOrFile)
    .option('--injection <how>', 'bearer, header, query or basic', 'bearer')
    .option('--injection-name <name>', 'header or query parameter name (for header and query)')
    .action(async (ref: string, opts: { secret: string; injection: string; injectionName?: string }, cmd) => {
      const cli = cliOf(cmd as Command);
      const apiId = await apiIdOf(cli, ref);
      const res = await cli.send(OPS.setProviderApiCredentials, {
        params: { api_id: apiId },
        body: { secret: opts.secret.trim(), injection: opts.injection, injection_name: opts.injectionName },
      });
      cli.print(res, () => `Credentials stored for ${apiId}.\n`);
    });

  provider
    .command('pricing')
    .description('set endpoint prices (increases are scheduled) or cancel a pending increase')
    .argument('<api>', API_ARG)
    .option('--price <endpoint_id=amount>', 'a price in cents or dollars (repeatable)', collectPair)
    .option('-d, --data <json>', 'the whole body { "endpoints": [...] } (prices and discounts)', parseJsonData)
    .option('--cancel-pending <endpoint_id>', "cancel this endpoint's scheduled price increase")
    .action(async (ref: string, opts: { price?: [string, string][]; data?: string; cancelPending?: string }, cmd) => {
      const cli = cliOf(cmd as Command);
      if (opts.cancelPending) {
        const apiId = await apiIdOf(cli, ref);
        const res = await cli.send(OPS.cancelPendingPrice, {
          params: { api_id: apiId, endpoint_id: opts.cancelPending },
        });
        cli.print(res, endpointText);
        return;
      }
      const body = jsonObject(opts.data);
      if (opts.price?.length) {
        body.endpoints = opts.price.map(([endpoint_id, amount]) => ({ endpoint_id, price_cents: parseAmount(amount) }));
      }
      if (body.endpoints === undefined) throw new UsageError('give --price, --data or --cancel-pending');
      const apiId = await apiIdOf(cli, ref);
      const res = await cli.send(OPS.updateProviderApiPricing, { params: { api_id: apiId }, body });
      cli.print(res, pretty);
    });

  provider
    .command('verify')
    .description('run the upstream smoke test of a draft API')
    .argument('<api>', API_ARG)
    .action((ref: string, _opts, cmd: Command) => lifecycle(cliOf(cmd), ref, 'verify'));

  provider
    .command('publish')
    .description("put an API live in the catalog, or a live API's open revision (needs --accept-terms)")
    .argument('<api>', API_ARG)
    .option('--accept-terms', 'accept the marketplace provider terms (required)')
    .option('--skip-verify', 'publish without running the smoke test')
    .action(async (ref: string, opts: { acceptTerms?: boolean; skipVerify?: boolean }, cmd: Command) => {
      if (!opts.acceptTerms) throw new UsageError('publishing needs --accept-terms');
      await lifecycle(cliOf(cmd), ref, 'publish', { accept_terms: true, skip_verify: opts.skipVerify === true });
    });

  provider
    .command('unpublish')
    .description('take a live API out of the catalog (back to draft)')
    .argument('<api>', API_ARG)
    .action((ref: string, _opts, cmd: Command) => lifecycle(cliOf(cmd), ref, 'unpublish'));

  providerChangeCommands(provider);
  documentCommands(provider);

  provider
    .command('analytics')
    .description('GMV, earnings and payouts per API over a time range')
    .option('--from <date>', 'start (date or ISO time)')
    .option('--to <date>', 'end (date or ISO time)')
    .action(
      showing(OPS.getProviderAnalytics, analyticsText, (o: { from?: string; to?: string }) => ({
        query: { from: o.from, to: o.to },
      })),
    );
}

function analyticsText(a: Analytics): string {
  const t = a.totals;
  const head = fields([
    ['range', `${when(a.range.from)} to ${when(a.range.to)}`],
    ['calls', `${t.calls} (${t.successful_calls} ok)`],
    ['gmv', money(t.gmv_cents)],
    ['earnings', money(t.provider_earnings_cents)],
    ['platform fee', money(t.platform_fee_cents)],
    ['net', money(t.net_earnings_cents)],
    ['payouts', money(t.payouts_cents)],
  ]);
  const perApi = table(a.by_api, [
    { header: 'API', value: (r) => r.slug },
    { header: 'CALLS', value: (r) => r.calls, align: 'right' },
    { header: 'OK', value: (r) => r.successful_calls, align: 'right' },
    { header: 'GMV', value: (r) => money(r.gmv_cents), align: 'right' },
    { header: 'UPSTREAM', value: (r) => (r.upstream_problem ? r.upstream_problem.message : 'ok'), max: 60 },
  ]);
  const e = a.earnings_to_date;
  const toDate = fields([
    ['earned to date', `${money(e.gross_cents)} (fee ${money(e.platform_fee_cents)}, net ${money(e.net_cents)})`],
    ['paid out', money(e.paid_out_cents)],
    ['reversed', money(e.reversed_cents)],
    ['pending', money(e.pending_cents)],
    ['available', money(e.available_cents)],
    ['payouts', e.payouts],
  ]);
  const problems = a.by_api
    .filter((r) => r.upstream_problem)
    .map((r) => `${r.slug}: ${r.upstream_problem!.message} ${r.upstream_problem!.hint}`);
  return [head, perApi, toDate, e.where_earnings_go, ...problems].join('\n');
}

function documentCommands(provider: Command): void {
  const documents = provider.command('documents').description('legal documents (terms, privacy, …) for your APIs');

  documents
    .command('list', { isDefault: true })
    .description('list your documents')
    .option('--api-id <id>', 'only documents of this API')
    .option('--kind <kind>', 'terms, privacy, acceptable_use, sla, dpa or other')
    .action(async (opts: { apiId?: string; kind?: string }, cmd: Command) => {
      const cli = cliOf(cmd);
      const res = await cli.send(OPS.listProviderDocuments, {
        query: { api_id: opts.apiId, kind: opts.kind },
      });
      cli.print(res, (docs) =>
        table(docs, [
          { header: 'DOCUMENT', value: (d) => d.document_id },
          { header: 'KIND', value: (d) => d.kind },
          { header: 'VERSION', value: (d) => d.version },
          { header: 'STATUS', value: (d) => d.status },
          { header: 'MODE', value: (d) => d.acceptance_mode },
          { header: 'API', value: (d) => d.api_id },
          { header: 'TITLE', value: (d) => d.title, max: 40 },
        ]),
      );
    });

  documents
    .command('create')
    .description('create a draft document (markdown body)')
    .requiredOption('--kind <kind>', 'terms, privacy, acceptable_use, sla, dpa or other')
    .requiredOption('--doc-version <version>', 'the document version, e.g. 2026-11')
    .requiredOption('--body <markdown>', 'the markdown text, or @file', parseTextOrFile)
    .option('--title <title>', 'a title')
    .option('--api-id <id>', 'the API these terms govern')
    .option('--acceptance-mode <mode>', 'required (consumers must accept before calling) or optional')
    .action(
      async (
        o: { kind: string; docVersion: string; body: string; title?: string; apiId?: string; acceptanceMode?: string },
        cmd: Command,
      ) => {
        const cli = cliOf(cmd);
        const body = {
          kind: o.kind,
          version: o.docVersion,
          body: o.body,
          title: o.title,
          api_id: o.apiId,
          acceptance_mode: o.acceptanceMode,
        };
        const res = await cli.send(OPS.createProviderDocument, { body });
        cli.print(res, documentText);
      },
    );

  documents
    .command('activate')
    .description('put a draft document in force')
    .argument('<document_id>', 'the document id')
    .action(
      showing(OPS.activateProviderDocument, documentText, (documentId: string) => ({
        params: { document_id: documentId },
      })),
    );
}

function documentText(d: DocumentView): string {
  return fields([
    ['document', d.document_id],
    ['kind', d.kind],
    ['version', d.version],
    ['status', d.status],
    ['acceptance', d.acceptance_mode],
    ['api', d.api_id],
    ['content hash', d.content_hash],
  ]);
}
