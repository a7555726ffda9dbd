/**
 * Console · Provider: my APIs with their status, the create/import form, one API's page (credential, pricing
 * editor with scheduled increases, verify / publish / unpublish, the smoke test's evidence), documents, analytics
 * (GMV, calls, fees and payouts per day), Connect onboarding, and the open requests for missing APIs.
 * Every action calls the service the provider REST routes call, as the signed-in person (same scope and ownership
 * checks); verify and publish run the Temporal workflow with its bounded wait, and a run that outlasts it shows as
 * running until the person refreshes the page. Forms post back with a CSRF token and answer 303 (Post/Redirect/Get);
 * bad input re-renders the form with the message and what was typed (400).
 */
import type Router from '@koa/router';
import { AppError, ForbiddenError, ValidationError } from '../../../core/errors.js';
import { escapeHtml } from '../../../core/html.js';
import { AnalyticsQuery } from '../../../core/providers/analytics.service.js';
import { connectStateOf, providerDaily } from '../../../core/providers/console-reads.js';
import {
  CreateApiBody,
  CreateDocumentBody,
  CredentialsBody,
  PricingBody,
  PublishBody,
  UpdateApiBody,
} from '../../../core/providers/providers.schemas.js';
import type { LifecycleOutcome, ProviderApiView } from '../../../core/providers/providers.service.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import { DOCUMENT_KINDS, INJECTIONS } from '../../../db/entities/index.js';
import type { AppContext, AppState } from '../../context.js';
import { barChart, lineChart } from '../charts.js';
import { csrfToken, hidden, paramOf, readForm } from '../pages.routes.js';
import { consolePage, emptyState, money, renderConsole, type ConsoleView } from './shell.js';
import { dollarsToCents, formError, formQuery, options } from './provider-forms.js';
import { dollarsValue, flash, parseForm, seeOther, when } from './forms.js';
import { parseEndpointLines } from './provider-endpoints.js';

type Flash = Record<string, ['good' | 'warn' | 'bad', string]>;

const FLASH: Flash = {
  created: ['good', 'API created as a draft. Set its prices and credential, then verify and publish it.'],
  details: ['good', 'Details saved.'],
  credentials: ['good', 'Upstream credential saved. It is stored encrypted and never shown again.'],
  priced: ['good', 'Prices saved.'],
  scheduled: ['good', 'Prices saved. Increases on a live API apply after the notice period (see Scheduled changes).'],
  unchanged: ['warn', 'No price changed.'],
  cancelled: ['good', 'The scheduled price change is cancelled.'],
  verified: ['good', 'Verification finished: see the smoke test below.'],
  published: ['good', 'Published: the API is live in the catalog.'],
  'publish-failed': ['bad', 'Not published: the upstream smoke test failed (see below). Fix the upstream and retry.'],
  unpublished: ['good', 'Unpublished: the API is a draft again and out of the catalog.'],
  running: ['warn', 'The workflow is still running. Refresh this page to see its outcome.'],
  document: ['good', 'Document saved as a draft. Activate it to put it in force.'],
  activated: ['good', 'Document activated: it is in force for new acceptances.'],
};

const sub = [
  { path: '/console/provider', label: 'My APIs' },
  { path: '/console/provider/analytics', label: 'Analytics' },
  { path: '/console/provider/documents', label: 'Documents' },
  { path: '/console/provider/requests', label: 'Requests' },
];

function subNav(current: string): string {
  return `<nav aria-label="Provider"><ul class="chips">${sub
    .map((s) => `<li><a href="${s.path}"${s.path === current ? ' aria-current="page"' : ''}>${s.label}</a></li>`)
    .join('')}</ul></nav>`;
}

/** A person without provider:write (email not verified) gets a clear page, not an error. */
function gate(person: SessionPrincipal): ConsoleView | undefined {
  if (person.scopes.includes('provider:write')) return undefined;
  return {
    section: 'provider',
    title: 'Provider',
    status: 403,
    body: emptyState(`<p><strong>Listing your own APIs needs a verified email address.</strong></p>
<p>Your organization can search the catalog and call APIs. Open the verification link we emailed you at sign-up, then sign in again to create, price and publish APIs here.</p>
<p><a href="/console/catalog">Browse the catalog</a></p>`),
  };
}

/** For POST handlers: refuse without provider:write, like the REST routes (403 page). */
function requireProvider(person: SessionPrincipal): void {
  if (!person.scopes.includes('provider:write')) {
    throw new ForbiddenError('Listing your own APIs needs a verified email address (scope "provider:write").');
  }
}

const statusBadge = (status: string) =>
  `<span class="badge ${['live', 'passed', 'enabled', 'active'].includes(status) ? 'ok' : status === 'failed' ? 'error' : ''}">${escapeHtml(status)}</span>`;

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

