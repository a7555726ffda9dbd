/** The catalog: search, categories, a listing, its schema (or raw OpenAPI), leaderboards, quotes and terms. */
import type { Command } from 'commander';
import { parseNonNegativeInt, parsePositiveInt, withCallTarget } from '../args.js';
import type { Method } from '../client.js';
import { cliOf, showing } from '../context.js';
import { fields, money, pretty, priceRange, searchCount, table, when } from '../format.js';
import type { QuoteView } from '../../core/catalog/listings/listings.schemas.js';
import type { ListingDetail as Listing } from '../../core/catalog/listings/listings.schemas.js';
import type { BoardItem } from '../../core/catalog/rollups/rollups.schemas.js';
import type { TermsView as Terms } from '../../core/terms/terms.schemas.js';
import { OPERATIONS as OPS } from '../operations.js';

interface SearchOptions {
  category?: string;
  sort?: string;
  limit?: number;
  offset?: number;
  callable?: boolean;
  source?: string;
}

export function catalogCommands(program: Command): void {
  program
    .command('search')
    .description('search the catalog (no query browses)')
    .argument('[q...]', 'what you are looking for')
    .option('--category <slug>', 'only this category (see: svc categories)')
    .option('--sort <sort>', 'svc_score, price, relevance, new, calls, gmv, reliability, value or momentum')
    .option('--limit <n>', 'at most this many results (max 500)', parsePositiveInt)
    .option('--offset <n>', 'skip this many results (offset + limit at most 10000)', parseNonNegativeInt)
    .option('--callable', 'only APIs callable through the gateway (no directory entries)')
    .option('--source <source>', 'provider (callable listings) or directory (directory entries)')
    .action(async (q: string[], opts: SearchOptions, cmd) => {
      const cli = cliOf(cmd as Command);
      const query = {
        q: q.join(' '),
        category: opts.category,
        sort: opts.sort,
        limit: opts.limit,
        offset: opts.offset,
        source: opts.source,
        callable: opts.callable ? 'true' : undefined,
      };
      const res = await cli.send(OPS.search, { query });
      cli.print(res, (items, meta) => {
        const rows = table(
          items,
          [
            { header: 'SLUG', value: (i) => i.slug },
            { header: 'NAME', value: (i) => i.name, max: 30 },
            { header: 'CATEGORY', value: (i) => i.category?.slug },
            {
              header: 'PRICE',
              value: (i) => priceRange(i.price.min_price_cents, i.price.max_price_cents),
              align: 'right',
            },
            { header: 'SCORE', value: (i) => i.svc_score, align: 'right' },
            { header: 'CALLABLE', value: (i) => (i.callable ? 'yes' : 'no: directory') },
            { header: 'SUMMARY', value: (i) => i.summary, max: 60 },
          ],
          'No listings match.',
        );
        return `${rows}${searchCount(items.length, meta)}`;
      });
    });

  program
    .command('categories')
    .description('list the catalog categories with their number of live APIs')
    .action(
      showing(OPS.listCategories, (items) =>
        table(items, [
          { header: 'SLUG', value: (c) => c.slug },
          { header: 'NAME', value: (c) => c.name },
          { header: 'APIS', value: (c) => c.api_count, align: 'right' },
        ]),
      ),
    );

  program
    .command('api')
    .description('show a listing: summary, score, pricing per endpoint')
    .argument('<slug>', 'the API slug')
    .action(showing(OPS.getListing, listingText, (slug: string) => ({ params: { slug } })));

  program
    .command('schema')
    .description("show a listing's endpoints with their input and output schemas")
    .argument('<slug>', 'the API slug')
    .option('--openapi', 'print the raw OpenAPI 3.0 document instead')
    .action(async (slug: string, opts: { openapi?: boolean }, cmd: Command) => {
      const cli = cliOf(cmd);
      if (opts.openapi) {
        const res = await cli.send(OPS.getListingOpenApi, { params: { slug } });
        cli.print(res, pretty);
        return;
      }
      const res = await cli.send(OPS.getListingSchema, { params: { slug } });
      cli.print(res, ({ endpoints: rows }) =>
        rows.length === 0
          ? '(no endpoints)\n'
          : rows
              .map(
                (r) =>
                  `${r.method} ${r.path}${r.summary ? `  ${r.summary}` : ''}\n  call: ${r.gateway_url}\n` +
                  `  input:  ${JSON.stringify(r.input_schema)}\n  output: ${JSON.stringify(r.output_schema)}\n`,
              )
              .join('\n'),
      );
    });

  program
    .command('leaderboard')
    .description('a ranked board: top_grossing, most_used, most_reliable, best_value, trending or new_rising')
    .argument('<board>', 'the board')
    .option('--category <slug>', 'only this category')
    .option('--limit <n>', 'at most this many rows', parsePositiveInt)
    .action(
      showing(OPS.getLeaderboard, boardText, (board: string, o: { category?: string; limit?: number }) => ({
        params: { board },
        query: { category: o.category, limit: o.limit },
      })),
    );

  withCallTarget(
    program
      .command('quote')
      .description('price a call before making it (and, with a key, whether the gateway would admit it now)'),
  ).action(
    showing(OPS.getQuote, quoteText, (slug: string, method: Method, path: string) => ({
      params: { slug },
      query: { method, path },
      preferKey: true, // the admission is the gateway's answer for the key `svc call` sends
    })),
  );

  program
    .command('terms')
    .description("show an API's provider terms (and accept them with --accept: needs a signed-in owner or admin)")
    .argument('<slug>', 'the API slug')
    .option('--accept', 'accept every document of these terms not yet accepted')
    .action(async (slug: string, opts: { accept?: boolean }, cmd: Command) => {
      const cli = cliOf(cmd);
      const res = await cli.send(OPS.getListingTerms, { params: { slug } });
      if (!opts.accept) {
        cli.print(res, termsText);
        return;
      }
      const pending = res.data.documents.filter((d) => d.accepted !== true);
      for (const doc of pending) {
        const accepted = await cli.send(OPS.acceptListingTerms, {
          params: { slug },
          body: { document_id: doc.document_id, content_hash: doc.content_hash },
        });
        cli.print(accepted, () => `Accepted ${doc.kind} ${doc.version} (${doc.document_id}).\n`);
      }
      if (pending.length === 0) cli.print(res, () => 'Nothing to accept.\n');
    });
}

