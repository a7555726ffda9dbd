/**
 * Console · Provider · one API: details, the upstream credential, the pricing editor with scheduled increases,
 * verify / publish / unpublish (the Temporal workflow with its bounded wait) and the smoke test's evidence.
 */
import { AppError } from '../../../core/errors.js';
import { escapeHtml } from '../../../core/html.js';
import { UpdateApiBody } from '../../../core/providers/providers.schemas.js';
import type { LifecycleOutcome } from '../../../core/providers/lifecycle.service.js';
import type { ProviderApiView } from '../../../core/providers/listing-views.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import { INJECTIONS } from '../../../db/entities/index.js';
import type { AppContext } from '../../context.js';
import { csrfToken, hidden, paramOf, readForm } from '../forms.js';
import {
  fieldMessage,
  fixable,
  type FormFields,
  type FormProblems,
  invalidAttrs,
  problemSummary,
} from '../form-errors.js';
import { pricingForm } from './provider-pricing-form.js';
import { removedEndpointsOf } from '../../../core/providers/endpoint-reads.js';
import { endpointsSection, IMPORT_FIELDS } from './provider-endpoint-table.js';
import { removalTiming, whenRemoved } from './provider-endpoint-remove.js';
import { endpointRows, openRevision, revisionSection, verificationBanner } from './provider-revision.js';
import { retireSection } from './provider-retire.js';
import { banner, consolePage, money } from './shell.js';
import { upstreamProblem } from '../../../core/upstream/upstream-problem.js';
import { options } from './provider-forms.js';
import { parseForm, seeOther, when } from './forms.js';
import { providerPage, requireProvider, statusBadge, type ProviderView } from './provider-common.js';

// ---- one API --------------------------------------------------------------------------------------------------

export interface ApiFormState {
  form: 'pricing' | 'credentials' | 'publish' | 'details' | 'revision' | 'import' | 'retire';
  /** A refusal: the summary and the messages beside the fields. */
  problems?: FormProblems;
  /** What was typed, shown again after a 400 (or a pricing preview). */
  typed?: Record<string, string>;
  /** A pricing preview: the typed prices in cents by endpoint id. */
  preview?: Record<string, number>;
  status?: number;
}

/** Each form's fields by its route's schema, as the person reads them (form-errors.ts). */
export const FORM_FIELDS: Record<ApiFormState['form'], FormFields> = {
  details: {
    name: { id: 'edit-name', label: 'Name' },
    summary: { id: 'edit-summary', label: 'Summary' },
    category: { id: 'edit-category', label: 'Category' },
    tags: { id: 'edit-tags', label: 'Tags' },
    base_url: { id: 'edit-base_url', label: 'Upstream base URL' },
    docs_url: { id: 'edit-docs_url', label: 'Documentation URL' },
  },
  credentials: { secret: 'Secret', injection: 'How the gateway sends it', injection_name: 'Header or parameter name' },
  pricing: {},
  publish: {},
  revision: {},
  import: IMPORT_FIELDS,
  retire: {},
};

function lifecycleForms(ctx: AppContext, api: ProviderApiView, state?: ApiFormState): string {
  const csrf = hidden('csrf', csrfToken(ctx));
  const base = `/console/provider/apis/${encodeURIComponent(api.api_id)}`;
  const verify = `<form method="post" action="${base}/verify" class="inline">${csrf}<button type="submit">Verify now</button></form>`;
  if (api.status === 'live') {
    return `<p>${verify} <form method="post" action="${base}/unpublish" class="inline">${csrf}<button type="submit">Unpublish</button></form></p>
<p>Live at <a href="/console/catalog/apis/${encodeURIComponent(api.slug)}">its catalog page</a>.</p>`;
  }
  return `<p>${verify}</p>
${state?.form === 'publish' ? problemSummary(state.problems) : ''}
<form method="post" action="${base}/publish">${csrf}
<p><input type="checkbox" id="accept_terms" name="accept_terms" value="yes" required${invalidAttrs(state?.form === 'publish' ? state.problems : undefined, 'accept_terms')}> <label for="accept_terms" class="inline-label">I accept the provider terms of this marketplace</label>${fieldMessage(state?.form === 'publish' ? state.problems : undefined, 'accept_terms')}</p>
<p><button type="submit">Publish</button></p></form>`;
}

