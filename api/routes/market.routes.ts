/**
 * Boards, the market view and demand (issue 11, items 5 and 7): leaderboards and the overview are public; the
 * activity feed needs any bearer (key or session); API requests are recorded with any bearer and listed publicly
 * (without requesters' emails or notes). `meta.notify_email` says which address will be told when a matching API
 * goes live: only a verified address of the requesting org (core/demand/notify-address.ts), else null.
 */
import Router from '@koa/router';
import { ApiRequestBody, ApiRequestsQuery } from '../../core/demand/demand.service.js';
import { ok } from '../../core/envelope.js';
import { ActivityQuery, LeaderboardQuery } from '../../core/catalog/rollups/market.service.js';
import type { Services } from '../../platform/services.js';
import type { AppState } from '../context.js';
import { auth, principalOf } from '../middleware/auth.js';
import { parseBody, parseQuery } from '../middleware/body.js';

export function marketRoutes(services: Services): Router<AppState> {
  const router = new Router<AppState>();

  router.get('/v1/leaderboards/:board', async (ctx) => {
    const board = await services.market.leaderboard(ctx.params.board!, parseQuery(ctx, LeaderboardQuery));
    ctx.body = ok(board.items, ctx.state.requestId, { board: board.board, metric: board.metric });
  });

  router.get('/v1/market/overview', async (ctx) => {
    ctx.body = ok(await services.market.overview(), ctx.state.requestId);
  });

  router.get('/v1/market/activity', auth(services), async (ctx) => {
    ctx.body = ok(await services.market.activity(parseQuery(ctx, ActivityQuery)), ctx.state.requestId);
  });

  router.post('/v1/api-requests', auth(services), async (ctx) => {
    const body = parseBody(ctx, ApiRequestBody);
    const { request, merged, notifyEmail } = await services.demand.request(principalOf(ctx.state), body);
    ctx.status = merged ? 200 : 201;
    ctx.body = ok(request, ctx.state.requestId, { merged, notify_email: notifyEmail });
  });

  router.get('/v1/api-requests', async (ctx) => {
    ctx.body = ok(await services.demand.list(parseQuery(ctx, ApiRequestsQuery)), ctx.state.requestId);
  });

  return router;
}