function termsText(t: Terms): string {
  const docs = table(
    t.documents,
    [
      { header: 'DOCUMENT', value: (d) => d.document_id },
      { header: 'KIND', value: (d) => d.kind },
      { header: 'VERSION', value: (d) => d.version },
      { header: 'MODE', value: (d) => d.acceptance_mode },
      { header: 'ACCEPTED', value: (d) => (d.accepted === null ? '-' : d.accepted ? 'yes' : 'no') },
      { header: 'TITLE', value: (d) => d.title, max: 40 },
    ],
    'No terms for this API.',
  );
  return `${docs}${t.documents.length ? `Read and accept: ${t.approval_url}\n` : ''}`;
}

function listingText(d: Listing): string {
  const head = fields([
    ['api', `${d.name} (${d.slug})`],
    ['summary', d.summary],
    ['category', d.category?.name],
    ['provider', d.provider.name],
    ['tags', d.tags.length ? d.tags.join(', ') : null],
    ['score', d.svc_score],
    ['verification', d.verification.status],
    ['terms', d.terms.required ? 'acceptance required (svc terms ' + d.slug + ')' : null],
    ['docs', d.docs_url],
    ['gateway', d.gateway_url ?? 'none: a directory entry, not callable here'],
    ['how to list it', d.directory_entry?.how_to_list ?? null],
  ]);
  const endpoints = table(
    d.endpoints,
    [
      { header: 'METHOD', value: (e) => e.method },
      { header: 'PATH', value: (e) => e.path },
      {
        header: 'PRICE',
        value: (e) => (e.price_cents_effective === 0 ? 'free' : money(e.price_cents_effective)),
        align: 'right',
      },
      { header: 'SUMMARY', value: (e) => e.summary, max: 60 },
    ],
    '(no endpoints)',
  );
  return `${head}\n${endpoints}`;
}

function boardText(items: BoardItem[]): string {
  return table(
    items,
    [
      { header: '#', value: (i) => i.rank, align: 'right' },
      { header: 'SLUG', value: (i) => i.slug },
      { header: 'NAME', value: (i) => i.name, max: 30 },
      { header: 'CATEGORY', value: (i) => i.category?.slug },
      { header: 'METRIC', value: (i) => i.metric.name },
      { header: 'VALUE', value: (i) => i.metric.value, align: 'right' },
    ],
    'The board is empty.',
  );
}

function quoteText(q: QuoteView): string {
  return fields([
    ['endpoint', `${q.endpoint.method} ${q.endpoint.path}`],
    ['price', q.price_cents_effective === 0 ? 'free' : money(q.price_cents_effective)],
    ['list price', q.price_cents !== q.price_cents_effective ? money(q.price_cents) : null],
    ['discount', q.discount ? (typeof q.discount.label === 'string' ? q.discount.label : 'active') : null],
    [
      'increase',
      q.price_increase ? `${money(q.price_increase.price_cents)} from ${when(q.price_increase.effective_at)}` : null,
    ],
    [
      'admission',
      q.admission
        ? q.admission.allowed
          ? 'allowed'
          : `refused: ${q.admission.error_code}: ${q.admission.message ?? ''}`.trim()
        : null,
    ],
    ['call', q.gateway_url],
  ]);
}