function verificationTable(api: ProviderApiView): string {
  const result = api.verification.result;
  if (!result) return '<p class="muted">Not verified yet: “Verify now” calls the upstream like a consumer would.</p>';
  const rows = result.checks
    .map(
      (c) =>
        `<tr><td><code>${escapeHtml(c.method)} ${escapeHtml(c.path)}</code></td><td><code>${escapeHtml(c.target ?? '—')}</code></td><td class="num">${c.status ?? '—'}</td><td class="num">${c.latency_ms ?? '—'}</td><td>${c.ok ? '<span class="ok">ok</span>' : `<span class="error">${escapeHtml(c.error ?? 'failed')}</span>`}</td></tr>`,
    )
    .join('');
  return `<p>Smoke test ${result.passed ? '<strong class="ok">passed</strong>' : '<strong class="error">failed</strong>'} at ${escapeHtml(when(result.checked_at))}.</p>
<table><caption class="visually-hidden">Smoke test checks</caption><thead><tr><th scope="col">Endpoint</th><th scope="col">Called</th><th scope="col" class="num">HTTP status</th><th scope="col" class="num">Latency ms</th><th scope="col">Result</th></tr></thead><tbody>${rows}</tbody></table>`;
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
  const p = state?.form === 'details' ? state.problems : undefined;
  const v = (name: string, current: string | null) => escapeHtml(typed?.[name] ?? current ?? '');
  const bad = (id: string) => `${invalidAttrs(p, id)}`;
  return `${problemSummary(p)}
<form method="post" action="/console/provider/apis/${encodeURIComponent(api.api_id)}">${hidden('csrf', csrfToken(ctx))}
<label for="edit-name">Name</label><input id="edit-name" name="name" required maxlength="100" size="40" value="${v('name', api.name)}"${bad('edit-name')}>${fieldMessage(p, 'edit-name')}
<label for="edit-summary">Summary</label><input id="edit-summary" name="summary" required maxlength="300" size="60" value="${v('summary', api.summary)}"${bad('edit-summary')}>${fieldMessage(p, 'edit-summary')}
<label for="edit-category">Category</label><select id="edit-category" name="category"${bad('edit-category')}><option value="">None</option>${options(
    categories.map((c) => ({ value: c.slug, label: c.name })),
    typed?.category ?? api.category ?? '',
  )}</select>${fieldMessage(p, 'edit-category')}
<label for="edit-tags">Tags (comma-separated)</label><input id="edit-tags" name="tags" maxlength="900" size="60" value="${v('tags', api.tags.join(', '))}"${bad('edit-tags')}>${fieldMessage(p, 'edit-tags')}
<label for="edit-base_url">Upstream base URL (changing it needs a new verification)</label><input id="edit-base_url" name="base_url" required maxlength="2000" size="60" value="${v('base_url', api.base_url)}"${bad('edit-base_url')}>${fieldMessage(p, 'edit-base_url')}
<label for="edit-docs_url">Documentation URL (optional)</label><input id="edit-docs_url" name="docs_url" maxlength="2000" size="60" value="${v('docs_url', api.docs_url)}"${bad('edit-docs_url')}>${fieldMessage(p, 'edit-docs_url')}
<p><button type="submit">Save details</button></p></form>`;
}

/** The details form → UpdateApiBody (the upstream only when it changed: a new upstream is unverified). */
export function detailsInput(api: ProviderApiView, body: Record<string, string>): UpdateApiBody {
  const baseUrl = (body.base_url ?? '').trim();
  return parseForm(
    UpdateApiBody,
    {
      name: body.name ?? '',
      summary: body.summary ?? '',
      category: body.category ? body.category : null,
      tags: (body.tags ?? '')
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
      docs_url: body.docs_url?.trim() ? body.docs_url.trim() : null,
      ...(baseUrl !== api.base_url ? { base_url: baseUrl } : {}),
    },
    FORM_FIELDS.details,
  );
}

