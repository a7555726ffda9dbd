/** Console · Provider · My APIs: the list with statuses, the create/import form, Stripe Connect onboarding. */
import { escapeHtml } from '../../../core/html.js';
import { connectStateOf } from '../../../core/providers/console-reads.js';
import { CreateApiBody, type ProviderApiSummary } from '../../../core/providers/providers.schemas.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext } from '../../context.js';
import { csrfToken, hidden, readForm } from '../forms.js';
import {
  fieldError,
  fieldMessage,
  fixable,
  type FormFields,
  type FormProblems,
  invalidAttrs,
  problemSummary,
} from '../form-errors.js';
import { emptyState, renderConsole, type ConsoleView } from './shell.js';
import { options } from './provider-forms.js';
import { parseForm, seeOther, when } from './forms.js';
import { endpointsField, readEndpointLines } from './provider-endpoints.js';
import { providerPage, requireProvider, statusBadge, type ProviderView } from './provider-common.js';

// ---- my APIs and the create form -------------------------------------------------------------------------------

interface CreateValues {
  name?: string;
  slug?: string;
  summary?: string;
  base_url?: string;
  category?: string;
  openapi_url?: string;
  endpoints?: string;
}

/** The create form's fields by the provider route's schema (form-errors.ts); the endpoints by their textarea line. */
function createFields(lineOf: readonly number[]): FormFields {
  return {
    name: 'Name',
    slug: 'Slug',
    summary: 'Summary',
    base_url: 'Upstream base URL',
    category: 'Category',
    import_from: { id: 'openapi_url', label: 'OpenAPI document URL' },
    endpoints: endpointsField(lineOf),
  };
}

async function createForm(services: Services, ctx: AppContext, values: CreateValues, p?: FormProblems) {
  const categories = await services.listings.categories();
  const v = (k: keyof CreateValues) => escapeHtml(values[k] ?? '');
  const bad = (id: string, help?: string) => invalidAttrs(p, id, help);
  const note = (id: string) => fieldMessage(p, id);
  return `<section aria-labelledby="create-h"><h2 id="create-h">Create or import an API</h2>
${problemSummary(p)}
<form method="post" action="/console/provider/apis">${hidden('csrf', csrfToken(ctx))}
<label for="name">Name</label><input id="name" name="name" required maxlength="100" size="40" value="${v('name')}"${bad('name')}>${note('name')}
<label for="slug">Slug (in URLs: lower-case letters, digits, hyphens)</label><input id="slug" name="slug" required maxlength="64" size="40" value="${v('slug')}" pattern="[a-z0-9][a-z0-9\\-]*"${bad('slug')}>${note('slug')}
<label for="summary">Summary</label><input id="summary" name="summary" required maxlength="300" size="60" value="${v('summary')}"${bad('summary')}>${note('summary')}
<label for="base_url">Upstream base URL</label><input id="base_url" name="base_url" required maxlength="2000" size="60" value="${v('base_url')}" placeholder="https://api.example.com/v1"${bad('base_url')}>${note('base_url')}
<label for="category">Category</label><select id="category" name="category"${bad('category')}><option value="">None</option>${options(
    categories.map((c) => ({ value: c.slug, label: c.name })),
    values.category,
  )}</select>${note('category')}
<label for="openapi_url">Import endpoints from an OpenAPI document URL (optional)</label><input id="openapi_url" name="openapi_url" maxlength="2000" size="60" value="${v('openapi_url')}" placeholder="https://api.example.com/openapi.json"${bad('openapi_url')}>${note('openapi_url')}
<label for="endpoints">Endpoints, one per line: <code>METHOD /path price summary</code> (price in dollars, optional)</label>
<textarea id="endpoints" name="endpoints" rows="5" cols="60"${bad('endpoints', 'endpoints-help')}>${v('endpoints')}</textarea>${note('endpoints')}
<p id="endpoints-help" class="muted">Example: <code>GET /forecast/{city} 0.05 Forecast for a city</code>. Imported operations start free; a line for the same method and path overrides them.</p>
<p><button type="submit">Create API</button></p></form></section>`;
}

