/** Public catalog routes of this stage: search, listing detail, terms (and accepting them), providers, document snapshots. */
import Router from '@koa/router';
import { ok } from '../../core/envelope.js';
import { SearchQuery } from '../../core/catalog/search/search.schemas.js';
import { ProvidersQuery } from '../../core/providers/provider-directory.service.js';
import { AcceptTermsBody } from '../../core/providers/providers.schemas.js';
import type { Services } from '../../platform/services.js';
import type { AppState } from '../context.js';
import { auth, optionalAuth, principalOf } from '../middleware/auth.js';
import { parseBody, parseQuery } from '../middleware/body.js';

export function catalogRoutes(services: Services): Router<AppState> {
  const router = new Router<AppState>();

  // Public: hybrid search over live listings (core/catalog/search/search.service.ts); meta carries total, limit, offset.
  router.get('/v1/search', async (ctx) => {
    const { items, total, limit, offset, sort } = await services.search.search(parseQuery(ctx, SearchQuery));
    ctx.body = ok(items, ctx.state.requestId, { total, limit, offset, sort });
  });

  router.get('/v1/apis/:slug', async (ctx) => {
    ctx.body = ok(await services.listings.detail(ctx.params.slug!), ctx.state.requestId);
  });

  router.get('/v1/apis/:slug/terms', optionalAuth(services), async (ctx) => {
    ctx.body = ok(await services.listings.terms(ctx.params.slug!, ctx.state.principal), ctx.state.requestId);
  });

  // A person (owner or admin, verified email) accepts in force terms for their org; an API key alone gets 403.
  router.post('/v1/apis/:slug/terms/accept', auth(services, { session: true }), async (ctx) => {
    const body = parseBody(ctx, AcceptTermsBody);
    const accepted = await services.documents.acceptForListing(principalOf(ctx.state), ctx.params.slug!, body);
    ctx.body = ok(accepted, ctx.state.requestId);
  });

  router.get('/v1/providers', async (ctx) => {
    const page = await services.providerDirectory.list(parseQuery(ctx, ProvidersQuery));
    ctx.body = ok(page.items, ctx.state.requestId, { pagination: page.pagination });
  });

  router.get('/v1/providers/:slug', async (ctx) => {
    ctx.body = ok(await services.providerDirectory.get(ctx.params.slug!), ctx.state.requestId);
  });

  // The exact text behind a content hash (what `snapshot_url` points to): raw markdown, not the envelope.
  router.get('/v1/documents/:document_id/snapshot', async (ctx) => {
    const snap = await services.documents.snapshot(ctx.params.document_id!);
    ctx.type = 'text/markdown; charset=utf-8';
    ctx.set('ETag', `"${snap.contentHash}"`);
    ctx.set('X-Content-Hash', snap.contentHash);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.body = snap.body;
  });

  return router;
}
