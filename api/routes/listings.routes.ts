/**
 * A live listing's sub-resources and the taxonomy (issue 11): endpoints, schema, the raw OpenAPI export, stats,
 * score history, ranks, the quote, and GET /v1/categories. All public; the quote says more to a caller with a key.
 */
import Router from '@koa/router';
import { QuoteQuery } from '../../core/catalog/listings/quote.js';
import { HistoryQuery, StatsQuery } from '../../core/catalog/listings/listings.service.js';
import { ok } from '../../core/envelope.js';
import type { Services } from '../../platform/services.js';
import type { AppState } from '../context.js';
import { parseQuery } from '../middleware/body.js';

export function listingsRoutes(services: Services): Router<AppState> {
  const router = new Router<AppState>();
  const { listings } = services;

  router.get('/v1/categories', async (ctx) => {
    ctx.body = ok(await listings.categories(), ctx.state.requestId);
  });

  router.get('/v1/apis/:slug/endpoints', async (ctx) => {
    ctx.body = ok(await listings.endpoints(ctx.params.slug!), ctx.state.requestId);
  });

  router.get('/v1/apis/:slug/schema', async (ctx) => {
    ctx.body = ok(await listings.schema(ctx.params.slug!), ctx.state.requestId);
  });

  // The spec's one exception to the envelope: the raw document, so client generators can read it as is.
  router.get('/v1/apis/:slug/openapi', async (ctx) => {
    const doc = await listings.openapi(ctx.params.slug!);
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = doc;
  });

  router.get('/v1/apis/:slug/stats', async (ctx) => {
    const query = parseQuery(ctx, StatsQuery);
    ctx.body = ok(await listings.stats(ctx.params.slug!, query), ctx.state.requestId);
  });

  router.get('/v1/apis/:slug/history', async (ctx) => {
    const query = parseQuery(ctx, HistoryQuery);
    ctx.body = ok(await listings.history(ctx.params.slug!, query), ctx.state.requestId);
  });

  router.get('/v1/apis/:slug/ranks', async (ctx) => {
    ctx.body = ok(await listings.ranks(ctx.params.slug!), ctx.state.requestId);
  });

  router.get('/v1/apis/:slug/quote', async (ctx) => {
    const query = parseQuery(ctx, QuoteQuery);
    const authorization = ctx.get('authorization') || undefined;
    // An answer about this caller's key must not be cached for anyone else.
    if (authorization) ctx.set('Cache-Control', 'no-store');
    ctx.body = ok(await listings.quote(ctx.params.slug!, query, authorization), ctx.state.requestId);
  });

  return router;
}
