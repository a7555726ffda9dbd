/**
 * Console · Usage: the org's metered calls as a table filtered by key, API, UTC date range and outcome (a GET form,
 * so a filtered view is a link), paginated, with calls and spend per day as charts, and the same rows as CSV at
 * `/console/usage.csv` (same filters, streamed in batches). Reads go through `services.usage` with the person, like
 * `GET /v1/usage` (scope `usage:read`).
 */
import { Readable } from 'node:stream';
import type Router from '@koa/router';
import { z } from 'zod';
import { requireScope } from '../../../core/auth/scopes.js';
import { escapeHtml } from '../../../core/html.js';
import { isId } from '../../../core/ids.js';
import type { KeySummary } from '../../../core/keys/key-admin.service.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { UsageDay, UsageFilter, UsageRecord } from '../../../core/usage/usage.service.js';
import type { AppContext, AppState } from '../../context.js';
import { barChart } from '../charts.js';
import { accountBanners, utcDay } from './consumer-common.js';
import { dollarsValue } from '../dollars.js';
import { parseForm, when } from './forms.js';
import {
  fieldMessage,
  fixable,
  type FormFields,
  type FormProblems,
  invalidAttrs,
  problemSummary,
} from '../form-errors.js';
import { consolePage, emptyState, money } from './shell.js';

const PAGE_SIZE = 50;
const DAY_MS = 86_400_000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

const blank = (v: unknown) => (v === '' ? undefined : v);
const opt = <T extends z.ZodType>(schema: T) => z.preprocess(blank, schema.optional());

/** A real calendar day, `YYYY-MM-DD` (2026-02-30 is refused, not rolled over). */
const Day = z
  .string()
  .regex(DAY, 'must be a date, YYYY-MM-DD')
  .refine(
    (v) => !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) && utcDay(new Date(`${v}T00:00:00Z`)) === v,
    'is not a real date',
  );

/** The filter form's query (blank fields are "any"). */
export const ConsoleUsageQuery = z.object({
  key: opt(z.string().refine((v) => isId('apiKey', v), 'is not a key id')),
  api: opt(z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'is not an API slug (lowercase letters, digits, dashes)')),
  from: opt(Day),
  to: opt(Day),
  outcome: opt(z.enum(['success', 'failed'])),
  page: opt(z.coerce.number().int().min(1).max(10_000)),
});
export type ConsoleUsageQuery = z.infer<typeof ConsoleUsageQuery>;

interface Filters {
  query: ConsoleUsageQuery & { from: string; to: string };
  filter: UsageFilter;
}

/** The filter form's fields, as the person reads them (form-errors.ts). */
const USAGE_FIELDS: FormFields = {
  key: { id: 'f-key', label: 'Key' },
  api: { id: 'f-api', label: 'API (slug)' },
  from: { id: 'f-from', label: 'From' },
  to: { id: 'f-to', label: 'To' },
  outcome: { id: 'f-outcome', label: 'Outcome' },
  page: 'Page',
};

/** The filters of the request, with the default range (the last 30 UTC days, today included). */
function filtersOf(ctx: AppContext, services: Services): Filters {
  const data = parseForm(ConsoleUsageQuery, ctx.query, USAGE_FIELDS);
  const today = utcDay(services.clock.now());
  const to = data.to ?? today;
  const from = data.from ?? utcDay(new Date(Date.parse(`${to}T00:00:00Z`) - 29 * DAY_MS));
  const range = services.usage.resolveRange({ from, to });
  return {
    query: { ...data, from, to },
    filter: { ...range, keyId: data.key, apiSlug: data.api, outcome: data.outcome },
  };
}

/** The filters as typed (a refused query shows them again). */
function typedFilters(ctx: AppContext): Filters['query'] {
  const text = (name: string) => (typeof ctx.query[name] === 'string' ? ctx.query[name] : undefined);
  return { key: text('key'), api: text('api'), from: text('from') ?? '', to: text('to') ?? '' };
}

/** The query string of the filters (for the pager and the CSV link). */
function queryString(q: Filters['query'], extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const name of ['key', 'api', 'from', 'to', 'outcome'] as const) {
    const v = q[name];
    if (v) params.set(name, String(v));
  }
  for (const [k, v] of Object.entries(extra)) params.set(k, v);
  const s = params.toString();
  return s ? `?${s}` : '';
}