function credentialsForm(ctx: AppContext, api: ProviderApiView, state?: ApiFormState): string {
  const c = api.credential;
  const now = c.set
    ? `<p>A credential is set (${escapeHtml(c.injection ?? '')}${c.injection_name ? ` “${escapeHtml(c.injection_name)}”` : ''}, updated ${escapeHtml(when(c.updated_at))}). It is never shown; saving a new one replaces it.</p>`
    : '<p class="muted">No upstream credential: the gateway calls the upstream without one.</p>';
  const p = state?.form === 'credentials' ? state.problems : undefined;
  const typed = state?.form === 'credentials' ? state.typed : undefined;
  return `${now}${problemSummary(p)}
<form method="post" action="/console/provider/apis/${encodeURIComponent(api.api_id)}/credentials">${hidden('csrf', csrfToken(ctx))}
<label for="secret">Secret</label><input id="secret" name="secret" type="password" autocomplete="off" required maxlength="4096" size="40"${invalidAttrs(p, 'secret')}>${fieldMessage(p, 'secret')}
<label for="injection">How the gateway sends it</label><select id="injection" name="injection"${invalidAttrs(p, 'injection')}>${options(
    INJECTIONS.map((i) => ({
      value: i,
      label: {
        bearer: 'Authorization: Bearer',
        header: 'A header',
        query: 'A query parameter',
        basic: 'Basic auth (user:password)',
      }[i],
    })),
    typed?.injection ?? c.injection ?? 'bearer',
  )}</select>${fieldMessage(p, 'injection')}
<label for="injection_name">Header or parameter name (for header or query)</label><input id="injection_name" name="injection_name" maxlength="100" size="30" value="${escapeHtml(typed?.injection_name ?? c.injection_name ?? '')}"${invalidAttrs(p, 'injection_name')}>${fieldMessage(p, 'injection_name')}
<p><button type="submit">Save credential</button></p></form>`;
}

const section = (id: string, title: string, html: string) =>
  `<section aria-labelledby="${id}-h"><h2 id="${id}-h">${escapeHtml(title)}</h2>${html}</section>`;

/** The cards, the address-policy banner (issue 31), the summary and the URLs. */
async function headerHtml(services: Services, api: ProviderApiView, endpoints: number): Promise<string> {
  // The address policy refusing the upstream (issue 31): what consumers get, and how to fix it.
  const problem = api.status === 'archived' ? null : await upstreamProblem(services.guard, api.base_url);
  const source = api.import_source
    ? `<p class="muted">Imported from ${escapeHtml(api.import_source.url)} on ${escapeHtml(when(api.import_source.imported_at))}.</p>`
    : '';
  return `<p><a href="/console/provider">← My APIs</a> · <a href="/console/provider/apis/${encodeURIComponent(api.api_id)}">Refresh status</a></p>
<div class="cards">
<div class="card"><div class="muted">Status</div><div class="figure">${statusBadge(api.status)}</div><div class="muted">${api.status === 'archived' ? `archived ${escapeHtml(when(api.archived_at))}` : api.published_at ? `${api.status === 'live' ? 'since' : 'last published'} ${escapeHtml(when(api.published_at))}` : 'not published'}</div></div>
<div class="card"><div class="muted">Verification</div><div class="figure">${statusBadge(api.verification.status)}</div></div>
<div class="card"><div class="muted">Endpoints</div><div class="figure">${endpoints}</div></div>
</div>
${problem ? banner('bad', `<strong>${escapeHtml(problem.message)}</strong> ${escapeHtml(problem.hint)}`) : ''}
<p>${escapeHtml(api.summary)}</p>
<p class="muted">Slug <code>${escapeHtml(api.slug)}</code> · upstream <code>${escapeHtml(api.base_url)}</code> · gateway <code>${escapeHtml(api.gateway_url)}</code></p>
${source}`;
}

