/**
 * Boards, the market view and demand (issue 11, items 5 and 7): leaderboards and the overview are public; the
 * activity feed needs any bearer (key or session); API requests are recorded with any bearer and listed publicly
 * (without requesters' emails or notes). `meta.notify_email` says which address will be told when a matching API
 * goes live (a verified address of the requesting org, or one its owner confirmed), else null; `meta.email_status`
 * and `email_note` say whether a confirmation mail was sent (core/demand/email-confirmation.ts, issue 31).
 */
import { z } from 'zod';
import { ApiRequestMeta, ApiRequestView } from '../../core/demand/demand.schemas.js';
import { ApiRequestBody, ApiRequestsQuery } from '../../core/demand/demand.service.js';
import { ActivityQuery, LeaderboardQuery } from '../../core/catalog/rollups/market.service.js';
import {
  ActivityItem,
  BoardItem,
  LeaderboardMeta,
  MarketOverview,
} from '../../core/catalog/rollups/rollups.schemas.js';
import type { Services } from '../../platform/services.js';
import { env } from '../openapi/operation.js';
import { route, withMeta } from '../openapi/route.js';
import { publicCatalogRouter } from './catalog.routes.js';

export const MARKET_ROUTES = [
  route(
    {
      method: 'get',
      path: '/v1/leaderboards/{board}',
      operationId: 'getLeaderboard',
      summary: 'A ranked board of listings',
      tag: 'Market',
      errors: [429],
      auth: 'none',
      query: LeaderboardQuery,
      success: {
        200: env(z.array(BoardItem), 'The board; meta names it and its metric.', LeaderboardMeta),
      },
    },
    async (_ctx, { services, query, params }) => {
      const board = await services.market.leaderboard(params.board, query);
      return withMeta(board.items, { board: board.board, metric: board.metric });
    },
  ),
  route(
    {
      method: 'get',
      path: '/v1/market/overview',
      operationId: 'getMarketOverview',
      summary: 'Market totals',
      tag: 'Market',
      errors: [429],
      auth: 'none',
      success: { 200: env(MarketOverview, 'The overview.') },
    },
    (_ctx, { services }) => services.market.overview(),
  ),
  route(
    {
      method: 'get',
      path: '/v1/market/activity',
      operationId: 'getMarketActivity',
      summary: 'Activity feed',
      tag: 'Market',
      errors: [429],
      auth: 'bearer',
      query: ActivityQuery,
      success: { 200: env(z.array(ActivityItem), 'The feed.') },
    },
    (_ctx, { services, query }) => services.market.activity(query),
  ),
  route(
    {
      method: 'post',
      path: '/v1/api-requests',
      operationId: 'requestApi',
      summary: 'Ask for an API the catalog lacks (merged into a similar open request)',
      tag: 'Market',
      auth: 'bearer',
      body: ApiRequestBody,
      success: {
        200: env(ApiRequestView, 'Merged.', ApiRequestMeta),
        201: env(ApiRequestView, 'Recorded.', ApiRequestMeta),
      },
      errors: [429],
    },
    async (ctx, { services, principal, body }) => {
      const { request, merged, notifyEmail, emailStatus, emailNote } = await services.demand.request(principal, body);
      ctx.status = merged ? 200 : 201;
      return withMeta(request, { merged, notify_email: notifyEmail, email_status: emailStatus, email_note: emailNote });
    },
  ),
  route(
    {
      method: 'get',
      path: '/v1/api-requests',
      operationId: 'listApiRequests',
      summary: 'Open API requests (without emails or notes)',
      tag: 'Market',
      errors: [429],
      auth: 'none',
      query: ApiRequestsQuery,
      success: { 200: env(z.array(ApiRequestView), 'The requests.') },
    },
    (_ctx, { services, query }) => services.demand.list(query),
  ),
];

export const marketRoutes = (services: Services) => publicCatalogRouter(services, MARKET_ROUTES);