/**
 * `npm start`'s embedded payments have no Connect onboarding page (stripe-mock's link leads nowhere): say so, and
 * where the earnings are meanwhile, instead of a button to a dead end.
 */
const EMBEDDED_PAYOUTS = `<p class="muted">Test mode: this marketplace runs on embedded payments (no Stripe account is
configured), so payouts cannot be set up here. Net earnings stay in your organization's balance, which also pays for
your own calls; payouts need a Stripe account (<code>STRIPE_SECRET_KEY</code>).</p>`;

async function connectCard(services: Services, ctx: AppContext, person: SessionPrincipal): Promise<string> {
  const state = await connectStateOf(services.orm, person.orgId);
  const explain: Record<string, string> = {
    none: 'Payouts are not set up: start Stripe Connect onboarding to be paid for calls.',
    pending: 'Onboarding started but not finished: continue it to enable payouts.',
    enabled: 'Payouts are enabled.',
  };
  const action = !services.stripe
    ? '<p class="muted">Payments are not configured on this marketplace.</p>'
    : services.embeddedPayments
      ? EMBEDDED_PAYOUTS
      : state.status === 'enabled'
        ? ''
        : `<form method="post" action="/console/provider/connect">${hidden('csrf', csrfToken(ctx))}<button type="submit">${state.status === 'none' ? 'Start payouts onboarding' : 'Continue onboarding'}</button></form>`;
  return `<div class="card"><div class="muted">Stripe Connect</div><div>${statusBadge(state.status)}</div><p>${escapeHtml(explain[state.status] ?? state.status)}</p>${action}</div>`;
}

