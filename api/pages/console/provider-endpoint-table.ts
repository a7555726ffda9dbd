/**
 * Console · Provider · one API's endpoints section (issue 31): each endpoint as it will be (a live API's open revision
 * laid over it: added, changed, removal staged), its parameters at a glance, an announced removal (Deprecation and
 * Sunset until the date, 410 after), links to edit or remove it, "Add an endpoint", the removed endpoints (410
 * endpoint_removed since …) and the re-import from an OpenAPI URL (with the keep-missing choice).
 */
import { escapeHtml } from '../../../core/html.js';
import type { RemovedEndpointRow } from '../../../core/providers/endpoint-reads.js';
import { ImportEndpointsBody } from '../../../core/providers/endpoint-changes.schemas.js';
import type { ProviderApiView } from '../../../core/providers/listing-views.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext } from '../../context.js';
import { fieldMessage, type FormFields, type FormProblems, invalidAttrs, problemSummary } from '../form-errors.js';
import { csrfToken, hidden } from '../forms.js';
import { parseForm, when } from './forms.js';
import type { EndpointRow } from './provider-revision.js';
import { emptyState, money } from './shell.js';

/** The re-import form's fields (form-errors.ts). */
export const IMPORT_FIELDS: FormFields = {
  url: { id: 'import-url', label: 'OpenAPI document URL' },
  keep_missing: { id: 'import-keep', label: 'Keep missing endpoints' },
};

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/** `path: city · query: units, days · body: text`, or what else the schema is. */
export function paramsSummary(schema: Json | null): string {
  if (!schema) return 'none';
  const groups = isRecord(schema.properties) ? schema.properties : {};
  const parts = ['path', 'query', 'header', 'body'].flatMap((place) => {
    const g = groups[place];
    if (!isRecord(g)) return [];
    const names = isRecord(g.properties) ? Object.keys(g.properties) : [];
    return [`${place}: ${names.length ? names.join(', ') : typeof g.type === 'string' ? g.type : 'a schema'}`];
  });
  return parts.length ? parts.join(' · ') : 'a JSON Schema (edit to see it)';
}

const STATE_WORDS: Record<EndpointRow['state'], string> = {
  live: '',
  added: 'New in the revision',
  changed: 'Changed in the revision',
  removing: 'Removal staged in the revision',
  sunset: '',
};

function stateCell(api: ProviderApiView, e: EndpointRow): string {
  if (e.state === 'sunset') {
    return `<strong>Deprecated</strong>: removal announced; calls carry <code>Deprecation</code> and <code>Sunset</code> headers until ${escapeHtml(when(e.sunset_at))}, then answer 410 endpoint_removed.`;
  }
  if (e.state !== 'live') return escapeHtml(STATE_WORDS[e.state]);
  return api.status === 'live' ? 'Live' : escapeHtml(api.status === 'archived' ? 'Archived' : 'Draft');
}

function actionsCell(api: ProviderApiView, e: EndpointRow): string {
  if (api.status === 'archived' || e.state === 'sunset' || e.state === 'removing') return '—';
  const base = `/console/provider/apis/${encodeURIComponent(api.api_id)}/endpoints/${encodeURIComponent(e.endpoint_id)}`;
  const what = escapeHtml(`${e.method} ${e.path}`);
  // The endpoint in hidden text, not aria-label: a link's name is its text, and inputs keep their labels to themselves.
  const named = (verb: string) => `${verb}<span class="visually-hidden"> ${what}</span>`;
  return `<a href="${base}">${named('Edit')}</a> · <a href="${base}/remove">${named('Remove')}</a>`;
}

