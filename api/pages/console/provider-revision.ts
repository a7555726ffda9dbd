/**
 * Console · Provider · a live API's revision (issue 31; docs/decisions.md "Providers change, version and retire their
 * listings"): the endpoints as they will be once the open revision is published (added, changed, removed), the
 * revision's box with "Publish revision" (verifyAndPublishWorkflow, `publish_revision`) and "Discard revision", and
 * the banner of a finished smoke test: a failed one is headed "Verification failed" and names the host:port it tried
 * (the stored evidence's verdict, the message LifecycleView gives), never shown as good news.
 */
import { AppError } from '../../../core/errors.js';
import { escapeHtml } from '../../../core/html.js';
import type { ProviderApiView } from '../../../core/providers/listing-views.js';
import { PublishBody } from '../../../core/providers/providers.schemas.js';
import type { RevisionView } from '../../../core/providers/revision-views.js';
import { verificationMessage } from '../../../core/providers/smoke-test.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext } from '../../context.js';
import { fieldError, fieldMessage, type FormProblems, invalidAttrs, problemSummary } from '../form-errors.js';
import { csrfToken, hidden } from '../forms.js';
import { parseForm, when } from './forms.js';
import { banner } from './shell.js';

type Evidence = NonNullable<ProviderApiView['verification']['result']>;
type Schema = Record<string, unknown> | null;

/** One endpoint as it will be once the open revision is published, and what the revision does to it. */
export interface EndpointRow {
  endpoint_id: string;
  method: string;
  path: string;
  summary: string | null;
  input_schema: Schema;
  output_schema: Schema;
  price_cents: number;
  /** live: as it is; added/changed/removing: staged in the revision; sunset: its removal is announced. */
  state: 'live' | 'added' | 'changed' | 'removing' | 'sunset';
  sunset_at: string | null;
}

/** The API's endpoints with the open revision laid over them (a draft has none: its endpoints are as they are). */
export function endpointRows(api: ProviderApiView, revision: RevisionView | null): EndpointRow[] {
  const updates = new Map((revision?.update ?? []).map((u) => [u.endpoint_id, u]));
  const removes = new Set((revision?.remove ?? []).map((r) => r.endpoint_id));
  const rows: EndpointRow[] = api.endpoints.map((e) => {
    const u = updates.get(e.endpoint_id);
    const pick = <K extends 'summary' | 'input_schema' | 'output_schema'>(k: K) =>
      u && u[k] !== undefined ? (u[k] as EndpointRow[K]) : (e[k] as EndpointRow[K]);
    const state = e.removal ? 'sunset' : removes.has(e.endpoint_id) ? 'removing' : u ? 'changed' : 'live';
    return {
      endpoint_id: e.endpoint_id,
      method: e.method,
      path: e.path,
      summary: pick('summary'),
      input_schema: pick('input_schema'),
      output_schema: pick('output_schema'),
      price_cents: e.price_cents,
      state,
      sunset_at: e.removal?.sunset_at ?? null,
    };
  });
  for (const a of revision?.add ?? []) {
    const { endpoint_id, method, path, summary, input_schema, output_schema, price_cents } = a;
    rows.push({
      endpoint_id,
      method,
      path,
      summary,
      input_schema,
      output_schema,
      price_cents,
      state: 'added',
      sunset_at: null,
    });
  }
  return rows;
}

/** The open revision of a live API (null for a draft or without one). */
export async function openRevision(
  services: Services,
  person: SessionPrincipal,
  api: ProviderApiView,
): Promise<RevisionView | null> {
  if (api.status !== 'live' || !api.open_revision) return null;
  return services.providerEndpoints.revision(person, api.api_id);
}

/** The verdict's words, "Verification failed" / "Verification passed" in bold as its heading. */
function verdictHtml(evidence: Evidence): string {
  const message = verificationMessage(evidence);
  const head = /^Verification (failed|passed)/.exec(message)?.[0] ?? '';
  return `<strong>${escapeHtml(head)}</strong>${escapeHtml(message.slice(head.length))}`;
}

const FAILED_CODES: Record<string, string> = {
  'verify-failed': '',
  'publish-failed': ' The API was not published: fix the endpoint or the upstream, then verify and publish again.',
  'revision-failed':
    ' The revision was not published and stays open: fix its endpoints (or the upstream), then publish it again.',
};

/**
 * The banner of `?done=verify-failed|publish-failed|revision-failed`: the stored evidence's verdict, headed
 * "Verification failed", naming host:port and the failing call.
 */