/** Archived APIs, apart: retired, their URLs answer 410, restorable from their page. */
function archivedSection(archived: ProviderApiSummary[]): string {
  if (!archived.length) return '';
  const rows = archived
    .map(
      (a) =>
        `<tr><td><a href="/console/provider/apis/${encodeURIComponent(a.api_id)}">${escapeHtml(a.name)}</a><br><span class="muted">${escapeHtml(a.slug)}</span></td><td>${escapeHtml(when(a.archived_at))}</td><td>${escapeHtml(when(a.published_at))}</td></tr>`,
    )
    .join('');
  return `<section aria-labelledby="archived-h"><h2 id="archived-h">Archived APIs</h2>
<p class="muted">Retired: out of the catalog, their URLs answer 410 api_archived, their history and slugs kept. Open one to restore it to a draft.</p>
<table><caption class="visually-hidden">Archived APIs</caption><thead><tr><th scope="col">API</th><th scope="col">Archived</th><th scope="col">Last published</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

export const apisView: ProviderView<{ problems: FormProblems; values: CreateValues }> = async (
  services,
  ctx,
  person,
  error,
) => {
  const page = await services.providers.list(person, { limit: 200, offset: 0 });
  const current = page.items.filter((a) => a.status !== 'archived');
  const rows = current
    .map(
      (
        a,
      ) => `<tr><td><a href="/console/provider/apis/${encodeURIComponent(a.api_id)}">${escapeHtml(a.name)}</a><br><span class="muted">${escapeHtml(a.slug)}</span></td>
<td>${statusBadge(a.status)}</td><td>${statusBadge(a.verification_status)}</td><td class="num">${a.endpoint_count}</td><td>${escapeHtml(when(a.published_at))}</td><td>${escapeHtml(when(a.updated_at))}</td></tr>`,
    )
    .join('');
  const list = current.length
    ? `<table><caption class="visually-hidden">My APIs</caption><thead><tr><th scope="col">API</th><th scope="col">Status</th><th scope="col">Verification</th><th scope="col" class="num">Endpoints</th><th scope="col">Published</th><th scope="col">Updated</th></tr></thead><tbody>${rows}</tbody></table>`
    : emptyState(
        page.items.length
          ? '<p><strong>All your APIs are archived.</strong></p><p>Restore one below, or create a new one.</p>'
          : '<p><strong>You have no APIs yet.</strong></p><p>Create one below: give it an upstream URL and endpoints, or import them from an OpenAPI document.</p>',
      );
  const connect = await connectCard(services, ctx, person);
  return providerPage(
    ctx,
    'Provider',
    '/console/provider',
    error ? 400 : 200,
    `<div class="cards">${connect}<div class="card"><div class="muted">APIs</div><div class="figure">${page.pagination.total ?? page.items.length}</div><div class="muted">${page.items.filter((a) => a.status === 'live').length} live${page.items.length > current.length ? `, ${page.items.length - current.length} archived` : ''}</div></div></div>
<section aria-labelledby="apis-h"><h2 id="apis-h">My APIs</h2>${list}</section>
${archivedSection(page.items.filter((a) => a.status === 'archived'))}
${await createForm(services, ctx, error?.values ?? {}, error?.problems)}`,
  );
};

export async function createApi(services: Services, ctx: AppContext, person: SessionPrincipal) {
  requireProvider(person);
  const form = await readForm(ctx);
  const values: CreateValues = {
    name: form.name,
    slug: form.slug,
    summary: form.summary,
    base_url: form.base_url,
    category: form.category,
    openapi_url: form.openapi_url,
    endpoints: form.endpoints,
  };
  let lineOf: readonly number[] = [];
  try {
    const lines = readEndpointLines(form.endpoints ?? '');
    lineOf = lines.lineOf;
    const body = parseForm(
      CreateApiBody,
      {
        name: form.name ?? '',
        slug: form.slug ?? '',
        summary: form.summary ?? '',
        base_url: form.base_url ?? '',
        ...(form.category ? { category: form.category } : {}),
        ...(form.openapi_url?.trim() ? { import_from: { type: 'openapi_url', url: form.openapi_url.trim() } } : {}),
        endpoints: lines.endpoints,
      },
      createFields(lineOf),
    );
    if (!body.import_from && !body.endpoints?.length) {
      throw fieldError(
        'endpoints',
        'Endpoints',
        'list at least one endpoint, or give an OpenAPI document URL to import',
      );
    }
    const created = await services.providers.create(person, body);
    seeOther(ctx, `/console/provider/apis/${created.api_id}`, 'created');
  } catch (err) {
    const problems = fixable(err, createFields(lineOf));
    if (!problems) throw err;
    return apisView(services, ctx, person, { problems, values });
  }
}

// ---- Connect --------------------------------------------------------------------------------------------------

export async function startConnect(
  services: Services,
  ctx: AppContext,
  person: SessionPrincipal,
): Promise<ConsoleView | void> {
  requireProvider(person);
  await readForm(ctx);
  if (!services.stripe || services.embeddedPayments) {
    renderConsole(ctx, person, {
      section: 'provider',
      title: 'Payouts onboarding',
      status: 503,
      body: `${services.stripe ? EMBEDDED_PAYOUTS : emptyState('<p>Payments are not configured on this marketplace, so payouts cannot be set up.</p>')}<p><a href="/console/provider">Back</a></p>`,
    });
    return;
  }
  const link = await services.connect.onboard(person);
  // A link, not a redirect: the pages' CSP only lets forms go to this site, and the link opens Stripe's own pages.
  return {
    section: 'provider',
    title: 'Payouts onboarding',
    body: `<p>Stripe hosts the onboarding (identity and bank details). The link works once${link.expires_at ? `, until ${escapeHtml(when(link.expires_at))}` : ''}.</p>
<p><a class="button" href="${escapeHtml(link.url)}" rel="noopener noreferrer">Continue to Stripe</a></p>
<p class="muted">Status now: ${statusBadge(link.status)}. When you finish, Stripe brings you back and <a href="/console/provider">My APIs</a> shows the new status.</p>`,
  };
}
