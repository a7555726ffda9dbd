/** The provider's own listings, documents, analytics and Connect onboarding. Every route needs provider:write. */
import Router from '@koa/router';
import { EmptyBody } from '../../core/accounts/accounts.schemas.js';
import { ok } from '../../core/envelope.js';
import { Pagination } from '../../core/pagination.js';
import {
  AcceptTermsBody,
  CreateApiBody,
  CreateDocumentBody,
  CredentialsBody,
  ListDocumentsQuery,
  PricingBody,
  PublishBody,
  UpdateApiBody,
} from '../../core/providers/providers.schemas.js';
import { lifecycleView, type LifecycleOutcome } from '../../core/providers/lifecycle.service.js';
import type { Services } from '../../platform/services.js';
import { AnalyticsQuery } from '../../core/providers/analytics.service.js';
import type { AppContext, AppState } from '../context.js';
import { auth, principalOf } from '../middleware/auth.js';
import { parseBody, parseQuery } from '../middleware/body.js';

export function providerRoutes(services: Services): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1/provider' });
  const need = auth(services, 'provider:write');
  const { providers, providerLifecycle, providerCredentials, priceChanges } = services;

  /** A lifecycle run that finished answers 200; one still running after the bounded wait answers 202. */
  const lifecycle = (ctx: AppContext, outcome: LifecycleOutcome, apiId: string) => {
    if (!outcome.done) ctx.status = 202;
    ctx.body = ok(lifecycleView(apiId, outcome), ctx.state.requestId);
  };

  router.get('/apis', need, async (ctx) => {
    const page = await providers.list(principalOf(ctx.state), parseQuery(ctx, Pagination.strict()));
    ctx.body = ok(page.items, ctx.state.requestId, { pagination: page.pagination });
  });

  router.post('/apis', need, async (ctx) => {
    const body = parseBody(ctx, CreateApiBody);
    ctx.status = 201;
    ctx.body = ok(await providers.create(principalOf(ctx.state), body), ctx.state.requestId);
  });

  router.get('/apis/:api_id', need, async (ctx) => {
    ctx.body = ok(await providers.get(principalOf(ctx.state), ctx.params.api_id!), ctx.state.requestId);
  });

  router.patch('/apis/:api_id', need, async (ctx) => {
    const body = parseBody(ctx, UpdateApiBody);
    ctx.body = ok(await providers.update(principalOf(ctx.state), ctx.params.api_id!, body), ctx.state.requestId);
  });

  router.put('/apis/:api_id/credentials', need, async (ctx) => {
    const body = parseBody(ctx, CredentialsBody);
    ctx.body = ok(
      await providerCredentials.setCredentials(principalOf(ctx.state), ctx.params.api_id!, body),
      ctx.state.requestId,
    );
  });

  router.post('/apis/:api_id/verify', need, async (ctx) => {
    parseBody(ctx, EmptyBody);
    lifecycle(ctx, await providerLifecycle.verify(principalOf(ctx.state), ctx.params.api_id!), ctx.params.api_id!);
  });

  router.post('/apis/:api_id/publish', need, async (ctx) => {
    const body = parseBody(ctx, PublishBody);
    lifecycle(
      ctx,
      await providerLifecycle.publish(principalOf(ctx.state), ctx.params.api_id!, body),
      ctx.params.api_id!,
    );
  });

  router.post('/apis/:api_id/unpublish', need, async (ctx) => {
    parseBody(ctx, EmptyBody);
    lifecycle(ctx, await providerLifecycle.unpublish(principalOf(ctx.state), ctx.params.api_id!), ctx.params.api_id!);
  });

  router.patch('/apis/:api_id/pricing', need, async (ctx) => {
    const body = parseBody(ctx, PricingBody);
    ctx.body = ok(
      await priceChanges.updatePricing(principalOf(ctx.state), ctx.params.api_id!, body),
      ctx.state.requestId,
    );
  });

  router.delete('/apis/:api_id/endpoints/:endpoint_id/pending-price', need, async (ctx) => {
    const view = await priceChanges.cancelPendingPrice(
      principalOf(ctx.state),
      ctx.params.api_id!,
      ctx.params.endpoint_id!,
    );
    ctx.body = ok(view, ctx.state.requestId);
  });

  router.post('/apis/:api_id/terms/accept', auth(services, { scope: 'provider:write', session: true }), async (ctx) => {
    const body = parseBody(ctx, AcceptTermsBody);
    const accepted = await services.documents.acceptForOwnApi(principalOf(ctx.state), ctx.params.api_id!, body);
    ctx.body = ok(accepted, ctx.state.requestId);
  });

  router.get('/documents', need, async (ctx) => {
    const query = parseQuery(ctx, ListDocumentsQuery);
    ctx.body = ok(await services.documents.list(principalOf(ctx.state), query), ctx.state.requestId);
  });

  router.post('/documents', need, async (ctx) => {
    const body = parseBody(ctx, CreateDocumentBody);
    ctx.status = 201;
    ctx.body = ok(await services.documents.create(principalOf(ctx.state), body), ctx.state.requestId);
  });

  router.post('/documents/:document_id/activate', need, async (ctx) => {
    parseBody(ctx, EmptyBody);
    ctx.body = ok(
      await services.documents.activate(principalOf(ctx.state), ctx.params.document_id!),
      ctx.state.requestId,
    );
  });

  router.get('/analytics', need, async (ctx) => {
    const query = parseQuery(ctx, AnalyticsQuery);
    ctx.body = ok(await services.analytics.provider(principalOf(ctx.state), query), ctx.state.requestId);
  });

  router.post('/connect/onboard', need, async (ctx) => {
    parseBody(ctx, EmptyBody);
    ctx.body = ok(await services.connect.onboard(principalOf(ctx.state)), ctx.state.requestId);
  });

  return router;
}