function filterForm(q: Filters['query'], keys: KeySummary[], p?: FormProblems): string {
  const option = (value: string, label: string, selected: boolean) =>
    `<option value="${escapeHtml(value)}"${selected ? ' selected' : ''}>${escapeHtml(label)}</option>`;
  const keyOptions = keys
    .map((k) => option(k.id, `${k.name} (${k.keyPrefix}…)${k.revoked_at ? ' · revoked' : ''}`, q.key === k.id))
    .join('');
  const bad = (id: string) => `${invalidAttrs(p, id)}>${fieldMessage(p, id)}`;
  return `${problemSummary(p)}<form method="get" action="/console/usage" class="filters panel" aria-label="Filter usage">
<div><label for="f-key">Key</label><select id="f-key" name="key"${invalidAttrs(p, 'f-key')}>${option('', 'Any key', !q.key)}${keyOptions}</select>${fieldMessage(p, 'f-key')}</div>
<div><label for="f-api">API (slug)</label><input id="f-api" name="api" size="16" value="${escapeHtml(q.api ?? '')}"${bad('f-api')}</div>
<div><label for="f-from">From (UTC)</label><input id="f-from" name="from" type="date" value="${escapeHtml(q.from)}"${bad('f-from')}</div>
<div><label for="f-to">To (UTC, included)</label><input id="f-to" name="to" type="date" value="${escapeHtml(q.to)}"${bad('f-to')}</div>
<div><label for="f-outcome">Outcome</label><select id="f-outcome" name="outcome"${invalidAttrs(p, 'f-outcome')}>${option('', 'Any', !q.outcome)}${option('success', 'Success', q.outcome === 'success')}${option('failed', 'Failed', q.outcome === 'failed')}</select>${fieldMessage(p, 'f-outcome')}</div>
<div><button type="submit">Filter</button> <a href="/console/usage">Reset</a></div>
</form>`;
}

function charts(days: UsageDay[], q: Filters['query']): string {
  const range = `${q.from} to ${q.to} (UTC)`;
  return `<div class="charts">${
    barChart(
      [
        { name: 'Calls', points: days.map((d) => ({ label: d.day, value: d.calls })) },
        { name: 'Failed calls', points: days.map((d) => ({ label: d.day, value: d.failed })) },
      ],
      { title: `Calls per day, ${range}`, empty: 'No calls in this range.' },
    ) +
    barChart([{ name: 'Spend', points: days.map((d) => ({ label: d.day, value: d.cost_cents })) }], {
      title: `Spend per day, ${range}`,
      format: money,
      empty: 'No spend in this range.',
    })
  }</div>`;
}

function table(rows: UsageRecord[], names: Map<string, string>): string {
  const body = rows
    .map(
      (r) => `<tr><td>${when(r.created_at)}</td><td>${escapeHtml(names.get(r.key_id) ?? r.key_id)}</td>
<td>${escapeHtml(r.api_slug)}</td><td><code>${escapeHtml(r.method)} ${escapeHtml(r.path.slice(0, 120))}</code></td>
<td class="num">${r.status}</td><td>${r.outcome === 'success' ? 'Success' : '<strong>Failed</strong>'}</td>
<td class="num">${money(r.cost_cents)}</td><td class="num">${r.latency_ms} ms</td></tr>`,
    )
    .join('\n');
  return `<table><caption class="visually-hidden">Calls, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Key</th><th scope="col">API</th><th scope="col">Request</th>
<th scope="col" class="num">Status</th><th scope="col">Outcome</th><th scope="col" class="num">Cost</th>
<th scope="col" class="num">Latency</th></tr></thead><tbody>${body}</tbody></table>`;
}

function pager(q: Filters['query'], page: number, hasMore: boolean): string {
  const link = (p: number, label: string, rel: string) =>
    `<a rel="${rel}" href="/console/usage${escapeHtml(queryString(q, { page: String(p) }))}">${label}</a>`;
  if (page === 1 && !hasMore) return '';
  return `<nav class="pager" aria-label="Pages">${page > 1 ? link(page - 1, '← Newer', 'prev') : ''}<span>Page ${page}</span>${hasMore ? link(page + 1, 'Older →', 'next') : ''}</nav>`;
}