async function createForm(services: Services, ctx: AppContext, values: CreateValues, message?: string) {
  const categories = await services.listings.categories();
  const v = (k: keyof CreateValues) => escapeHtml(values[k] ?? '');
  return `<section aria-labelledby="create-h"><h2 id="create-h">Create or import an API</h2>
${formError(message)}
<form method="post" action="/console/provider/apis">${hidden('csrf', csrfToken(ctx))}
<label for="name">Name</label><input id="name" name="name" required maxlength="100" size="40" value="${v('name')}">
<label for="slug">Slug (in URLs: lower-case letters, digits, hyphens)</label><input id="slug" name="slug" required maxlength="64" size="40" value="${v('slug')}" pattern="[a-z0-9][a-z0-9\\-]*">
<label for="summary">Summary</label><input id="summary" name="summary" required maxlength="300" size="60" value="${v('summary')}">
<label for="base_url">Upstream base URL</label><input id="base_url" name="base_url" required maxlength="2000" size="60" value="${v('base_url')}" placeholder="https://api.example.com/v1">
<label for="category">Category</label><select id="category" name="category"><option value="">None</option>${options(
    categories.map((c) => ({ value: c.slug, label: c.name })),
    values.category,
  )}</select>
<label for="openapi_url">Import endpoints from an OpenAPI document URL (optional)</label><input id="openapi_url" name="openapi_url" maxlength="2000" size="60" value="${v('openapi_url')}" placeholder="https://api.example.com/openapi.json">
<label for="endpoints">Endpoints, one per line: <code>METHOD /path price summary</code> (price in dollars, optional)</label>
<textarea id="endpoints" name="endpoints" rows="5" cols="60" aria-describedby="endpoints-help">${v('endpoints')}</textarea>
<p id="endpoints-help" class="muted">Example: <code>GET /forecast/{city} 0.05 Forecast for a city</code>. Imported operations start free; a line for the same method and path overrides them.</p>
<p><button type="submit">Create API</button></p></form></section>`;
}

async function connectCard(services: Services, ctx: AppContext, person: SessionPrincipal): Promise<string> {
  const state = await connectStateOf(services.orm, person.orgId);
  const explain: Record<string, string> = {
    none: 'Payouts are not set up: start Stripe Connect onboarding to be paid for calls.',
    pending: 'Onboarding started but not finished: continue it to enable payouts.',
    enabled: 'Payouts are enabled.',
  };
  const action = !services.stripe
    ? '<p class="muted">Payments are not configured on this marketplace.</p>'
    : state.status === 'enabled'
      ? ''
      : `<form method="post" action="/console/provider/connect">${hidden('csrf', csrfToken(ctx))}<button type="submit">${state.status === 'none' ? 'Start payouts onboarding' : 'Continue onboarding'}</button></form>`;
  return `<div class="card"><div class="muted">Stripe Connect</div><div>${statusBadge(state.status)}</div><p>${escapeHtml(explain[state.status] ?? state.status)}</p>${action}</div>`;
}

async function apisView(
  services: Services,
  ctx: AppContext,
  person: SessionPrincipal,
  error?: { message: string; values: CreateValues },
): Promise<ConsoleView> {
  const gated = gate(person);
  if (gated) return gated;
  const page = await services.providers.list(person, { limit: 200, offset: 0 });
  const rows = page.items
    .map(
      (
        a,
      ) => `<tr><td><a href="/console/provider/apis/${encodeURIComponent(a.api_id)}">${escapeHtml(a.name)}</a><br><span class="muted">${escapeHtml(a.slug)}</span></td>
<td>${statusBadge(a.status)}</td><td>${statusBadge(a.verification_status)}</td><td class="num">${a.endpoint_count}</td><td>${escapeHtml(when(a.published_at))}</td><td>${escapeHtml(when(a.updated_at))}</td></tr>`,
    )
    .join('');
  const list = page.items.length
    ? `<table><caption class="visually-hidden">My APIs</caption><thead><tr><th scope="col">API</th><th scope="col">Status</th><th scope="col">Verification</th><th scope="col" class="num">Endpoints</th><th scope="col">Published</th><th scope="col">Updated</th></tr></thead><tbody>${rows}</tbody></table>`
    : emptyState(
        '<p><strong>You have no APIs yet.</strong></p><p>Create one below: give it an upstream URL and endpoints, or import them from an OpenAPI document.</p>',
      );
  const connect = await connectCard(services, ctx, person);
  return {
    section: 'provider',
    title: 'Provider',
    status: error ? 400 : 200,
    banners: flash(ctx, FLASH),
    body: `${subNav('/console/provider')}
<div class="cards">${connect}<div class="card"><div class="muted">APIs</div><div class="figure">${page.pagination.total ?? page.items.length}</div><div class="muted">${page.items.filter((a) => a.status === 'live').length} live</div></div></div>
<section aria-labelledby="apis-h"><h2 id="apis-h">My APIs</h2>${list}</section>
${await createForm(services, ctx, error?.values ?? {}, error?.message)}`,
  };
}

