/**
 * Console · Provider · the routes of an API's changes after creation (issue 31): the endpoint editor (add, edit,
 * remove with a confirmation), the re-import from OpenAPI, a live API's revision (publish, discard) and retirement
 * (archive and delete with a confirmation, restore). Every form carries the CSRF token and answers 303 when it acts.
 */
import type Router from '@koa/router';
import type { Services } from '../../../platform/services.js';
import type { AppState } from '../../context.js';
import { paramOf } from '../forms.js';
import { apiAction } from './provider-api.page.js';
import { requireProvider } from './provider-common.js';
import { editorView, saveEndpoint } from './provider-endpoint-editor.js';
import { removeConfirmPage, removeEndpoint } from './provider-endpoint-remove.js';
import { reimportEndpoints } from './provider-endpoint-table.js';
import { discardRevision, publishRevision } from './provider-revision.js';
import { restoreApi, retire, retireConfirmPage } from './provider-retire.js';
import { consolePage } from './shell.js';

const API = '/console/provider/apis/:id';

/** The endpoint editor: `/endpoints/new` before `/endpoints/:endpoint_id`, which would match it too. */
function endpointRoutes(services: Services, router: Router<AppState>): void {
  const editor = (isNew: boolean) =>
    consolePage(services, 'provider', async (ctx, person) => {
      requireProvider(person);
      return editorView(services, ctx, person, isNew ? null : paramOf(ctx, 'endpoint_id'));
    });
  router.get(`${API}/endpoints/new`, editor(true));
  router.post(`${API}/endpoints`, saveEndpoint(services, true));
  router.get(`${API}/endpoints/:endpoint_id`, editor(false));
  router.post(`${API}/endpoints/:endpoint_id`, saveEndpoint(services, false));
  router.get(`${API}/endpoints/:endpoint_id/remove`, removeConfirmPage(services));
  router.post(`${API}/endpoints/:endpoint_id/remove`, removeEndpoint(services));
  router.post(
    `${API}/import`,
    apiAction(services, 'import', (_ctx, person, apiId, body) => reimportEndpoints(services, person, apiId, body)),
  );
}

/** A live API's revision, and retiring an API. */
function revisionAndRetireRoutes(services: Services, router: Router<AppState>): void {
  router.post(
    `${API}/revision/publish`,
    apiAction(services, 'revision', (_ctx, person, apiId, body) => publishRevision(services, person, apiId, body)),
  );
  router.post(
    `${API}/revision/discard`,
    apiAction(services, 'revision', (_ctx, person, apiId) => discardRevision(services, person, apiId)),
  );
  for (const step of ['archive', 'delete'] as const) {
    router.get(`${API}/${step}`, retireConfirmPage(services, step));
    router.post(`${API}/${step}`, retire(services, step));
  }
  router.post(
    `${API}/restore`,
    apiAction(services, 'retire', (_ctx, person, apiId) => restoreApi(services, person, apiId)),
  );
}

export function providerChangeRoutes(services: Services, router: Router<AppState>): void {
  endpointRoutes(services, router);
  revisionAndRetireRoutes(services, router);
}