export const apiView: ProviderView<ApiFormState> = async (services, ctx, person, state) => {
  const api = await services.providers.get(person, paramOf(ctx, 'id'));
  const revision = await openRevision(services, person, api);
  const [docs, removed, timing] = await Promise.all([
    services.documents.list(person, { api_id: api.api_id }),
    removedEndpointsOf(services.orm, person.orgId, api.api_id),
    removalTiming(services, person, api.api_id),
  ]);
  const docList = docs.length
    ? `<ul>${docs.map((d) => `<li>${escapeHtml(d.title ?? d.kind)} (${escapeHtml(d.kind)}, version ${escapeHtml(d.version)}, ${statusBadge(d.status)})</li>`).join('')}</ul>`
    : '<p class="muted">No documents for this API (organization-wide documents still apply).</p>';
  const mine = (form: ApiFormState['form']) => (state?.form === form ? state : undefined);
  const rows = endpointRows(api, revision);
  const archived = api.status === 'archived';
  const sections = [
    archived
      ? ''
      : section('lifecycle', 'Verify and publish', `${lifecycleForms(ctx, api, state)}${verificationTable(api)}`),
    api.status === 'live'
      ? section(
          'revision',
          'Revision',
          revisionSection(ctx, api, revision, (id) => whenRemoved(timing, id), mine('revision')?.problems),
        )
      : '',
    section('endpoints', 'Endpoints', endpointsSection(ctx, api, rows, removed, mine('import'))),
    archived
      ? ''
      : section(
          'pricing',
          'Prices',
          pricingForm(ctx, api, services.config.billing.platformFeePercent, mine('pricing')),
        ),
    archived ? '' : section('scheduled', 'Scheduled changes', scheduledTable(ctx, api)),
    archived ? '' : section('details', 'Details', await detailsForm(services, ctx, api, state)),
    archived ? '' : section('credential', 'Upstream credential', credentialsForm(ctx, api, state)),
    section(
      'docs',
      'Documents',
      `${docList}<p><a href="/console/provider/documents">Add or activate documents</a></p>`,
    ),
    section('retire', 'Retire', `${problemSummary(mine('retire')?.problems)}${retireSection(ctx, api)}`),
  ];
  const view = providerPage(
    ctx,
    api.name,
    '',
    state ? (state.status ?? 400) : 200,
    `${await headerHtml(services, api, rows.length)}\n${sections.filter(Boolean).join('\n')}`,
  );
  return { ...view, banners: [...verificationBanner(ctx, api, revision), ...(view.banners ?? [])] };
};

/** Run a POST on one API; a 4xx re-renders the API's page with the message next to the form (400 keeps input). */
export function apiAction(
  services: Services,
  form: ApiFormState['form'],
  act: (
    ctx: AppContext,
    person: SessionPrincipal,
    apiId: string,
    body: Record<string, string>,
  ) => Promise<string | ApiFormState>,
) {
  return consolePage(services, 'provider', async (ctx, person) => {
    requireProvider(person);
    const body = await readForm(ctx);
    const apiId = paramOf(ctx, 'id');
    try {
      const outcome = await act(ctx, person, apiId, body);
      if (typeof outcome !== 'string') return await apiView(services, ctx, person, outcome);
      seeOther(ctx, `/console/provider/apis/${encodeURIComponent(apiId)}`, outcome);
    } catch (err) {
      const problems = fixable(err, FORM_FIELDS[form]);
      if (!problems) throw err;
      const { secret: _secret, ...typed } = body;
      return apiView(services, ctx, person, { form, problems, typed, status: (err as AppError).status }).catch(
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

/** verify / publish / unpublish outcome → the flash code (a failed verification: `verify-failed`). */
export function outcomeCode(outcome: LifecycleOutcome, done: string): string {
  if (!outcome.done) return 'running';
  // A verification that ran and failed is not good news: its banner is headed as failed (issue 31, section 4).
  const evidence = outcome.result.verification;
  return done === 'verified' && evidence && !evidence.passed ? 'verify-failed' : done;
}
