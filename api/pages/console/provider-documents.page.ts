/** Console · Provider · Documents: terms and other documents of the provider, drafted and activated. */
import { escapeHtml } from '../../../core/html.js';
import { CreateDocumentBody } from '../../../core/providers/providers.schemas.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import { DOCUMENT_KINDS } from '../../../db/entities/index.js';
import type { AppContext } from '../../context.js';
import { csrfToken, hidden, readForm } from '../forms.js';
import {
  fieldMessage,
  fixable,
  type FormFields,
  type FormProblems,
  invalidAttrs,
  problemSummary,
} from '../form-errors.js';
import { emptyState } from './shell.js';
import { options } from './provider-forms.js';
import { parseForm, seeOther } from './forms.js';
import { providerPage, requireProvider, statusBadge, type ProviderView } from './provider-common.js';

// ---- documents ------------------------------------------------------------------------------------------------

interface DocumentValues {
  kind?: string;
  version?: string;
  title?: string;
  api_id?: string;
  acceptance_mode?: string;
  body?: string;
}

/** The form's fields by the documents route's schema (form-errors.ts). */
const DOCUMENT_FIELDS: FormFields = {
  kind: 'Kind',
  version: 'Version',
  title: 'Title',
  api_id: 'Applies to',
  acceptance_mode: 'Acceptance',
  body: { id: 'doc-body', label: 'Text' },
};

export const documentsView: ProviderView<{ problems: FormProblems; values: DocumentValues }> = async (
  services,
  ctx,
  person,
  error,
) => {
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
  const p = error?.problems;
  const bad = (id: string) => invalidAttrs(p, id);
  return providerPage(
    ctx,
    'Documents',
    '/console/provider/documents',
    error ? 400 : 200,
    `<section aria-labelledby="docs-h"><h2 id="docs-h">My documents</h2>${list}</section>
<section aria-labelledby="add-doc-h"><h2 id="add-doc-h">Add a document</h2>${problemSummary(p)}
<form method="post" action="/console/provider/documents">${csrf}
<label for="kind">Kind</label><select id="kind" name="kind"${bad('kind')}>${options(
      DOCUMENT_KINDS.map((k) => ({ value: k, label: k.replace('_', ' ') })),
      v.kind ?? 'terms',
    )}</select>${fieldMessage(p, 'kind')}
<label for="version">Version</label><input id="version" name="version" required maxlength="50" size="12" value="${escapeHtml(v.version ?? '')}" placeholder="1.0"${bad('version')}>${fieldMessage(p, 'version')}
<label for="title">Title (optional)</label><input id="title" name="title" maxlength="200" size="40" value="${escapeHtml(v.title ?? '')}"${bad('title')}>${fieldMessage(p, 'title')}
<label for="api_id">Applies to</label><select id="api_id" name="api_id"${bad('api_id')}><option value="">All my APIs</option>${options(
      apis.items.map((a) => ({ value: a.api_id, label: a.name })),
      v.api_id,
    )}</select>${fieldMessage(p, 'api_id')}
<label for="acceptance_mode">Acceptance</label><select id="acceptance_mode" name="acceptance_mode"${bad('acceptance_mode')}>${options(
      [
        { value: 'optional', label: 'Optional (shown, not required)' },
        { value: 'required', label: 'Required before calling' },
      ],
      v.acceptance_mode ?? 'optional',
    )}</select>${fieldMessage(p, 'acceptance_mode')}
<label for="doc-body">Text (Markdown)</label><textarea id="doc-body" name="body" required rows="10" cols="70"${bad('doc-body')}>${escapeHtml(v.body ?? '')}</textarea>${fieldMessage(p, 'doc-body')}
<p><button type="submit">Save document</button></p></form></section>`,
  );
};

export async function createDocument(services: Services, ctx: AppContext, person: SessionPrincipal) {
  requireProvider(person);
  const form = await readForm(ctx);
  const values: DocumentValues = { ...form };
  try {
    const body = parseForm(
      CreateDocumentBody,
      {
        kind: form.kind ?? '',
        version: form.version ?? '',
        body: form.body ?? '',
        ...(form.title?.trim() ? { title: form.title } : {}),
        ...(form.api_id ? { api_id: form.api_id } : {}),
        ...(form.acceptance_mode ? { acceptance_mode: form.acceptance_mode } : {}),
      },
      DOCUMENT_FIELDS,
    );
    await services.documents.create(person, body);
    seeOther(ctx, '/console/provider/documents', 'document');
  } catch (err) {
    const problems = fixable(err, DOCUMENT_FIELDS);
    if (!problems) throw err;
    return documentsView(services, ctx, person, { problems, values });
  }
}
