/** API keys of the caller's org: list, create, patch caps, approve spend (approval mode), revoke. */
import Router from '@koa/router';
import { ok } from '../../core/envelope.js';
import { ApproveSpendBody, CreateKeyBody, ListKeysQuery, PatchKeyBody } from '../../core/keys/keys.schemas.js';
import type { Services } from '../../platform/services.js';
import type { AppState } from '../context.js';
import { auth, principalOf } from '../middleware/auth.js';
import { parseBody, parseQuery } from '../middleware/body.js';

export function keysRoutes(services: Services): Router<AppState> {
  const router = new Router<AppState>();

  router.get('/v1/keys', auth(services), async (ctx) => {
    const page = await services.keyAdmin.list(principalOf(ctx.state), parseQuery(ctx, ListKeysQuery));
    ctx.body = ok(page.items, ctx.state.requestId, { pagination: page.pagination });
  });

  router.post('/v1/keys', auth(services, 'keys:write'), async (ctx) => {
    const created = await services.keyAdmin.create(principalOf(ctx.state), parseBody(ctx, CreateKeyBody));
    ctx.status = 201;
    ctx.body = ok(created, ctx.state.requestId);
  });

  router.patch('/v1/keys/:id', auth(services, 'keys:write'), async (ctx) => {
    const updated = await services.keyAdmin.patch(principalOf(ctx.state), ctx.params.id!, parseBody(ctx, PatchKeyBody));
    ctx.body = ok(updated, ctx.state.requestId);
  });

  // Approval mode: a person approves more spend for the key (the gateway's 402 approval_url leads here or to the page).
  router.post('/v1/keys/:id/approvals', auth(services, { scope: 'keys:write', session: true }), async (ctx) => {
    const body = parseBody(ctx, ApproveSpendBody);
    ctx.body = ok(await services.keyAdmin.approve(principalOf(ctx.state), ctx.params.id!, body), ctx.state.requestId);
  });

  router.delete('/v1/keys/:id', auth(services, 'keys:write'), async (ctx) => {
    ctx.body = ok(await services.keyAdmin.revoke(principalOf(ctx.state), ctx.params.id!), ctx.state.requestId);
  });

  return router;
}
