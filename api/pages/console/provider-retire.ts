/**
 * Console · Provider · retiring an API (issue 31; docs/decisions.md): a live API is unpublished first; a draft can be
 * archived (its storefront page, its JSON URLs and the gateway answer 410 api_archived, it leaves search, its history,
 * usage, earnings and ledger rows stay, its slug stays reserved for the organization) and an archived one restored to
 * a draft; a draft that was never live can be deleted (its slug is free again). Archive and delete ask to confirm
 * first (GET shows the step; only a POST carrying `confirm=yes` acts, without JavaScript).
 */
import { escapeHtml } from '../../../core/html.js';
import type { ProviderApiView } from '../../../core/providers/listing-views.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext } from '../../context.js';
import { csrfToken, hidden, paramOf, readForm } from '../forms.js';
import { seeOther, when } from './forms.js';
import { providerPage, requireProvider } from './provider-common.js';
import { consolePage, type ConsoleView } from './shell.js';

const apiPath = (apiId: string) => `/console/provider/apis/${encodeURIComponent(apiId)}`;

/** What archiving does, in the words the confirmation and the section use. */
function archiveWords(api: ProviderApiView): string {
  return `Archiving retires ${api.name}: it leaves the catalog and search, and its storefront page, its JSON URLs (/v1/apis/${api.slug} and below) and the gateway answer 410 api_archived. Its history stays: calls, usage, earnings and ledger rows. The slug ${api.slug} stays reserved for your organization, and you can restore the API to a draft and publish it again.`;
}

const deleteWords = (api: ProviderApiView) =>
  `${api.name} was never live, so it can be deleted: its endpoints and its own documents go with it, and the slug ${api.slug} is free again. This cannot be undone.`;

/** The section at the bottom of an API's page. */
export function retireSection(ctx: AppContext, api: ProviderApiView): string {
  const base = apiPath(api.api_id);
  if (api.status === 'live') {
    return '<p>To retire this API, unpublish it first (“Unpublish” under Verify and publish): it becomes a draft and leaves the catalog. Then archive it here.</p>';
  }
  if (api.status === 'archived') {
    return `<p>Archived ${escapeHtml(when(api.archived_at))}. Its URLs answer 410 api_archived; its history stays, and the slug <code>${escapeHtml(api.slug)}</code> stays reserved for your organization.</p>
<form method="post" action="${base}/restore">${hidden('csrf', csrfToken(ctx))}<p><button type="submit">Restore to draft</button></p></form>`;
  }
  const remove = api.published_at
    ? '<p class="muted">It was live before, so it cannot be deleted (its calls and earnings point at it): archive it instead.</p>'
    : `<p><a class="button" href="${base}/delete">Delete…</a> <span class="muted">It was never live: deleting frees its slug.</span></p>`;
  return `<p>${escapeHtml(archiveWords(api))}</p>
<p><a class="button" href="${base}/archive">Archive…</a></p>${remove}`;
}

type Step = 'archive' | 'delete';

/** The confirmation page of archive or delete. */
async function confirmView(
  services: Services,
  ctx: AppContext,
  person: SessionPrincipal,
  step: Step,
): Promise<ConsoleView> {
  const api = await services.providers.get(person, paramOf(ctx, 'id'));
  const base = apiPath(api.api_id);
  const back = `<p><a href="${base}">← ${escapeHtml(api.name)}</a></p>`;
  const blocked =
    api.status === 'live'
      ? 'This API is live: unpublish it first, then archive it.'
      : step === 'archive' && api.status === 'archived'
        ? 'This API is already archived.'
        : step === 'delete' && (api.published_at || api.status !== 'draft')
          ? 'This API was live before, so it cannot be deleted: archive it instead.'
          : '';
  const title = `${step === 'archive' ? 'Archive' : 'Delete'} ${api.name}?`;
  if (blocked)
    return providerPage(ctx, title, '', 409, `${back}<p class="error" role="alert">${escapeHtml(blocked)}</p>`);
  return providerPage(
    ctx,
    title,
    '',
    200,
    `${back}<p>${escapeHtml(step === 'archive' ? archiveWords(api) : deleteWords(api))}</p>
<form method="post" action="${base}/${step}">${hidden('csrf', csrfToken(ctx))}${hidden('confirm', 'yes')}
<p><button type="submit">${step === 'archive' ? 'Archive' : 'Delete'} ${escapeHtml(api.name)}</button> <a href="${base}">Cancel</a></p></form>`,
  );
}

export function retireConfirmPage(services: Services, step: Step) {
  return consolePage(services, 'provider', async (ctx, person) => {
    requireProvider(person);
    return confirmView(services, ctx, person, step);
  });
}

/** POST archive or delete: with `confirm=yes` act (303), else show the confirmation. */
export function retire(services: Services, step: Step) {
  return consolePage(services, 'provider', async (ctx, person) => {
    requireProvider(person);
    const body = await readForm(ctx);
    if (body.confirm !== 'yes') return confirmView(services, ctx, person, step);
    const apiId = paramOf(ctx, 'id');
    if (step === 'archive') {
      await services.providerRetirement.archive(person, apiId);
      seeOther(ctx, apiPath(apiId), 'archived');
      return;
    }
    await services.providerRetirement.delete(person, apiId);
    seeOther(ctx, '/console/provider', 'deleted');
  });
}

/** "Restore to draft" (no confirmation: it changes nothing a caller sees until published). */
export async function restoreApi(services: Services, person: SessionPrincipal, apiId: string): Promise<string> {
  await services.providerRetirement.restore(person, apiId);
  return 'restored';
}
