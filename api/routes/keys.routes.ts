/** API keys of the caller's org: list, create, patch caps, approve spend (approval mode), revoke. */
import { z } from 'zod';
import {
  ApproveSpendBody,
  CreateKeyBody,
  CreatedKeyView,
  KeySummaryView,
  ListKeysQuery,
  PatchKeyBody,
  RevokedKeyView,
} from '../../core/keys/keys.schemas.js';
import { PaginationMeta } from '../../core/pagination.js';
import type { Services } from '../../platform/services.js';
import { env } from '../openapi/operation.js';
import { mountRoutes, route, withMeta } from '../openapi/route.js';

export const KEYS_ROUTES = [
  route(
    {
      method: 'get',
      path: '/v1/keys',
      operationId: 'listKeys',
      summary: "The org's keys",
      tag: 'Keys',
      auth: 'bearer',
      query: ListKeysQuery,
      success: { 200: env(z.array(KeySummaryView), 'A page of keys.', PaginationMeta) },
    },
    async (_ctx, { services, principal, query }) => {
      const page = await services.keyAdmin.list(principal, query);
      return withMeta(page.items, { pagination: page.pagination });
    },
  ),
  route(
    {
      method: 'post',
      path: '/v1/keys',
      operationId: 'createKey',
      summary: 'Create a key (the plaintext is shown once)',
      tag: 'Keys',
      auth: 'bearer',
      scope: 'keys:write',
      body: CreateKeyBody,
      success: { 201: env(CreatedKeyView, 'The new key.') },
      errors: [409],
    },
    (_ctx, { services, principal, body }) => services.keyAdmin.create(principal, body),
  ),
  route(
    {
      method: 'patch',
      path: '/v1/keys/{id}',
      operationId: 'patchKey',
      summary: "Change a key's caps or approval mode",
      tag: 'Keys',
      auth: 'bearer',
      scope: 'keys:write',
      body: PatchKeyBody,
      success: { 200: env(KeySummaryView, 'The updated key.') },
      errors: [409],
    },
    (_ctx, { services, principal, body, params }) => services.keyAdmin.patch(principal, params.id, body),
  ),
  route(
    {
      method: 'delete',
      path: '/v1/keys/{id}',
      operationId: 'revokeKey',
      summary: 'Revoke a key',
      tag: 'Keys',
      auth: 'bearer',
      scope: 'keys:write',
      success: { 200: env(RevokedKeyView, 'The key is revoked.') },
      errors: [409],
    },
    (_ctx, { services, principal, params }) => services.keyAdmin.revoke(principal, params.id),
  ),
  // Approval mode: a person approves more spend for the key (the gateway's 402 approval_url leads here or to the page).
  route(
    {
      method: 'post',
      path: '/v1/keys/{id}/approvals',
      operationId: 'approveSpend',
      summary: 'Approve more spend for a key in approval mode (a person)',
      tag: 'Keys',
      auth: 'session',
      scope: 'keys:write',
      body: ApproveSpendBody,
      success: { 200: env(KeySummaryView, 'The key with its new approval.') },
      errors: [409],
    },
    (_ctx, { services, principal, body, params }) => services.keyAdmin.approve(principal, params.id, body),
  ),
];

export const keysRoutes = (services: Services) => mountRoutes(services, KEYS_ROUTES);