function endpointTable(api: ProviderApiView, rows: EndpointRow[]): string {
  if (!rows.length) return emptyState('<p>This API has no endpoints yet: add one below.</p>');
  const body = rows
    .map(
      (e) =>
        `<tr><td><code>${escapeHtml(e.method)}</code></td><td><code>${escapeHtml(e.path)}</code>${e.summary ? `<br><span class="muted">${escapeHtml(e.summary)}</span>` : ''}</td>
<td>${escapeHtml(paramsSummary(e.input_schema))}</td><td class="num">${money(e.price_cents)}</td><td>${stateCell(api, e)}</td><td>${actionsCell(api, e)}</td></tr>`,
    )
    .join('');
  return `<table><caption class="visually-hidden">Endpoints</caption><thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Parameters</th><th scope="col" class="num">Price</th><th scope="col">State</th><th scope="col">Actions</th></tr></thead><tbody>${body}</tbody></table>`;
}

function removedTable(removed: RemovedEndpointRow[]): string {
  if (!removed.length) return '';
  const rows = removed
    .map(
      (r) =>
        `<tr><td><code>${escapeHtml(r.method)}</code></td><td><code>${escapeHtml(r.path)}</code></td><td>410 endpoint_removed since ${escapeHtml(when(r.removed_at))}</td></tr>`,
    )
    .join('');
  return `<h3 id="removed-h">Removed endpoints</h3><table aria-labelledby="removed-h"><thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Calls now answer</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function importForm(ctx: AppContext, api: ProviderApiView, typed?: Record<string, string>, p?: FormProblems): string {
  const url = typed?.url ?? api.import_source?.url ?? '';
  const keep = typed ? typed.keep_missing === 'yes' : false;
  return `<h3 id="import-h">Re-import from OpenAPI</h3>${problemSummary(p)}
<form method="post" action="/console/provider/apis/${encodeURIComponent(api.api_id)}/import" aria-labelledby="import-h">${hidden('csrf', csrfToken(ctx))}
<label for="import-url">OpenAPI document URL</label><input id="import-url" name="url" required maxlength="2000" size="60" value="${escapeHtml(url)}" placeholder="https://api.example.com/openapi.json"${invalidAttrs(p, 'import-url', 'import-help')}>${fieldMessage(p, 'import-url')}
<p><input type="checkbox" id="import-keep" name="keep_missing" value="yes"${keep ? ' checked' : ''}> <label for="import-keep" class="inline-label">Keep the endpoints the document no longer has</label></p>
<p id="import-help" class="muted">Operations match endpoints by method and path: a match keeps its id and price and takes the document's summary and schemas; a new operation is added free; an endpoint the document no longer has is removed unless you keep it.${api.status === 'live' ? ' This API is live, so the re-import is staged in its revision.' : ''}</p>
<p><button type="submit">Re-import endpoints</button></p></form>`;
}

/** The endpoints section: the table, "Add an endpoint", the removed ones, the re-import. */
export function endpointsSection(
  ctx: AppContext,
  api: ProviderApiView,
  rows: EndpointRow[],
  removed: RemovedEndpointRow[],
  state?: { typed?: Record<string, string>; problems?: FormProblems },
): string {
  const editable = api.status !== 'archived';
  const add = editable
    ? `<p><a class="button" href="/console/provider/apis/${encodeURIComponent(api.api_id)}/endpoints/new">Add an endpoint</a></p>`
    : '';
  return `${endpointTable(api, rows)}${add}${removedTable(removed)}${editable ? importForm(ctx, api, state?.typed, state?.problems) : ''}`;
}

/** "Re-import endpoints": the flash code (a live API's re-import is staged). */
export async function reimportEndpoints(
  services: Services,
  person: SessionPrincipal,
  apiId: string,
  body: Record<string, string>,
): Promise<string> {
  const input = parseForm(
    ImportEndpointsBody,
    { url: body.url ?? '', keep_missing: body.keep_missing === 'yes' },
    IMPORT_FIELDS,
  );
  const outcome = await services.providerEndpoints.reimport(person, apiId, input);
  return outcome.staged ? 'reimport-staged' : 'reimported';
}
