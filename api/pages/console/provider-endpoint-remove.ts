/**
 * Console · Provider · removing an endpoint, with a confirmation step (issue 31): GET …/endpoints/{id}/remove says
 * what removing does here and when it takes effect, and only a POST carrying `confirm=yes` removes (a POST without it
 * shows the confirmation and changes nothing). A never-live draft's endpoint is deleted; an ever-live draft's is
 * removed at once; on a live API the removal is staged in the revision and, when it is published, takes effect at once
 * for an endpoint with no call in the last 30 days, else after the notice of a price increase (Deprecation and Sunset
 * headers until the date, then 410 endpoint_removed).
 */
import { escapeHtml } from '../../../core/html.js';
import { recentlyCalledOf } from '../../../core/providers/endpoint-reads.js';
import type { ProviderApiView } from '../../../core/providers/listing-views.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext } from '../../context.js';
import { csrfToken, hidden, paramOf, readForm } from '../forms.js';
import { seeOther, when } from './forms.js';
import { providerPage, requireProvider } from './provider-common.js';
import { endpointRows, openRevision, type EndpointRow } from './provider-revision.js';
import { consolePage, type ConsoleView } from './shell.js';
import { NotFoundError } from '../../../core/errors.js';

/** What decides when a live API's removal takes effect: the endpoints called lately, the notice, now. */
export interface RemovalTiming {
  called: ReadonlySet<string>;
  noticeMs: number;
  now: Date;
}

export async function removalTiming(services: Services, person: SessionPrincipal, apiId: string) {
  const now = services.clock.now();
  const called = await recentlyCalledOf(services.orm, person.orgId, apiId, now);
  return { called, noticeMs: services.config.providers.priceIncreaseNoticeMs, now } satisfies RemovalTiming;
}

/** `7 days`, `12 hours`, `8 seconds`: a notice period in words. */
export function duration(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1_000, 'second'],
  ];
  const [size, unit] = units.find(([u]) => ms >= u && ms % u === 0) ??
    units.find(([u]) => ms >= u) ?? [1_000, 'second'];
  const n = Math.round(ms / size);
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** When a live API's staged removal of `endpointId` takes effect once the revision is published (now, say). */
export function whenRemoved(t: RemovalTiming, endpointId: string): string {
  if (t.noticeMs <= 0 || !t.called.has(endpointId)) {
    return 'it takes effect at once when the revision is published (no call in the last 30 days): its calls then answer 410 endpoint_removed';
  }
  const date = when(new Date(t.now.getTime() + t.noticeMs).toISOString());
  return (
    `it had calls in the last 30 days, so callers get ${duration(t.noticeMs)} of notice: published now, its answers ` +
    `carry Deprecation and Sunset headers until ${date}, then 410 endpoint_removed`
  );
}

function effect(api: ProviderApiView, e: EndpointRow, t: RemovalTiming): string {
  if (e.state === 'added')
    return 'It was added in the open revision and never went live: it is dropped from the revision.';
  if (api.status === 'live') {
    return `This API is live, so the removal is staged in its revision: nothing changes for callers until you publish the revision. Then ${whenRemoved(t, e.endpoint_id)}.`;
  }
  return api.published_at
    ? 'This draft was live before: the endpoint is removed at once, and when the API is live again its calls answer 410 endpoint_removed.'
    : 'This draft was never live: the endpoint is deleted.';
}

/** The confirmation page. */
async function confirmView(services: Services, ctx: AppContext, person: SessionPrincipal): Promise<ConsoleView> {
  const apiId = paramOf(ctx, 'id');
  const endpointId = paramOf(ctx, 'endpoint_id');
  const api = await services.providers.get(person, apiId);
  const revision = await openRevision(services, person, api);
  const e = endpointRows(api, revision).find((r) => r.endpoint_id === endpointId);
  if (!e || e.state === 'removing' || e.state === 'sunset' || api.status === 'archived') {
    throw new NotFoundError(
      `No endpoint ${endpointId} to remove on this API (it is removed, or its removal is staged).`,
    );
  }
  const timing = await removalTiming(services, person, apiId);
  const base = `/console/provider/apis/${encodeURIComponent(apiId)}`;
  const what = `${e.method} ${e.path}`;
  return providerPage(
    ctx,
    `Remove ${what}?`,
    '',
    200,
    `<p><a href="${base}">← ${escapeHtml(api.name)}</a></p>
<p>${escapeHtml(effect(api, e, timing))}</p>
<form method="post" action="${base}/endpoints/${encodeURIComponent(endpointId)}/remove">${hidden('csrf', csrfToken(ctx))}${hidden('confirm', 'yes')}
<p><button type="submit">Remove ${escapeHtml(what)}</button> <a href="${base}">Cancel</a></p></form>`,
  );
}

export function removeConfirmPage(services: Services) {
  return consolePage(services, 'provider', async (ctx, person) => {
    requireProvider(person);
    return confirmView(services, ctx, person);
  });
}

/** POST: with `confirm=yes` remove (303 to the API's page), else show the confirmation. */
export function removeEndpoint(services: Services) {
  return consolePage(services, 'provider', async (ctx, person) => {
    requireProvider(person);
    const body = await readForm(ctx);
    if (body.confirm !== 'yes') return confirmView(services, ctx, person);
    const apiId = paramOf(ctx, 'id');
    const outcome = await services.providerEndpoints.remove(person, apiId, paramOf(ctx, 'endpoint_id'));
    const code = outcome.staged
      ? outcome.removed.length
        ? 'removal-staged'
        : 'addition-dropped'
      : outcome.removed[0]?.effect === 'scheduled'
        ? 'removal-scheduled'
        : 'endpoint-removed';
    seeOther(ctx, `/console/provider/apis/${encodeURIComponent(apiId)}`, code);
  });
}
