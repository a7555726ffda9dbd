/**
 * Every operation the CLI calls, under its operationId in the published OpenAPI document (api/openapi), with its
 * method, path template and the type of its success `data`: the core's response schemas, imported as types only so
 * the CLI loads nothing of core/ at run time. test/unit/cli-operations.test.ts fails when one is not in the document.
 */
import type { z } from 'zod';
import type {
  LoginRequestView,
  LogoutView,
  MeView,
  RegistrationView,
  SessionView,
  SignupView,
  VerifiedView,
} from '../core/accounts/accounts.schemas.js';
import type { BalanceView, PackView } from '../core/billing/billing.schemas.js';
import type { CategoryView, QuoteView } from '../core/catalog/listings/listings.schemas.js';
import type { SearchItem } from '../core/catalog/search/search.schemas.js';
import type { CreatedKeyView, KeySummaryView, RevokedKeyView } from '../core/keys/keys.schemas.js';
import type { UsageEvent } from '../core/usage/usage.schemas.js';
import type { Method, Operation } from './client.js';
import type { PricingView, EndpointView } from '../core/pricing/pricing.schemas.js';
import type {
  EndpointChangesView as Changes,
  RevisionView as Revision,
} from '../core/providers/endpoint-changes.schemas.js';
import type {
  AnalyticsView as Analytics,
  CredentialView as Credential,
  DeletedApiView as Deleted,
  LifecycleView as Lifecycle,
  ProviderApiSummary as ApiSummary,
  ProviderApiView as ApiView,
} from '../core/providers/providers.schemas.js';
import type { DocumentView } from '../core/terms/terms.schemas.js';
import type { CheckoutView as Checkout } from '../core/billing/billing.schemas.js';
import type {
  ListingDetail as Listing,
  ListingSchemaView as ListingSchema,
} from '../core/catalog/listings/listings.schemas.js';
import type { BoardItem } from '../core/catalog/rollups/rollups.schemas.js';
import type { AcceptanceView, TermsView as Terms } from '../core/terms/terms.schemas.js';

const control = <T = unknown>(method: Method, path: string, raw?: true): Operation<T> => ({
  method,
  path,
  plane: 'control',
  ...(raw ? { raw } : {}),
});

export const OPERATIONS = {
  register: control<RegistrationView>('POST', '/v1/register'),
  signup: control<SignupView>('POST', '/v1/signup'),
  verifyEmail: control<VerifiedView>('POST', '/v1/auth/verify-email'),
  loginRequest: control<LoginRequestView>('POST', '/v1/auth/login/request'),
  loginVerify: control<SessionView>('POST', '/v1/auth/login/verify'),
  logout: control<LogoutView>('POST', '/v1/auth/logout'),
  getMe: control<MeView>('GET', '/v1/me'),

  search: control<SearchItem[]>('GET', '/v1/search'),
  listCategories: control<CategoryView[]>('GET', '/v1/categories'),
  getListing: control<Listing>('GET', '/v1/apis/{slug}'),
  getListingSchema: control<ListingSchema>('GET', '/v1/apis/{slug}/schema'),
  getListingOpenApi: control('GET', '/v1/apis/{slug}/openapi', true),
  getQuote: control<QuoteView>('GET', '/v1/apis/{slug}/quote'),
  getListingTerms: control<Terms>('GET', '/v1/apis/{slug}/terms'),
  acceptListingTerms: control<AcceptanceView>('POST', '/v1/apis/{slug}/terms/accept'),
  getLeaderboard: control<BoardItem[]>('GET', '/v1/leaderboards/{board}'),

  listKeys: control<KeySummaryView[]>('GET', '/v1/keys'),
  createKey: control<CreatedKeyView>('POST', '/v1/keys'),
  patchKey: control<KeySummaryView>('PATCH', '/v1/keys/{id}'),
  revokeKey: control<RevokedKeyView>('DELETE', '/v1/keys/{id}'),

  listUsage: control<UsageEvent[]>('GET', '/v1/usage'),
  getBalance: control<BalanceView>('GET', '/v1/billing/balance'),
  listPacks: control<z.infer<typeof PackView>[]>('GET', '/v1/billing/packs'),
  checkout: control<Checkout>('POST', '/v1/billing/checkout'),

  listProviderApis: control<ApiSummary[]>('GET', '/v1/provider/apis'),
  createProviderApi: control<ApiView>('POST', '/v1/provider/apis'),
  getProviderApi: control<ApiView>('GET', '/v1/provider/apis/{api_id}'),
  updateProviderApi: control<ApiView>('PATCH', '/v1/provider/apis/{api_id}'),
  setProviderApiCredentials: control<Credential>('PUT', '/v1/provider/apis/{api_id}/credentials'),
  verifyProviderApi: control<Lifecycle>('POST', '/v1/provider/apis/{api_id}/verify'),
  publishProviderApi: control<Lifecycle>('POST', '/v1/provider/apis/{api_id}/publish'),
  unpublishProviderApi: control<Lifecycle>('POST', '/v1/provider/apis/{api_id}/unpublish'),
  updateProviderApiPricing: control<PricingView>('PATCH', '/v1/provider/apis/{api_id}/pricing'),
  cancelPendingPrice: control<EndpointView>(
    'DELETE',
    '/v1/provider/apis/{api_id}/endpoints/{endpoint_id}/pending-price',
  ),
  addProviderEndpoint: control<Changes>('POST', '/v1/provider/apis/{api_id}/endpoints'),
  updateProviderEndpoint: control<Changes>('PATCH', '/v1/provider/apis/{api_id}/endpoints/{endpoint_id}'),
  removeProviderEndpoint: control<Changes>('DELETE', '/v1/provider/apis/{api_id}/endpoints/{endpoint_id}'),
  importProviderEndpoints: control<Changes>('POST', '/v1/provider/apis/{api_id}/import'),
  getProviderRevision: control<Revision>('GET', '/v1/provider/apis/{api_id}/revision'),
  discardProviderRevision: control<Revision>('DELETE', '/v1/provider/apis/{api_id}/revision'),
  archiveProviderApi: control<ApiView>('POST', '/v1/provider/apis/{api_id}/archive'),
  restoreProviderApi: control<ApiView>('POST', '/v1/provider/apis/{api_id}/restore'),
  deleteProviderApi: control<Deleted>('DELETE', '/v1/provider/apis/{api_id}'),
  listProviderDocuments: control<DocumentView[]>('GET', '/v1/provider/documents'),
  createProviderDocument: control<DocumentView>('POST', '/v1/provider/documents'),
  activateProviderDocument: control<DocumentView>('POST', '/v1/provider/documents/{document_id}/activate'),
  getProviderAnalytics: control<Analytics>('GET', '/v1/provider/analytics'),
} as const;

/** The gateway's `{method} /v1/proxy/{apiSlug}/{path}` (operationId `proxyGet`, `proxyPost`, …): `{path}` as given. */
export function proxyOperation(method: Method): Operation {
  return { method, path: '/v1/proxy/{apiSlug}/{path}', plane: 'gateway', rest: 'path' };
}
