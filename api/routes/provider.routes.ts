/**
 * The provider's own listings, documents, analytics and Connect onboarding. Every route needs provider:write. A
 * listing's endpoint changes, revision and retirement are provider-changes.routes.ts.
 */
import { z } from 'zod';
import { EmptyBody } from '../../core/accounts/accounts.schemas.js';
import { ConnectOnboardView } from '../../core/billing/billing.schemas.js';
import { Pagination, PaginationMeta } from '../../core/pagination.js';
import { EndpointView, PricingView } from '../../core/pricing/pricing.schemas.js';
import { AnalyticsQuery } from '../../core/providers/analytics.service.js';
import {
  AcceptTermsBody,
  AnalyticsView,
  CreateApiBody,
  CreateDocumentBody,
  CredentialsBody,
  CredentialView,
  LifecycleDoneView,
  LifecycleRunningView,
  ListDocumentsQuery,
  PricingBody,
  ProviderApiSummary,
  ProviderApiView,
  PublishBody,
  UpdateApiBody,
} from '../../core/providers/providers.schemas.js';
import { AcceptanceView, DocumentView } from '../../core/terms/terms.schemas.js';
import { lifecycleView, type LifecycleOutcome } from '../../core/providers/lifecycle.service.js';
import type { Services } from '../../platform/services.js';
import type { AppContext } from '../context.js';
import { env } from '../openapi/operation.js';
import { mountRoutes, route, withMeta } from '../openapi/route.js';
import { ENDPOINT_ROUTES, RETIREMENT_ROUTES } from './provider-changes.routes.js';

/** Every route here needs `provider:write`. */
const need = { tag: 'Provider', auth: 'bearer', scope: 'provider:write' } as const;

/** A lifecycle run that finished answers 200; one still running after the bounded wait answers 202. */
const lifecycleSuccess = {
  200: env(LifecycleDoneView, 'The run finished.'),
  202: env(LifecycleRunningView, 'The run is still going.'),
};
function lifecycle(ctx: AppContext, apiId: string, outcome: LifecycleOutcome) {
  if (!outcome.done) ctx.status = 202;
  return lifecycleView(apiId, outcome);
}

const API_ROUTES = [
  route(
    {
      method: 'get',
      path: '/v1/provider/apis',
      operationId: 'listProviderApis',
      summary: 'Own APIs',
      ...need,
      query: Pagination.strict(),
      success: { 200: env(z.array(ProviderApiSummary), 'A page of APIs.', PaginationMeta) },
    },
    async (_ctx, { services, principal, query }) => {
      const page = await services.providers.list(principal, query);
      return withMeta(page.items, { pagination: page.pagination });
    },
  ),
  route(
    {
      method: 'post',
      path: '/v1/provider/apis',
      operationId: 'createProviderApi',
      summary: 'Create a draft API (or import one)',
      ...need,
      body: CreateApiBody,
      success: { 201: env(ProviderApiView, 'Created.') },
      errors: [409, 422, 502],
    },
    (_ctx, { services, principal, body }) => services.providers.create(principal, body),
  ),
  route(
    {
      method: 'get',
      path: '/v1/provider/apis/{api_id}',
      operationId: 'getProviderApi',
      summary: 'One own API',
      ...need,
      success: { 200: env(ProviderApiView, 'The API.') },
    },
    (_ctx, { services, principal, params }) => services.providers.get(principal, params.api_id),
  ),
  route(
    {
      method: 'patch',
      path: '/v1/provider/apis/{api_id}',
      operationId: 'updateProviderApi',
      summary: 'Update an own API',
      ...need,
      body: UpdateApiBody,
      success: { 200: env(ProviderApiView, 'Updated.') },
      errors: [409, 422],
    },
    (_ctx, { services, principal, body, params }) => services.providers.update(principal, params.api_id, body),
  ),
  route(
    {
      method: 'put',
      path: '/v1/provider/apis/{api_id}/credentials',
      operationId: 'setProviderApiCredentials',
      summary: 'Set the upstream credentials (stored encrypted, never shown again)',
      ...need,
      body: CredentialsBody,
      success: { 200: env(CredentialView, 'Stored.') },
      errors: [409],
    },
    (_ctx, { services, principal, body, params }) =>
      services.providerCredentials.setCredentials(principal, params.api_id, body),
  ),
  route(
    {
      method: 'post',
      path: '/v1/provider/apis/{api_id}/verify',
      operationId: 'verifyProviderApi',
      summary: 'Upstream smoke test',
      ...need,
      body: EmptyBody,
      success: lifecycleSuccess,
      errors: [409, 422],
    },
    async (ctx, { services, principal, params }) =>
      lifecycle(ctx, params.api_id, await services.providerLifecycle.verify(principal, params.api_id)),
  ),
  route(
    {
      method: 'post',
      path: '/v1/provider/apis/{api_id}/publish',
      operationId: 'publishProviderApi',
      summary: "Publish (draft to live), or a live API's open revision",
      ...need,
      body: PublishBody,
      success: lifecycleSuccess,
      errors: [409, 422, 428],
    },
    async (ctx, { services, principal, body, params }) =>
      lifecycle(ctx, params.api_id, await services.providerLifecycle.publish(principal, params.api_id, body)),
  ),
  route(
    {
      method: 'post',
      path: '/v1/provider/apis/{api_id}/unpublish',
      operationId: 'unpublishProviderApi',
      summary: 'Unpublish (live to draft)',
      ...need,
      body: EmptyBody,
      success: lifecycleSuccess,
      errors: [409],
    },
    async (ctx, { services, principal, params }) =>
      lifecycle(ctx, params.api_id, await services.providerLifecycle.unpublish(principal, params.api_id)),
  ),
  route(
    {
      method: 'patch',
      path: '/v1/provider/apis/{api_id}/pricing',
      operationId: 'updateProviderApiPricing',
      summary: 'Prices and discounts per endpoint',
      ...need,
      body: PricingBody,
      success: { 200: env(PricingView, 'Updated.') },
      errors: [409, 422],
    },
    (_ctx, { services, principal, body, params }) =>
      services.priceChanges.updatePricing(principal, params.api_id, body),
  ),
  route(
    {
      method: 'delete',
      path: '/v1/provider/apis/{api_id}/endpoints/{endpoint_id}/pending-price',
      operationId: 'cancelPendingPrice',
      summary: 'Cancel a scheduled price change',
      ...need,
      success: { 200: env(EndpointView, 'Cancelled.') },
      errors: [409],
    },
    (_ctx, { services, principal, params }) =>
      services.priceChanges.cancelPendingPrice(principal, params.api_id, params.endpoint_id),
  ),
  route(
    {
      method: 'post',
      path: '/v1/provider/apis/{api_id}/terms/accept',
      operationId: 'acceptProviderTerms',
      summary: 'Accept the provider terms for an own API (a person)',
      ...need,
      auth: 'session',
      body: AcceptTermsBody,
      success: { 200: env(AcceptanceView, 'Accepted.') },
      errors: [409, 422],
    },
    (_ctx, { services, principal, body, params }) => services.documents.acceptForOwnApi(principal, params.api_id, body),
  ),
];