export function verificationBanner(ctx: AppContext, api: ProviderApiView, revision: RevisionView | null): string[] {
  const code = typeof ctx.query.done === 'string' ? ctx.query.done : '';
  if (!Object.hasOwn(FAILED_CODES, code)) return [];
  const evidence = code === 'revision-failed' ? revision?.verification : api.verification.result;
  const verdict = evidence
    ? verdictHtml(evidence)
    : '<strong>Verification failed</strong>: there was no endpoint to check.';
  return [banner('bad', `<p>${verdict}${escapeHtml(FAILED_CODES[code]!)}</p>`)];
}

function changeList(title: string, items: string[]): string {
  return items.length ? `<h3>${escapeHtml(title)}</h3><ul>${items.join('')}</ul>` : '';
}

const head = (e: { method: string; path: string }) => `<code>${escapeHtml(`${e.method} ${e.path}`)}</code>`;

function changedWhat(u: RevisionView['update'][number]): string {
  const parts = [
    u.summary !== undefined ? 'summary' : '',
    u.input_schema !== undefined ? 'input schema' : '',
    u.output_schema !== undefined ? 'output schema' : '',
  ].filter(Boolean);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/** The revision's forms: publish (with the provider terms, as every publish) and discard. */
function revisionForms(ctx: AppContext, apiId: string, problems?: FormProblems): string {
  const csrf = hidden('csrf', csrfToken(ctx));
  const base = `/console/provider/apis/${encodeURIComponent(apiId)}/revision`;
  return `${problemSummary(problems)}
<form method="post" action="${base}/publish">${csrf}
<p><input type="checkbox" id="revision_accept_terms" name="accept_terms" value="yes" required${invalidAttrs(problems, 'revision_accept_terms')}> <label for="revision_accept_terms" class="inline-label">I accept the provider terms of this marketplace</label>${fieldMessage(problems, 'revision_accept_terms')}</p>
<p><button type="submit">Publish revision</button></p></form>
<form method="post" action="${base}/discard">${csrf}<p><button type="submit">Discard revision</button> <span class="muted">Nothing it staged is applied.</span></p></form>`;
}

/** The revision box of a live API: what it adds, changes and removes, its last smoke test, publish and discard. */
export function revisionSection(
  ctx: AppContext,
  api: ProviderApiView,
  revision: RevisionView | null,
  removalNote: (endpointId: string) => string,
  problems?: FormProblems,
): string {
  if (api.status !== 'live') return '';
  const intro =
    '<p class="muted">This API is live: endpoint changes are staged in a revision and reach callers only when you publish it (its new and changed endpoints are smoke-tested first).</p>';
  if (!revision) return `${intro}<p>No open revision: every endpoint is as callers see it.</p>`;
  const added = revision.add.map((a) => `<li>${head(a)}${a.summary ? ` ${escapeHtml(a.summary)}` : ''}</li>`);
  const changed = revision.update.map((u) => `<li>${head(u)}${changedWhat(u)}</li>`);
  const removed = revision.remove.map((r) => `<li>${head(r)}: ${escapeHtml(removalNote(r.endpoint_id))}</li>`);
  const last =
    revision.verification && !revision.verification.passed
      ? `<p class="error">Last attempt: ${verdictHtml(revision.verification)}</p>`
      : '';
  return `${intro}<p>Revision ${revision.number}, opened ${escapeHtml(when(revision.created_at))}, last changed ${escapeHtml(when(revision.updated_at))}.</p>
${changeList('Added', added)}${changeList('Changed', changed)}${changeList('Removed', removed)}${last}
${revisionForms(ctx, api.api_id, problems)}`;
}

/** "Publish revision": the workflow's outcome as a flash code (a failed smoke test: the revision stays open). */
export async function publishRevision(
  services: Services,
  person: SessionPrincipal,
  apiId: string,
  body: Record<string, string>,
): Promise<string> {
  if (body.accept_terms !== 'yes') {
    throw fieldError('revision_accept_terms', '', 'tick “I accept the provider terms” to publish the revision');
  }
  try {
    const outcome = await services.providerLifecycle.publish(
      person,
      apiId,
      parseForm(PublishBody, { accept_terms: true }),
    );
    if (!outcome.done) return 'running';
    return outcome.result.action === 'publish_revision' ? 'revision-published' : 'no-revision';
  } catch (err) {
    if (err instanceof AppError && err.code === 'verification_failed') return 'revision-failed';
    throw err;
  }
}

/** "Discard revision". */
export async function discardRevision(services: Services, person: SessionPrincipal, apiId: string): Promise<string> {
  await services.providerEndpoints.discardRevision(person, apiId);
  return 'revision-discarded';
}