async function createApi(services: Services, ctx: AppContext, person: SessionPrincipal) {
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
  try {
    const body = parseForm(CreateApiBody, {
      name: form.name ?? '',
      slug: form.slug ?? '',
      summary: form.summary ?? '',
      base_url: form.base_url ?? '',
      ...(form.category ? { category: form.category } : {}),
      ...(form.openapi_url?.trim() ? { import_from: { type: 'openapi_url', url: form.openapi_url.trim() } } : {}),
      endpoints: parseEndpointLines(form.endpoints ?? ''),
    });
    if (!body.import_from && !body.endpoints?.length) {
      throw new ValidationError('endpoints: list at least one endpoint, or give an OpenAPI document URL to import.');
    }
    const created = await services.providers.create(person, body);
    seeOther(ctx, `/console/provider/apis/${created.api_id}`, 'created');
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500 || err.status === 403) throw err;
    return apisView(services, ctx, person, { message: err.message, values });
  }
}

// ---- one API --------------------------------------------------------------------------------------------------

interface ApiFormState {
  form: 'pricing' | 'credentials' | 'publish' | 'details';
  message: string;
  /** What was typed, shown again after a 400. */
  typed?: Record<string, string>;
  status?: number;
}

function lifecycleForms(ctx: AppContext, api: ProviderApiView, state?: ApiFormState): string {
  const csrf = hidden('csrf', csrfToken(ctx));
  const base = `/console/provider/apis/${encodeURIComponent(api.api_id)}`;
  const verify = `<form method="post" action="${base}/verify" class="inline">${csrf}<button type="submit">Verify now</button></form>`;
  if (api.status === 'live') {
    return `<p>${verify} <form method="post" action="${base}/unpublish" class="inline">${csrf}<button type="submit">Unpublish</button></form></p>
<p>Live at <a href="/console/catalog/apis/${encodeURIComponent(api.slug)}">its catalog page</a>.</p>`;
  }
  return `<p>${verify}</p>
${state?.form === 'publish' ? formError(state.message) : ''}
<form method="post" action="${base}/publish">${csrf}
<p><input type="checkbox" id="accept_terms" name="accept_terms" value="yes" required> <label for="accept_terms" class="inline-label">I accept the provider terms of this marketplace</label></p>
<p><button type="submit">Publish</button></p></form>`;
}