const ACCOUNT_ROUTES = [
  route(
    {
      method: 'get',
      path: '/v1/provider/documents',
      operationId: 'listProviderDocuments',
      summary: 'Own legal documents',
      ...need,
      query: ListDocumentsQuery,
      success: { 200: env(z.array(DocumentView), 'The documents.') },
      errors: [404],
    },
    (_ctx, { services, principal, query }) => services.documents.list(principal, query),
  ),
  route(
    {
      method: 'post',
      path: '/v1/provider/documents',
      operationId: 'createProviderDocument',
      summary: 'Create a draft document',
      ...need,
      body: CreateDocumentBody,
      success: { 201: env(DocumentView, 'Created.') },
      errors: [404, 409, 422],
    },
    (_ctx, { services, principal, body }) => services.documents.create(principal, body),
  ),
  route(
    {
      method: 'post',
      path: '/v1/provider/documents/{document_id}/activate',
      operationId: 'activateProviderDocument',
      summary: 'Activate a document',
      ...need,
      body: EmptyBody,
      success: { 200: env(DocumentView, 'Activated.') },
      errors: [409, 422],
    },
    (_ctx, { services, principal, params }) => services.documents.activate(principal, params.document_id),
  ),
  route(
    {
      method: 'get',
      path: '/v1/provider/analytics',
      operationId: 'getProviderAnalytics',
      summary: 'GMV and payout stats',
      ...need,
      query: AnalyticsQuery,
      success: { 200: env(AnalyticsView, 'The analytics.') },
    },
    (_ctx, { services, principal, query }) => services.analytics.provider(principal, query),
  ),
  route(
    {
      method: 'post',
      path: '/v1/provider/connect/onboard',
      operationId: 'connectOnboard',
      summary: "The payment processor's Connect onboarding URL",
      ...need,
      body: EmptyBody,
      success: { 200: env(ConnectOnboardView, 'The onboarding link.') },
      errors: [409, 502],
    },
    (_ctx, { services, principal }) => services.connect.onboard(principal),
  ),
];

export const PROVIDER_ROUTES = [...API_ROUTES, ...ENDPOINT_ROUTES, ...RETIREMENT_ROUTES, ...ACCOUNT_ROUTES];

export const providerRoutes = (services: Services) => mountRoutes(services, PROVIDER_ROUTES);
