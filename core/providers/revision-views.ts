/** What a provider sees of endpoint changes: a staged endpoint, a revision, the answer of a change. */
import type { IApiRevision, IEndpoint, StagedEndpoint } from '../../db/entities/index.js';
import { endpointView, type EndpointView } from '../pricing/endpoint-view.js';
import type { EndpointChangesView, RevisionView } from './endpoint-changes.schemas.js';
import { projectUpdate } from './endpoint-plan.js';
import { iso } from './listing-views.js';

export type { EndpointChangesView, RevisionView } from './endpoint-changes.schemas.js';

/** An endpoint a revision adds, as it will be listed (its price applies as is: nobody has called it yet). */
export function stagedView(a: StagedEndpoint): EndpointView {
  return {
    endpoint_id: a.endpoint_id,
    method: a.method,
    path: a.path,
    summary: a.summary,
    operation_id: a.operation_id,
    price_cents: a.price_cents,
    price_cents_effective: a.price_cents,
    price_increase: null,
    discount: null,
    input_schema: a.input_schema,
    output_schema: a.output_schema,
    removal: null,
  };
}

/** An existing endpoint with a revision's change laid over it. */
export function projectedView(e: IEndpoint, revision: IApiRevision | null, now: Date): EndpointView {
  const update = revision?.changes.update.find((u) => u.endpoint_id === e.id);
  const { summary, operation_id, input_schema, output_schema } = projectUpdate(e, update);
  return { ...endpointView(e, now), summary, operation_id, input_schema, output_schema };
}

export function publishHint(apiId: string): string {
  return (
    `Publish it with POST /v1/provider/apis/${apiId}/publish (accept_terms: true): its new and changed endpoints ` +
    `are smoke-tested, then it applies at once. Discard it with DELETE /v1/provider/apis/${apiId}/revision.`
  );
}

export function revisionView(rev: IApiRevision, current: IEndpoint[]): RevisionView {
  const byId = new Map(current.map((e) => [e.id, e]));
  const head = (id: string) => {
    const e = byId.get(id);
    return { endpoint_id: id, method: e?.method ?? 'GET', path: e?.path ?? '' };
  };
  return {
    revision_id: rev.id,
    api_id: rev.api.id,
    number: rev.number,
    status: rev.status,
    add: rev.changes.add.map(stagedView),
    update: rev.changes.update.map(({ endpoint_id, ...fields }) => ({ ...head(endpoint_id), ...fields })),
    remove: rev.changes.remove.map(head),
    verification: rev.verification ?? null,
    created_at: rev.createdAt.toISOString(),
    updated_at: rev.updatedAt.toISOString(),
    published_at: iso(rev.publishedAt),
    publish_hint: rev.status === 'open' ? publishHint(rev.api.id) : `Revision ${rev.number} is ${rev.status}.`,
  };
}

/** A one-line account of a change, for people and agents. */
export function changeMessage(view: Omit<EndpointChangesView, 'message'>): string {
  const parts = [
    view.added.length ? `${view.added.length} added` : '',
    view.updated.length ? `${view.updated.length} changed` : '',
    view.removed.length ? `${view.removed.length} removed` : '',
  ].filter(Boolean);
  const what = parts.length ? parts.join(', ') : 'nothing changed';
  if (!view.staged) {
    const sunset = view.removed.find((r) => r.effect === 'scheduled')?.sunset_at;
    return `Endpoints: ${what}.${sunset ? ` Removals take effect at ${sunset} (calls carry Deprecation and Sunset headers until then).` : ''}`;
  }
  const number = view.revision?.number ?? 0;
  if (!parts.length) {
    return view.revision
      ? `Nothing changed. Revision ${number} holds the staged changes. ${publishHint(view.api_id)}`
      : 'Nothing changed; the API has no open revision.';
  }
  return `The API is live, so this is staged in revision ${number} (${what}); nothing changes for callers until it is published. ${publishHint(view.api_id)}`;
}