function verificationTable(api: ProviderApiView): string {
  const result = api.verification.result;
  if (!result) return '<p class="muted">Not verified yet: “Verify now” calls the upstream like a consumer would.</p>';
  const rows = result.checks
    .map(
      (c) =>
        `<tr><td><code>${escapeHtml(c.method)} ${escapeHtml(c.path)}</code></td><td class="num">${c.status ?? '—'}</td><td class="num">${c.latency_ms ?? '—'}</td><td>${c.ok ? '<span class="ok">ok</span>' : `<span class="error">${escapeHtml(c.error ?? 'failed')}</span>`}</td></tr>`,
    )
    .join('');
  return `<p>Smoke test ${result.passed ? '<strong class="ok">passed</strong>' : '<strong class="error">failed</strong>'} at ${escapeHtml(when(result.checked_at))}.</p>
<table><caption class="visually-hidden">Smoke test checks</caption><thead><tr><th scope="col">Endpoint</th><th scope="col" class="num">HTTP status</th><th scope="col" class="num">Latency ms</th><th scope="col">Result</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function pricingForm(ctx: AppContext, api: ProviderApiView, state?: ApiFormState): string {
  if (!api.endpoints.length) return emptyState('This API has no endpoints to price.');
  const typed = state?.form === 'pricing' ? state.typed : undefined;
  const rows = api.endpoints
    .map((e) => {
      const id = `price_${e.endpoint_id}`;
      const value = typed?.[`price_${e.endpoint_id}`] ?? dollarsValue(e.price_cents);
      return `<tr><td><code>${escapeHtml(e.method)}</code></td><td><label for="${id}" class="inline-label"><code>${escapeHtml(e.path)}</code></label>${e.summary ? `<br><span class="muted">${escapeHtml(e.summary)}</span>` : ''}</td>
<td class="num">${money(e.price_cents_effective)}</td><td>$ <input id="${id}" name="${id}" inputmode="decimal" size="8" value="${escapeHtml(value)}"></td></tr>`;
    })
    .join('');
  return `${state?.form === 'pricing' ? formError(state.message) : ''}
<form method="post" action="/console/provider/apis/${encodeURIComponent(api.api_id)}/pricing">${hidden('csrf', csrfToken(ctx))}
<table><caption class="visually-hidden">Prices per endpoint</caption><thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col" class="num">Price now</th><th scope="col">New price (dollars per call)</th></tr></thead><tbody>${rows}</tbody></table>
<p class="muted">${api.status === 'live' ? 'On a live API a decrease applies at once; an increase applies after the notice period.' : 'Draft: prices apply at once.'}</p>
<p><button type="submit">Save prices</button></p></form>`;
}

function scheduledTable(ctx: AppContext, api: ProviderApiView): string {
  const pending = api.endpoints.filter((e) => e.price_increase);
  if (!pending.length) return '<p class="muted">No scheduled price changes.</p>';
  const rows = pending
    .map(
      (e) =>
        `<tr><td><code>${escapeHtml(e.method)} ${escapeHtml(e.path)}</code></td><td class="num">${money(e.price_cents)}</td><td class="num">${money(e.price_increase!.price_cents)}</td><td>${escapeHtml(when(e.price_increase!.effective_at))}</td>
<td><form method="post" action="/console/provider/apis/${encodeURIComponent(api.api_id)}/endpoints/${encodeURIComponent(e.endpoint_id)}/cancel-price" class="inline">${hidden('csrf', csrfToken(ctx))}<button type="submit" aria-label="Cancel the change of ${escapeHtml(`${e.method} ${e.path}`)}">Cancel</button></form></td></tr>`,
    )
    .join('');
  return `<table><caption class="visually-hidden">Scheduled price changes</caption><thead><tr><th scope="col">Endpoint</th><th scope="col" class="num">Now</th><th scope="col" class="num">New</th><th scope="col">From</th><th scope="col">Action</th></tr></thead><tbody>${rows}</tbody></table>`;
}

async function detailsForm(services: Services, ctx: AppContext, api: ProviderApiView, state?: ApiFormState) {
  const categories = await services.listings.categories();
  const typed = state?.form === 'details' ? state.typed : undefined;
  const v = (name: string, current: string | null) => escapeHtml(typed?.[name] ?? current ?? '');
  return `${state?.form === 'details' ? formError(state.message) : ''}
<form method="post" action="/console/provider/apis/${encodeURIComponent(api.api_id)}">${hidden('csrf', csrfToken(ctx))}
<label for="edit-name">Name</label><input id="edit-name" name="name" required maxlength="100" size="40" value="${v('name', api.name)}">
<label for="edit-summary">Summary</label><input id="edit-summary" name="summary" required maxlength="300" size="60" value="${v('summary', api.summary)}">
<label for="edit-category">Category</label><select id="edit-category" name="category"><option value="">None</option>${options(
    categories.map((c) => ({ value: c.slug, label: c.name })),
    typed?.category ?? api.category ?? '',
  )}</select>
<label for="edit-tags">Tags (comma-separated)</label><input id="edit-tags" name="tags" maxlength="900" size="60" value="${v('tags', api.tags.join(', '))}">
<label for="edit-base_url">Upstream base URL (changing it needs a new verification)</label><input id="edit-base_url" name="base_url" required maxlength="2000" size="60" value="${v('base_url', api.base_url)}">
<label for="edit-docs_url">Documentation URL (optional)</label><input id="edit-docs_url" name="docs_url" maxlength="2000" size="60" value="${v('docs_url', api.docs_url)}">
<p><button type="submit">Save details</button></p></form>`;
}

/** The details form → UpdateApiBody (the upstream only when it changed: a new upstream is unverified). */
function detailsInput(api: ProviderApiView, body: Record<string, string>): UpdateApiBody {
  const baseUrl = (body.base_url ?? '').trim();
  return parseForm(UpdateApiBody, {
    name: body.name ?? '',
    summary: body.summary ?? '',
    category: body.category ? body.category : null,
    tags: (body.tags ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
    docs_url: body.docs_url?.trim() ? body.docs_url.trim() : null,
    ...(baseUrl !== api.base_url ? { base_url: baseUrl } : {}),
  });
}

function credentialsForm(ctx: AppContext, api: ProviderApiView, state?: ApiFormState): string {
  const c = api.credential;
  const now = c.set
    ? `<p>A credential is set (${escapeHtml(c.injection ?? '')}${c.injection_name ? ` “${escapeHtml(c.injection_name)}”` : ''}, updated ${escapeHtml(when(c.updated_at))}). It is never shown; saving a new one replaces it.</p>`
    : '<p class="muted">No upstream credential: the gateway calls the upstream without one.</p>';
  return `${now}${state?.form === 'credentials' ? formError(state.message) : ''}
<form method="post" action="/console/provider/apis/${encodeURIComponent(api.api_id)}/credentials">${hidden('csrf', csrfToken(ctx))}
<label for="secret">Secret</label><input id="secret" name="secret" type="password" autocomplete="off" required maxlength="4096" size="40">
<label for="injection">How the gateway sends it</label><select id="injection" name="injection">${options(
    INJECTIONS.map((i) => ({
      value: i,
      label: {
        bearer: 'Authorization: Bearer',
        header: 'A header',
        query: 'A query parameter',
        basic: 'Basic auth (user:password)',
      }[i],
    })),
    c.injection ?? 'bearer',
  )}</select>
<label for="injection_name">Header or parameter name (for header or query)</label><input id="injection_name" name="injection_name" maxlength="100" size="30" value="${escapeHtml(c.injection_name ?? '')}">
<p><button type="submit">Save credential</button></p></form>`;
}

async function apiView(
  services: Services,
  ctx: AppContext,
  person: SessionPrincipal,
  state?: ApiFormState,
): Promise<ConsoleView> {
  const gated = gate(person);
  if (gated) return gated;
  const api = await services.providers.get(person, paramOf(ctx, 'id'));
  const docs = await services.documents.list(person, { api_id: api.api_id });
  const docList = docs.length
    ? `<ul>${docs.map((d) => `<li>${escapeHtml(d.title ?? d.kind)} (${escapeHtml(d.kind)}, version ${escapeHtml(d.version)}, ${statusBadge(d.status)})</li>`).join('')}</ul>`
    : '<p class="muted">No documents for this API (organization-wide documents still apply).</p>';
  const source = api.import_source
    ? `<p class="muted">Imported from ${escapeHtml(api.import_source.url)} on ${escapeHtml(when(api.import_source.imported_at))}.</p>`
    : '';
  return {
    section: 'provider',
    title: api.name,
    status: state ? (state.status ?? 400) : 200,
    banners: flash(ctx, FLASH),
    body: `${subNav('')}
<p><a href="/console/provider">← My APIs</a> · <a href="/console/provider/apis/${encodeURIComponent(api.api_id)}">Refresh status</a></p>
<div class="cards">
<div class="card"><div class="muted">Status</div><div class="figure">${statusBadge(api.status)}</div><div class="muted">${api.published_at ? `since ${escapeHtml(when(api.published_at))}` : 'not published'}</div></div>
<div class="card"><div class="muted">Verification</div><div class="figure">${statusBadge(api.verification.status)}</div></div>
<div class="card"><div class="muted">Endpoints</div><div class="figure">${api.endpoints.length}</div></div>
</div>
<p>${escapeHtml(api.summary)}</p>
<p class="muted">Slug <code>${escapeHtml(api.slug)}</code> · upstream <code>${escapeHtml(api.base_url)}</code> · gateway <code>${escapeHtml(api.gateway_url)}</code></p>
${source}
<section aria-labelledby="lifecycle-h"><h2 id="lifecycle-h">Verify and publish</h2>${lifecycleForms(ctx, api, state)}${verificationTable(api)}</section>
<section aria-labelledby="pricing-h"><h2 id="pricing-h">Prices</h2>${pricingForm(ctx, api, state)}</section>
<section aria-labelledby="scheduled-h"><h2 id="scheduled-h">Scheduled changes</h2>${scheduledTable(ctx, api)}</section>
<section aria-labelledby="details-h"><h2 id="details-h">Details</h2>${await detailsForm(services, ctx, api, state)}</section>
<section aria-labelledby="credential-h"><h2 id="credential-h">Upstream credential</h2>${credentialsForm(ctx, api, state)}</section>
<section aria-labelledby="docs-h"><h2 id="docs-h">Documents</h2>${docList}<p><a href="/console/provider/documents">Add or activate documents</a></p></section>`,
  };
}

/** Run a POST on one API; a 4xx re-renders the API's page with the message next to the form (400 keeps input). */
function apiAction(
  services: Services,
  form: ApiFormState['form'],
  act: (ctx: AppContext, person: SessionPrincipal, apiId: string, body: Record<string, string>) => Promise<string>,
) {
  return consolePage(services, 'provider', async (ctx, person) => {
    requireProvider(person);
    const body = await readForm(ctx);
    const apiId = paramOf(ctx, 'id');
    try {
      seeOther(ctx, `/console/provider/apis/${encodeURIComponent(apiId)}`, await act(ctx, person, apiId, body));
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500 || err.status === 403) throw err;
      const { secret: _secret, ...typed } = body;
      return apiView(services, ctx, person, { form, message: err.message, typed, status: err.status }).catch(
        (missing: unknown) => {
          if (!(missing instanceof AppError) || missing.status !== 404) throw missing;
          return {
            section: 'provider' as const,
            title: 'Provider',
            status: 404,
            body: `<p class="error" role="alert">${escapeHtml(missing.message)}</p><p><a href="/console/provider">Back to my APIs</a></p>`,
          };
        },
      );
    }
  });
}

/** verify / publish / unpublish outcome → the flash code. */
function outcomeCode(outcome: LifecycleOutcome, done: string): string {
  return outcome.done ? done : 'running';
}

async function savePrices(services: Services, person: SessionPrincipal, apiId: string, body: Record<string, string>) {
  const api = await services.providers.get(person, apiId);
  const changes: { endpoint_id: string; price_cents: number }[] = [];
  for (const e of api.endpoints) {
    const raw = body[`price_${e.endpoint_id}`];
    if (raw === undefined || raw.trim() === '') continue;
    const cents = dollarsToCents(raw, `price of ${e.method} ${e.path}`);
    const target = e.price_increase?.price_cents ?? e.price_cents;
    if (cents !== target) changes.push({ endpoint_id: e.endpoint_id, price_cents: cents });
  }
  if (!changes.length) return 'unchanged';
  const saved = await services.providers.updatePricing(person, apiId, parseForm(PricingBody, { endpoints: changes }));
  return saved.endpoints.some((e) => e.price_increase) ? 'scheduled' : 'priced';
}

// ---- documents ------------------------------------------------------------------------------------------------

interface DocumentValues {
  kind?: string;
  version?: string;
  title?: string;
  api_id?: string;
  acceptance_mode?: string;
  body?: string;
}

async function documentsView(
  services: Services,
  ctx: AppContext,
  person: SessionPrincipal,
  error?: { message: string; values: DocumentValues },
): Promise<ConsoleView> {
  const gated = gate(person);
  if (gated) return gated;
  const [docs, apis] = await Promise.all([
    services.documents.list(person, {}),
    services.providers.list(person, { limit: 200, offset: 0 }),
  ]);
  const apiName = new Map(apis.items.map((a) => [a.api_id, a.name]));
  const csrf = hidden('csrf', csrfToken(ctx));
  const rows = docs
    .map(
      (
        d,
      ) => `<tr><td>${escapeHtml(d.title ?? d.kind)}<br><span class="muted">${escapeHtml(d.kind)} · version ${escapeHtml(d.version)}</span></td>
<td>${d.api_id ? escapeHtml(apiName.get(d.api_id) ?? d.api_id) : 'All my APIs'}</td><td>${escapeHtml(d.acceptance_mode)}</td><td>${statusBadge(d.status)}</td>
<td><a href="/v1/documents/${encodeURIComponent(d.document_id)}/snapshot">Text</a> <span class="muted">sha256 ${escapeHtml(d.content_hash.slice(0, 12))}…</span></td>
<td>${d.status === 'active' ? '' : `<form method="post" action="/console/provider/documents/${encodeURIComponent(d.document_id)}/activate" class="inline">${csrf}<button type="submit" aria-label="Activate ${escapeHtml(`${d.title ?? d.kind} version ${d.version}`)}">Activate</button></form>`}</td></tr>`,
    )
    .join('');
  const list = docs.length
    ? `<table><caption class="visually-hidden">Documents</caption><thead><tr><th scope="col">Document</th><th scope="col">Applies to</th><th scope="col">Acceptance</th><th scope="col">Status</th><th scope="col">Content</th><th scope="col">Action</th></tr></thead><tbody>${rows}</tbody></table>`
    : emptyState(
        '<p><strong>No documents yet.</strong></p><p>Add your terms of use below; consumers see them on your listings and accept required ones before calling.</p>',
      );
  const v = error?.values ?? {};
  return {
    section: 'provider',
    title: 'Documents',
    status: error ? 400 : 200,
    banners: flash(ctx, FLASH),
    body: `${subNav('/console/provider/documents')}
<section aria-labelledby="docs-h"><h2 id="docs-h">My documents</h2>${list}</section>
<section aria-labelledby="add-doc-h"><h2 id="add-doc-h">Add a document</h2>${formError(error?.message)}
<form method="post" action="/console/provider/documents">${csrf}
<label for="kind">Kind</label><select id="kind" name="kind">${options(
      DOCUMENT_KINDS.map((k) => ({ value: k, label: k.replace('_', ' ') })),
      v.kind ?? 'terms',
    )}</select>
<label for="version">Version</label><input id="version" name="version" required maxlength="50" size="12" value="${escapeHtml(v.version ?? '')}" placeholder="1.0">
<label for="title">Title (optional)</label><input id="title" name="title" maxlength="200" size="40" value="${escapeHtml(v.title ?? '')}">
<label for="api_id">Applies to</label><select id="api_id" name="api_id"><option value="">All my APIs</option>${options(
      apis.items.map((a) => ({ value: a.api_id, label: a.name })),
      v.api_id,
    )}</select>
<label for="acceptance_mode">Acceptance</label><select id="acceptance_mode" name="acceptance_mode">${options(
      [
        { value: 'optional', label: 'Optional (shown, not required)' },
        { value: 'required', label: 'Required before calling' },
      ],
      v.acceptance_mode ?? 'optional',
    )}</select>
<label for="doc-body">Text (Markdown)</label><textarea id="doc-body" name="body" required rows="10" cols="70">${escapeHtml(v.body ?? '')}</textarea>
<p><button type="submit">Save document</button></p></form></section>`,
  };
}

async function createDocument(services: Services, ctx: AppContext, person: SessionPrincipal) {
  requireProvider(person);
  const form = await readForm(ctx);
  const values: DocumentValues = { ...form };
  try {
    const body = parseForm(CreateDocumentBody, {
      kind: form.kind ?? '',
      version: form.version ?? '',
      body: form.body ?? '',
      ...(form.title?.trim() ? { title: form.title } : {}),
      ...(form.api_id ? { api_id: form.api_id } : {}),
      ...(form.acceptance_mode ? { acceptance_mode: form.acceptance_mode } : {}),
    });
    await services.documents.create(person, body);
    seeOther(ctx, '/console/provider/documents', 'document');
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500 || err.status === 403) throw err;
    return documentsView(services, ctx, person, { message: err.message, values });
  }
}

// ---- analytics ------------------------------------------------------------------------------------------------

async function analyticsView(services: Services, ctx: AppContext, person: SessionPrincipal): Promise<ConsoleView> {
  const gated = gate(person);
  if (gated) return gated;
  const query = formQuery(ctx);
  const { done: _done, ...range } = query;
  const view = await services.analytics.provider(person, parseForm(AnalyticsQuery, range));
  const days = await providerDaily(services.orm, person.orgId, new Date(view.range.from), new Date(view.range.to));
  const t = view.totals;
  const card = (label: string, value: string) =>
    `<div class="card"><div class="muted">${label}</div><div class="figure">${value}</div></div>`;
  const perDay = (pick: (d: (typeof days)[number]) => number) =>
    days.map((d) => ({ label: d.day.slice(5), value: pick(d) }));
  const charts = `${barChart(
    [
      { name: 'Calls', points: perDay((d) => d.calls) },
      { name: 'Successful', points: perDay((d) => d.successful_calls) },
    ],
    { title: 'Calls per day', empty: 'No calls in this range.' },
  )}
${lineChart([{ name: 'GMV', points: perDay((d) => d.gmv_cents) }], { title: 'GMV per day', format: money, empty: 'No paid calls in this range.' })}
${barChart(
  [
    { name: 'Payouts', points: perDay((d) => d.payouts_cents) },
    { name: 'Platform fees', points: perDay((d) => d.platform_fee_cents) },
  ],
  { title: 'Payouts and platform fees per day', format: money, empty: 'No payouts or fees in this range.' },
)}`;
  const byApi = view.by_api.length
    ? `${barChart([{ name: 'GMV', points: view.by_api.slice(0, 12).map((a) => ({ label: a.slug.slice(0, 18), value: a.gmv_cents })) }], { title: 'GMV by API', format: money, empty: 'No API earned in this range.' })}
<table><caption class="visually-hidden">By API</caption><thead><tr><th scope="col">API</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Successful</th><th scope="col" class="num">GMV</th></tr></thead><tbody>${view.by_api
        .map(
          (a) =>
            `<tr><td><a href="/console/provider/apis/${encodeURIComponent(a.api_id)}">${escapeHtml(a.slug)}</a></td><td class="num">${a.calls}</td><td class="num">${a.successful_calls}</td><td class="num">${money(a.gmv_cents)}</td></tr>`,
        )
        .join('')}</tbody></table>`
    : emptyState(
        '<p><strong>No APIs yet</strong>, so no analytics. <a href="/console/provider">Create an API</a>.</p>',
      );
  return {
    section: 'provider',
    title: 'Analytics',
    body: `${subNav('/console/provider/analytics')}
<form class="filters" method="get" action="/console/provider/analytics">
<div><label for="from">From</label><input id="from" name="from" type="date" value="${escapeHtml(query.from ?? view.range.from.slice(0, 10))}"></div>
<div><label for="to">To</label><input id="to" name="to" type="date" value="${escapeHtml(query.to ?? '')}"></div>
<div><button type="submit">Show</button></div></form>
<p class="muted">${escapeHtml(when(view.range.from))} to ${escapeHtml(when(view.range.to))}</p>
<div class="cards">${card('Calls', t.calls.toLocaleString('en-US'))}${card('Successful calls', t.successful_calls.toLocaleString('en-US'))}${card('GMV', money(t.gmv_cents))}${card('Earnings', money(t.provider_earnings_cents))}${card('Platform fees', money(t.platform_fee_cents))}${card('Net', money(t.net_earnings_cents))}${card('Paid out', money(t.payouts_cents))}</div>
<div class="charts">${charts}</div>
<section aria-labelledby="by-api-h"><h2 id="by-api-h">By API</h2>${byApi}</section>`,
  };
}

// ---- requests for missing APIs --------------------------------------------------------------------------------

async function requestsView(services: Services, ctx: AppContext, person: SessionPrincipal): Promise<ConsoleView> {
  const gated = gate(person);
  if (gated) return gated;
  const requests = await services.demand.list({ limit: 100, status: 'open' });
  const body = requests.length
    ? `<table><caption class="visually-hidden">Open requests</caption><thead><tr><th scope="col">Requested API</th><th scope="col" class="num">Votes</th><th scope="col">First asked</th><th scope="col">Last asked</th></tr></thead><tbody>${requests
        .map(
          (r) =>
            `<tr><td>${escapeHtml(r.query)}</td><td class="num">${r.votes}</td><td>${escapeHtml(when(r.created_at))}</td><td>${escapeHtml(when(r.last_requested_at))}</td></tr>`,
        )
        .join('')}</tbody></table>
<p>Build one? <a href="/console/provider#create-h">Create the API</a>; when it goes live, the requesters who left an email are told.</p>`
    : emptyState(
        '<p><strong>No open requests.</strong></p><p>When consumers ask for an API the catalog lacks, it shows here.</p>',
      );
  return {
    section: 'provider',
    title: 'Requests for missing APIs',
    body: `${subNav('/console/provider/requests')}${body}`,
  };
}

// ---- Connect --------------------------------------------------------------------------------------------------

async function startConnect(
  services: Services,
  ctx: AppContext,
  person: SessionPrincipal,
): Promise<ConsoleView | void> {
  requireProvider(person);
  await readForm(ctx);
  if (!services.stripe) {
    renderConsole(ctx, person, {
      section: 'provider',
      title: 'Payouts onboarding',
      status: 503,
      body: `${emptyState('<p>Payments are not configured on this marketplace, so payouts cannot be set up.</p>')}<p><a href="/console/provider">Back</a></p>`,
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

// ---- routes ---------------------------------------------------------------------------------------------------

export function providerConsole(services: Services, router: Router<AppState>): void {
  const { providers } = services;
  const page = (fn: (ctx: AppContext, person: SessionPrincipal) => Promise<ConsoleView | void>) =>
    consolePage(services, 'provider', fn);

  router.get(
    '/console/provider',
    page((ctx, person) => apisView(services, ctx, person)),
  );
  router.post(
    '/console/provider/apis',
    page((ctx, person) => createApi(services, ctx, person)),
  );
  router.get(
    '/console/provider/apis/:id',
    page((ctx, person) => apiView(services, ctx, person)),
  );
  router.post(
    '/console/provider/apis/:id',
    apiAction(services, 'details', async (_ctx, person, apiId, body) => {
      const api = await providers.get(person, apiId);
      await providers.update(person, apiId, detailsInput(api, body));
      return 'details';
    }),
  );
  router.post(
    '/console/provider/apis/:id/credentials',
    apiAction(services, 'credentials', async (_ctx, person, apiId, body) => {
      const input = parseForm(CredentialsBody, {
        secret: body.secret ?? '',
        injection: body.injection || 'bearer',
        ...(body.injection_name?.trim() ? { injection_name: body.injection_name } : {}),
      });
      await providers.setCredentials(person, apiId, input);
      return 'credentials';
    }),
  );
  router.post(
    '/console/provider/apis/:id/pricing',
    apiAction(services, 'pricing', (_ctx, person, apiId, body) => savePrices(services, person, apiId, body)),
  );
  router.post(
    '/console/provider/apis/:id/endpoints/:endpoint_id/cancel-price',
    apiAction(services, 'pricing', async (ctx, person, apiId) => {
      await providers.cancelPendingPrice(person, apiId, paramOf(ctx, 'endpoint_id'));
      return 'cancelled';
    }),
  );
  router.post(
    '/console/provider/apis/:id/verify',
    apiAction(services, 'publish', async (_ctx, person, apiId) =>
      outcomeCode(await providers.verify(person, apiId), 'verified'),
    ),
  );
  router.post(
    '/console/provider/apis/:id/publish',
    apiAction(services, 'publish', async (_ctx, person, apiId, body) => {
      if (body.accept_terms !== 'yes') {
        throw new ValidationError('Tick “I accept the provider terms” to publish.');
      }
      try {
        return outcomeCode(
          await providers.publish(person, apiId, parseForm(PublishBody, { accept_terms: true })),
          'published',
        );
      } catch (err) {
        if (err instanceof AppError && err.code === 'verification_failed') return 'publish-failed';
        throw err;
      }
    }),
  );
  router.post(
    '/console/provider/apis/:id/unpublish',
    apiAction(services, 'publish', async (_ctx, person, apiId) =>
      outcomeCode(await providers.unpublish(person, apiId), 'unpublished'),
    ),
  );
  router.get(
    '/console/provider/documents',
    page((ctx, person) => documentsView(services, ctx, person)),
  );
  router.post(
    '/console/provider/documents',
    page((ctx, person) => createDocument(services, ctx, person)),
  );
  router.post(
    '/console/provider/documents/:document_id/activate',
    page(async (ctx, person) => {
      requireProvider(person);
      await readForm(ctx);
      await services.documents.activate(person, paramOf(ctx, 'document_id'));
      seeOther(ctx, '/console/provider/documents', 'activated');
    }),
  );
  router.get(
    '/console/provider/analytics',
    page((ctx, person) => analyticsView(services, ctx, person)),
  );
  router.get(
    '/console/provider/requests',
    page((ctx, person) => requestsView(services, ctx, person)),
  );
  router.post(
    '/console/provider/connect',
    page((ctx, person) => startConnect(services, ctx, person)),
  );
}