async function keyNames(services: Services, person: SessionPrincipal): Promise<KeySummary[]> {
  return (await services.keyAdmin.list(person, { limit: 200, offset: 0, include_revoked: true })).items;
}

/** One CSV field: quoted when it holds a comma, quote or line break; text that a spreadsheet would run as a formula
 * (leading `=`, `+`, `-`, `@`) gets a leading apostrophe. */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

const CSV_COLUMNS = [
  'created_at',
  'request_id',
  'key_id',
  'key_name',
  'api_slug',
  'method',
  'path',
  'status',
  'outcome',
  'cost_cents',
  'cost_usd',
  'billable_cents',
  'billable_usd',
  'latency_ms',
];

function csvLine(r: UsageRecord, names: Map<string, string>): string {
  return `${[
    r.created_at,
    r.request_id,
    r.key_id,
    names.get(r.key_id) ?? '',
    r.api_slug,
    r.method,
    r.path,
    r.status,
    r.outcome,
    r.cost_cents,
    dollarsValue(r.cost_cents),
    r.billable_cents,
    dollarsValue(r.billable_cents),
    r.latency_ms,
  ]
    .map(csvField)
    .join(',')}\r\n`;
}

/** GET /console/usage: the filters, the summary, the charts and a page of calls; refused filters shown again. */
function usagePage(services: Services) {
  return consolePage(services, 'usage', async (ctx, person) => {
    requireScope(person, 'usage:read');
    let filters: Filters;
    try {
      filters = filtersOf(ctx, services);
    } catch (err) {
      const problems = fixable(err, USAGE_FIELDS);
      if (!problems) throw err;
      // The form as typed, each message beside its field; no rows for filters that do not parse.
      const form = filterForm(typedFilters(ctx), await keyNames(services, person), problems);
      return {
        section: 'usage',
        title: 'Usage',
        status: 400,
        body: `${form}<p><a href="/console/usage">Reset the filters</a></p>`,
      };
    }
    const { query, filter } = filters;
    const page = query.page ?? 1;
    const [result, days, keys, account] = await Promise.all([
      services.usage.search(person, filter, { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE }),
      services.usage.daily(person, filter),
      keyNames(services, person),
      services.billing.account(person),
    ]);
    const names = new Map(keys.map((k) => [k.id, k.name]));
    const s = result.summary;
    const summary = `<p>${s.calls.toLocaleString('en-US')} call${s.calls === 1 ? '' : 's'} · ${(s.calls - s.successful_calls).toLocaleString('en-US')} failed · ${money(s.cost_cents)} spent · <a href="/console/usage.csv${escapeHtml(queryString(query))}" download>Download CSV</a></p>`;
    const rows =
      result.items.length > 0
        ? `${table(result.items, names)}${pager(query, page, result.pagination.has_more)}`
        : emptyState(
            s.calls > 0
              ? 'No calls on this page. <a href="/console/usage">Back to the first page</a>.'
              : 'No calls match these filters. Widen the dates or reset the filters; calls made with your keys appear here within seconds.',
          );
    return {
      section: 'usage',
      title: 'Usage',
      banners: accountBanners(account),
      body: `${filterForm(query, keys)}\n${summary}\n${s.calls > 0 ? charts(days, query) : ''}\n<h2>Calls</h2>\n${rows}`,
    };
  });
}

export function usageConsole(services: Services, router: Router<AppState>): void {
  router.get('/console/usage', usagePage(services));

  router.get(
    '/console/usage.csv',
    consolePage(services, 'usage', async (ctx, person) => {
      requireScope(person, 'usage:read');
      const { query, filter } = filtersOf(ctx, services);
      const names = new Map((await keyNames(services, person)).map((k) => [k.id, k.name]));
      async function* lines() {
        yield `${CSV_COLUMNS.join(',')}\r\n`;
        for await (const batch of services.usage.walk(person, filter)) {
          yield batch.map((r) => csvLine(r, names)).join('');
        }
      }
      ctx.status = 200;
      ctx.type = 'text/csv; charset=utf-8';
      ctx.set('Content-Disposition', `attachment; filename="usage-${query.from}-to-${query.to}.csv"`);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = Readable.from(lines());
    }),
  );
}
