/**
 * Console · Provider: my APIs with their status, the create/import form, one API's page (credential, pricing
 * editor with scheduled increases, verify / publish / unpublish, the smoke test's evidence, the endpoint editor, a
 * live API's revision, archive / restore / delete: provider-change-routes.ts), documents, analytics
 * (GMV, calls, fees and payouts per day), Connect onboarding, and the open requests for missing APIs.
 * Every action calls the service the provider REST routes call, as the signed-in person (same scope and ownership
 * checks); verify and publish run the Temporal workflow with its bounded wait, and a run that outlasts it shows as
 * running until the person refreshes the page. Forms post back with a CSRF token and answer 303 (Post/Redirect/Get);
 * bad input re-renders the form with the message and what was typed (400).
 */
import type Router from '@koa/router';
import { AppError } from '../../../core/errors.js';
import { CredentialsBody, PublishBody } from '../../../core/providers/providers.schemas.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext, AppState } from '../../context.js';
import { paramOf, readForm } from '../forms.js';
import { fieldError } from '../form-errors.js';
import { consolePage, type ConsoleView } from './shell.js';
import { parseForm, seeOther } from './forms.js';
import { apisView, createApi, startConnect } from './provider-apis.page.js';
import { apiView, apiAction, detailsInput, FORM_FIELDS, outcomeCode } from './provider-api.page.js';
import { previewPrices, savePrices } from './provider-pricing-form.js';
import { documentsView, createDocument } from './provider-documents.page.js';
import { analyticsView, requestsView } from './provider-analytics.page.js';
import { gate, requireProvider } from './provider-common.js';
import { providerChangeRoutes } from './provider-change-routes.js';

type Page = (
  fn: (ctx: AppContext, person: SessionPrincipal) => Promise<ConsoleView | void>,
) => ReturnType<typeof consolePage>;

type View = (services: Services, ctx: AppContext, person: SessionPrincipal) => Promise<ConsoleView | void>;

/** The pages: my APIs, one API, documents, analytics, the open requests for missing APIs. */
const SHOWN: [string, View][] = [
  ['/console/provider', apisView],
  ['/console/provider/apis/:id', apiView],
  ['/console/provider/documents', documentsView],
  ['/console/provider/analytics', analyticsView],
  ['/console/provider/requests', requestsView],
];
/** Forms whose handler checks provider:write, then redirects or renders: create an API, Connect, a document. */
const POSTED: [string, View][] = [
  ['/console/provider/apis', createApi],
  ['/console/provider/connect', startConnect],
  ['/console/provider/documents', createDocument],
];

/** A page is shown behind the provider gate: a person without provider:write gets its explanation instead. */
function viewRoutes(services: Services, router: Router<AppState>, page: Page): void {
  for (const [path, view] of SHOWN)
    router.get(
      path,
      page(async (ctx, person) => gate(person) ?? view(services, ctx, person)),
    );
  for (const [path, view] of POSTED)
    router.post(
      path,
      page((ctx, person) => view(services, ctx, person)),
    );
}

/** One API's page and its edits: details, credential, prices, cancelling a scheduled price. */
function apiEditRoutes(services: Services, router: Router<AppState>): void {
  const { providers } = services;
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
      const input = parseForm(
        CredentialsBody,
        {
          secret: body.secret ?? '',
          injection: body.injection || 'bearer',
          ...(body.injection_name?.trim() ? { injection_name: body.injection_name } : {}),
        },
        FORM_FIELDS.credentials,
      );
      await services.providerCredentials.setCredentials(person, apiId, input);
      return 'credentials';
    }),
  );
  router.post(
    '/console/provider/apis/:id/pricing',
    apiAction(services, 'pricing', (_ctx, person, apiId, body) =>
      body.intent === 'preview'
        ? previewPrices(services, person, apiId, body)
        : savePrices(services, person, apiId, body),
    ),
  );
  router.post(
    '/console/provider/apis/:id/endpoints/:endpoint_id/cancel-price',
    apiAction(services, 'pricing', async (ctx, person, apiId) => {
      await services.priceChanges.cancelPendingPrice(person, apiId, paramOf(ctx, 'endpoint_id'));
      return 'cancelled';
    }),
  );
}

/** One API's lifecycle: verify, publish (with the provider terms), unpublish. */
function apiLifecycleRoutes(services: Services, router: Router<AppState>): void {
  router.post(
    '/console/provider/apis/:id/verify',
    apiAction(services, 'publish', async (_ctx, person, apiId) =>
      outcomeCode(await services.providerLifecycle.verify(person, apiId), 'verified'),
    ),
  );
  router.post(
    '/console/provider/apis/:id/publish',
    apiAction(services, 'publish', async (_ctx, person, apiId, body) => {
      if (body.accept_terms !== 'yes') {
        throw fieldError('accept_terms', '', 'tick “I accept the provider terms” to publish');
      }
      try {
        return outcomeCode(
          await services.providerLifecycle.publish(person, apiId, parseForm(PublishBody, { accept_terms: true })),
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
      outcomeCode(await services.providerLifecycle.unpublish(person, apiId), 'unpublished'),
    ),
  );
}

/** Activating a document. */
function documentRoutes(services: Services, router: Router<AppState>, page: Page): void {
  router.post(
    '/console/provider/documents/:document_id/activate',
    page(async (ctx, person) => {
      requireProvider(person);
      await readForm(ctx);
      await services.documents.activate(person, paramOf(ctx, 'document_id'));
      seeOther(ctx, '/console/provider/documents', 'activated');
    }),
  );
}

// ---- routes ---------------------------------------------------------------------------------------------------

export function providerConsole(services: Services, router: Router<AppState>): void {
  const page: Page = (fn) => consolePage(services, 'provider', fn);
  viewRoutes(services, router, page);
  apiEditRoutes(services, router);
  apiLifecycleRoutes(services, router);
  providerChangeRoutes(services, router);
  documentRoutes(services, router, page);
}
