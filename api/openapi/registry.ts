/**
 * One declaration per operation of the control plane and the gateway: the source of the OpenAPI document
 * (api/openapi/document.ts). Request schemas are the very zod schemas the routes parse with; response `data`
 * schemas live next to them in core/**\/*.schemas.ts where the shape is pinned, else a documented loose object.
 * A route that is registered but not declared here fails test/integration/openapi-routes.test.ts.
 */
import { z } from 'zod';
import {
  AttachEmailBody,
  AttachEmailView,
  EmptyBody,
  LoginRequestBody,
  LoginRequestView,
  LoginVerifyBody,
  LogoutView,
  MeView,
  RegistrationView,
  SessionView,
  SignupBody,
  SignupView,
  VerifiedView,
  VerifyEmailBody,
} from '../../core/accounts/accounts.schemas.js';
import type { Scope } from '../../core/auth/scopes.js';
import {
  AutoReloadBody,
  BalanceView,
  CheckoutBody,
  ConnectOnboardView,
  PackView,
} from '../../core/billing/billing.schemas.js';
import { CategoryView, HistoryPointView, RankView } from '../../core/catalog/listings/listings.schemas.js';
import { HistoryQuery, StatsQuery } from '../../core/catalog/listings/listings.service.js';
import { QuoteQuery } from '../../core/catalog/listings/quote.js';
import { SearchQuery } from '../../core/catalog/search/search.schemas.js';
import { ApiRequestMeta, ApiRequestView } from '../../core/demand/demand.schemas.js';
import { ApiRequestBody, ApiRequestsQuery } from '../../core/demand/demand.service.js';
import {
  ApproveSpendBody,
  CreateKeyBody,
  CreatedKeyView,
  KeySummaryView,
  ListKeysQuery,
  RevokedKeyView,
  PatchKeyBody,
} from '../../core/keys/keys.schemas.js';
import { ActivityQuery, LeaderboardQuery } from '../../core/catalog/rollups/market.service.js';
import { Pagination } from '../../core/pagination.js';
import { AnalyticsQuery } from '../../core/providers/analytics.service.js';
import { ProvidersQuery } from '../../core/providers/provider-directory.service.js';
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
import { UsageQuery } from '../../core/usage/usage.service.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head' | 'options';

/**
 * Who may call: `none` (public), `optional` (public; a bearer changes the answer), `bearer` (an API key, an OAuth
 * access token or a session), `session` (a person's session token only), `key` (an API key only: the gateway).
 */
export type AuthNeed = 'none' | 'optional' | 'bearer' | 'session' | 'key';

/** A success response: the envelope around `data` (with extra `meta`), raw JSON, or another media type. */
export type SuccessBody =
  | { kind: 'envelope'; data: z.ZodType; meta?: z.ZodObject; description: string }
  | { kind: 'json'; schema: z.ZodType; description: string }
  | { kind: 'media'; type: string; description: string }
  | { kind: 'redirect'; description: string }
  | { kind: 'empty'; description: string };

export type Tag =
  | 'Health'
  | 'Accounts'
  | 'Keys'
  | 'Usage'
  | 'Profile'
  | 'Billing'
  | 'Catalog'
  | 'Market'
  | 'Provider'
  | 'Reference'
  | 'Pages'
  | 'OAuth'
  | 'Gateway';

export interface Operation {
  method: HttpMethod;
  /** OpenAPI form: `{param}`. */
  path: string;
  operationId: string;
  summary: string;
  tag: Tag;
  auth: AuthNeed;
  scope?: Scope;
  surface: 'control-plane' | 'gateway';
  query?: z.ZodObject;
  /** A JSON body (zod), or a raw body of the named media types. */
  body?: z.ZodType | { raw: string[]; description: string };
  success: Record<number, SuccessBody>;
  /** Error statuses beyond the ones every operation of its kind can return (see document.ts `errorStatuses`). */
  errors?: number[];
  /** Error responses are HTML pages (with the JSON envelope for the shared middleware's refusals). */
  html?: boolean;
  description?: string;
}

/** A documented loose object: the service's shape is not pinned by a zod schema yet; extra fields are allowed. */
const Obj = (description: string) => z.looseObject({}).describe(description);
const List = (description: string) => z.array(z.looseObject({})).describe(description);

/** One metered call of `GET /v1/usage` (core/usage/usage.service.ts `UsageRecord`). */
const UsageEvent = z
  .looseObject({
    id: z.string(),
    created_at: z.string(),
    key_id: z.string(),
    api_slug: z.string(),
    endpoint_id: z.string().nullable(),
    method: z.string(),
    path: z.string(),
    status: z.number().int(),
    outcome: z.enum(['success', 'failed']),
    cost_cents: z.number().int(),
    price_cents_effective: z.number().int(),
    credit_applied_cents: z.number().int(),
    billable_cents: z.number().int(),
    latency_ms: z.number(),
    request_id: z.string(),
    idempotency_key: z.string().nullable(),
  })
  .describe('A metered call.');

/** One ranked listing of `GET /v1/search` (core/catalog/search/search.service.ts `SearchItem`). */
const SearchItem = z
  .looseObject({
    slug: z.string(),
    name: z.string(),
    summary: z.string(),
    category: z.object({ slug: z.string(), name: z.string() }).nullable(),
    tags: z.array(z.string()),
    source: z.enum(['provider', 'directory']),
    callable: z.boolean().describe('Callable through the gateway (a provider’s listing); a directory entry is not.'),
    docs_url: z.string().nullable(),
    price: z
      .object({
        min_price_cents: z.number().int().nullable(),
        max_price_cents: z.number().int().nullable(),
        free: z.boolean().describe('Every endpoint is free (as the detail’s `pricing.free`).'),
      })
      .describe('Base prices over the endpoints; nulls and `free: false` without endpoints.'),
    svc_score: z.number(),
    merit: z.object({
      reliability: z.number(),
      latency: z.number(),
      usage: z.number(),
      value: z.number(),
      freshness: z.number(),
    }),
    relevance: z.number().optional().describe('0-1, only with `q`.'),
    provider: z.object({ slug: z.string().nullable(), name: z.string().nullable() }),
  })
  .describe('A ranked listing.');

const PriceIncrease = z.object({ price_cents: z.number().int(), effective_at: z.string() }).nullable();
const Discount = z.looseObject({ off_cents: z.number().int() }).nullable();

/** `GET /v1/apis/{slug}/quote` (core/catalog/listings/quote.ts `QuoteView`). */
const Quote = z
  .looseObject({
    api: z.string(),
    endpoint: z.object({
      endpoint_id: z.string(),
      method: z.string(),
      path: z.string(),
      summary: z.string().nullable(),
    }),
    gateway_url: z.string(),
    price_cents: z.number().int(),
    price_cents_effective: z.number().int(),
    price_increase: PriceIncrease,
    discount: Discount,
    admission: z
      .looseObject({
        allowed: z.boolean(),
        error_code: z.string().optional(),
        status: z.number().int().optional(),
        message: z.string().optional(),
        details: z.looseObject({}).optional(),
      })
      .optional()
      .describe('What the gateway would decide now, when the caller sent a bearer credential.'),
  })
  .describe('The quote.');

const PageInfo = z.object({
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
  has_more: z.boolean(),
});
const PaginationMeta = z.looseObject({ request_id: z.string(), pagination: PageInfo });

const HealthCheck = z.strictObject({ status: z.enum(['up', 'down']) });
export const HealthReport = z.looseObject({
  status: z.enum(['ok', 'degraded']),
  service: z.string(),
  checks: z.looseObject({ db: HealthCheck, counters: HealthCheck, temporal: HealthCheck }),
});

/** Gateway success `meta` (spec: Gateway proxy). */
export const GatewayMeta = z.looseObject({
  request_id: z.string(),
  cost_cents: z.number().int().optional(),
  price_cents_effective: z.number().int().optional(),
  credit_applied_cents: z.number().int().optional(),
  billable_cents: z.number().int().optional(),
  price_increase: z.looseObject({}).optional(),
  discount: z.looseObject({}).optional(),
  replayed: z.boolean().optional(),
  original_request_id: z.string().optional(),
});

const env = (data: z.ZodType, description: string, meta?: z.ZodObject): SuccessBody => ({
  kind: 'envelope',
  data,
  description,
  ...(meta ? { meta } : {}),
});
const html = (description: string): SuccessBody => ({ kind: 'media', type: 'text/html', description });
const redirect = (description = 'Redirect (the Location header says where).'): SuccessBody => ({
  kind: 'redirect',
  description,
});
const lifecycle = {
  200: env(Obj('The lifecycle run finished: its outcome and the API state.'), 'The run finished.'),
  202: env(Obj('The lifecycle run is still running after the bounded wait.'), 'The run is still going.'),
};

type Decl = Omit<Operation, 'surface'> & { surface?: Operation['surface'] };

const CONTROL_PLANE: Decl[] = [
  // Health
  {
    method: 'get',
    path: '/health',
    operationId: 'getHealth',
    summary: 'Service status (db, counters, temporal)',
    description: 'Served by the control plane and by the gateway (whose report adds its `pid`).',
    tag: 'Health',
    auth: 'none',
    success: { 200: env(HealthReport, 'All components are up.') },
  },
  // Accounts
  {
    method: 'post',
    path: '/v1/register',
    operationId: 'register',
    summary: 'Anonymous registration: a new org and a consumer-scoped key',
    tag: 'Accounts',
    auth: 'none',
    body: EmptyBody,
    success: { 201: env(RegistrationView, 'The new org and its key (also in the X-Svc-Key header).') },
    errors: [429],
  },
  {
    method: 'post',
    path: '/v1/signup',
    operationId: 'signup',
    summary: 'Human signup: account, API key, session and withheld starter credits',
    tag: 'Accounts',
    auth: 'none',
    body: SignupBody,
    success: { 201: env(SignupView, 'The new account.') },
    errors: [403, 409, 429],
  },
  {
    method: 'post',
    path: '/v1/auth/signup',
    operationId: 'authSignup',
    summary: 'Human signup (alias of /v1/signup)',
    tag: 'Accounts',
    auth: 'none',
    body: SignupBody,
    success: { 201: env(SignupView, 'The new account.') },
    errors: [403, 409, 429],
  },
  {
    method: 'post',
    path: '/v1/auth/verify-email',
    operationId: 'verifyEmail',
    summary: 'Verify an email: elevates the key in place and releases withheld credits',
    tag: 'Accounts',
    auth: 'none',
    body: VerifyEmailBody,
    success: { 200: env(VerifiedView, 'The email is verified.') },
    errors: [409, 422, 429],
  },
  {
    method: 'post',
    path: '/v1/auth/login/request',
    operationId: 'loginRequest',
    summary: 'Mail a 6-digit sign-in code (generic answer for known and unknown emails)',
    tag: 'Accounts',
    auth: 'none',
    body: LoginRequestBody,
    success: { 200: env(LoginRequestView, 'The generic answer.') },
    errors: [429],
  },
  {
    method: 'post',
    path: '/v1/auth/login/verify',
    operationId: 'loginVerify',
    summary: 'Exchange the code for a session; grants starter credits once',
    tag: 'Accounts',
    auth: 'none',
    body: LoginVerifyBody,
    success: { 200: env(SessionView, 'The new session.') },
    errors: [401, 422, 429],
  },
  {
    method: 'post',
    path: '/v1/auth/logout',
    operationId: 'logout',
    summary: 'End the current session',
    tag: 'Accounts',
    auth: 'session',
    body: EmptyBody,
    success: { 200: env(LogoutView, 'The session is over.') },
  },
  {
    method: 'get',
    path: '/v1/me',
    operationId: 'getMe',
    summary: 'The caller: org, credits, scopes, credential',
    tag: 'Accounts',
    auth: 'bearer',
    success: { 200: env(MeView, 'The caller.') },
    errors: [404],
  },
  {
    method: 'post',
    path: '/v1/me/email',
    operationId: 'attachEmail',
    summary: "Attach an email to an anonymous org's root key (the mailed link elevates it)",
    tag: 'Accounts',
    auth: 'bearer',
    body: AttachEmailBody,
    success: { 200: env(AttachEmailView, 'The link is on its way.') },
    errors: [409, 429],
  },
  // Profile
  {
    method: 'get',
    path: '/v1/me/profile',
    operationId: 'getProfile',
    summary: 'Own profile, including private fields',
    tag: 'Profile',
    auth: 'bearer',
    success: { 200: env(Obj('The profile.'), 'The profile.') },
  },
  {
    method: 'patch',
    path: '/v1/me/profile',
    operationId: 'patchProfile',
    summary: 'Update the profile',
    tag: 'Profile',
    auth: 'bearer',
    scope: 'provider:write',
    body: z.looseObject({}).describe('Profile fields (core/profiles: ProfilePatch).'),
    success: { 200: env(Obj('The updated profile.'), 'Updated.') },
    errors: [409],
  },
  {
    method: 'post',
    path: '/v1/me/avatar',
    operationId: 'uploadAvatar',
    summary: 'Upload the avatar (png, jpeg or webp, at most 2 MB; raw bytes)',
    tag: 'Profile',
    auth: 'bearer',
    scope: 'provider:write',
    body: {
      raw: ['image/png', 'image/jpeg', 'image/webp'],
      description: 'The image bytes; the type is judged by them.',
    },
    success: { 200: env(Obj('`avatar_url` and the profile.'), 'Stored.') },
  },
  {
    method: 'get',
    path: '/v1/avatars/{file}',
    operationId: 'getAvatar',
    summary: 'A public avatar image',
    tag: 'Profile',
    auth: 'none',
    success: {
      200: { kind: 'media', type: 'image/*', description: 'The image.' },
      304: { kind: 'empty', description: 'Not modified (If-None-Match).' },
    },
  },
  // Keys and usage
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
  {
    method: 'get',
    path: '/v1/usage',
    operationId: 'listUsage',
    summary: "The org's metered calls, with range totals",
    tag: 'Usage',
    auth: 'bearer',
    scope: 'usage:read',
    query: UsageQuery,
    success: {
      200: env(
        z.array(UsageEvent),
        'A page of usage events.',
        PaginationMeta.extend({
          range: z.object({ from: z.string(), to: z.string() }),
          summary: z.object({
            calls: z.number().int(),
            successful_calls: z.number().int(),
            cost_cents: z.number().int(),
            billable_cents: z.number().int(),
          }),
        }),
      ),
    },
    errors: [404],
  },
  // Billing
  {
    method: 'get',
    path: '/v1/billing/balance',
    operationId: 'getBalance',
    summary: 'Credits, billing mode, auto-reload, payment method, suspension',
    tag: 'Billing',
    auth: 'bearer',
    success: { 200: env(BalanceView, 'The balance.') },
    errors: [404],
  },
  {
    method: 'get',
    path: '/v1/billing/packs',
    operationId: 'listPacks',
    summary: 'Credit packs for sale',
    tag: 'Billing',
    auth: 'bearer',
    success: { 200: env(z.array(PackView), 'The packs.') },
  },
  {
    method: 'post',
    path: '/v1/billing/checkout',
    operationId: 'checkout',
    summary: "A hosted checkout URL (the payment processor's)",
    tag: 'Billing',
    auth: 'bearer',
    scope: 'billing:write',
    body: CheckoutBody,
    success: { 200: env(Obj('The checkout session and its URL.'), 'Checkout is open.') },
    errors: [409, 502],
  },
  {
    method: 'post',
    path: '/v1/billing/setup-intent',
    operationId: 'setupIntent',
    summary: 'A card-setup intent (a person confirms the card)',
    tag: 'Billing',
    auth: 'bearer',
    scope: 'billing:write',
    body: EmptyBody,
    success: { 200: env(Obj('The setup intent.'), 'Created.') },
    errors: [409, 502],
  },
  {
    method: 'post',
    path: '/v1/billing/portal',
    operationId: 'billingPortal',
    summary: 'The billing portal URL (cards, invoices, receipts)',
    tag: 'Billing',
    auth: 'bearer',
    scope: 'billing:write',
    body: EmptyBody,
    success: { 200: env(Obj('The portal URL.'), 'Created.') },
    errors: [409, 502],
  },
  {
    method: 'post',
    path: '/v1/billing/auto-reload',
    operationId: 'configureAutoReload',
    summary: 'Enable or disable auto-reload (threshold and amount)',
    tag: 'Billing',
    auth: 'bearer',
    scope: 'billing:write',
    body: AutoReloadBody,
    success: { 200: env(Obj('The auto-reload settings.'), 'Configured.') },
    errors: [409],
  },
  {
    method: 'post',
    path: '/v1/webhooks/stripe',
    operationId: 'stripeWebhook',
    summary: "The payment processor's webhook (verified by signature over the raw body)",
    tag: 'Billing',
    auth: 'none',
    body: { raw: ['application/json'], description: 'The event, exactly as signed.' },
    success: { 200: env(Obj('What was done with the event.'), 'Handled (or ignored).') },
    errors: [409],
  },
  // Catalog
  {
    method: 'get',
    path: '/v1/search',
    operationId: 'search',
    summary: 'Search live listings (hybrid vector and keyword ranking)',
    tag: 'Catalog',
    auth: 'none',
    query: SearchQuery,
    success: {
      200: env(
        z.array(SearchItem),
        'Ranked listings; meta carries total, limit, offset and sort.',
        z.looseObject({
          request_id: z.string(),
          total: z.number().int(),
          limit: z.number().int(),
          offset: z.number().int(),
          sort: z.string(),
        }),
      ),
    },
  },
  {
    method: 'get',
    path: '/v1/categories',
    operationId: 'listCategories',
    summary: 'Categories with their live API counts',
    tag: 'Catalog',
    auth: 'none',
    success: {
      200: env(z.array(CategoryView), 'Categories.'),
    },
  },
  {
    method: 'get',
    path: '/v1/apis/{slug}',
    operationId: 'getListing',
    summary: 'Listing detail (summary, tags, merit scores, pricing)',
    tag: 'Catalog',
    auth: 'none',
    success: { 200: env(Obj('The listing.'), 'The listing.') },
  },
  {
    method: 'get',
    path: '/v1/apis/{slug}/terms',
    operationId: 'getListingTerms',
    summary: 'The effective provider terms (and, with a bearer, whether the caller accepted them)',
    tag: 'Catalog',
    auth: 'optional',
    success: { 200: env(Obj('The terms in force.'), 'The terms.') },
  },
  {
    method: 'post',
    path: '/v1/apis/{slug}/terms/accept',
    operationId: 'acceptListingTerms',
    summary: "Accept a listing's terms (an owner or admin with verified email; a key alone gets 403)",
    tag: 'Catalog',
    auth: 'session',
    body: AcceptTermsBody,
    success: { 200: env(Obj('The acceptance.'), 'Accepted.') },
    errors: [409, 422],
  },
  {
    method: 'get',
    path: '/v1/apis/{slug}/endpoints',
    operationId: 'listListingEndpoints',
    summary: 'Endpoint rows',
    tag: 'Catalog',
    auth: 'none',
    success: { 200: env(List('Endpoints.'), 'The endpoints.') },
  },
  {
    method: 'get',
    path: '/v1/apis/{slug}/schema',
    operationId: 'getListingSchema',
    summary: 'Endpoint input and output schemas (resolve proxy paths and methods)',
    tag: 'Catalog',
    auth: 'none',
    success: { 200: env(Obj('The schema.'), 'The schema.') },
  },
  {
    method: 'get',
    path: '/v1/apis/{slug}/openapi',
    operationId: 'getListingOpenApi',
    summary: "The listing's raw OpenAPI 3.0 document (no envelope)",
    tag: 'Catalog',
    auth: 'none',
    success: { 200: { kind: 'json', schema: Obj('An OpenAPI 3.0 document.'), description: 'The document.' } },
  },
  {
    method: 'get',
    path: '/v1/apis/{slug}/stats',
    operationId: 'getListingStats',
    summary: 'Stats rollup over a window',
    tag: 'Catalog',
    auth: 'none',
    query: StatsQuery,
    success: { 200: env(Obj('Stats.'), 'The stats.') },
  },
  {
    method: 'get',
    path: '/v1/apis/{slug}/history',
    operationId: 'getListingHistory',
    summary: 'Score history',
    tag: 'Catalog',
    auth: 'none',
    query: HistoryQuery,
    success: { 200: env(z.array(HistoryPointView), 'The latest daily points, oldest first.') },
  },
  {
    method: 'get',
    path: '/v1/apis/{slug}/ranks',
    operationId: 'getListingRanks',
    summary: 'Ranks per board',
    tag: 'Catalog',
    auth: 'none',
    success: { 200: env(z.array(RankView), 'The ranks.') },
  },
  {
    method: 'get',
    path: '/v1/apis/{slug}/quote',
    operationId: 'getQuote',
    summary: 'What a call would cost (more detail for a caller with a key)',
    tag: 'Catalog',
    auth: 'optional',
    query: QuoteQuery,
    success: { 200: env(Quote, 'The quote.') },
  },
  {
    method: 'get',
    path: '/v1/providers',
    operationId: 'listProviders',
    summary: 'Provider directory',
    tag: 'Catalog',
    auth: 'none',
    query: ProvidersQuery,
    success: { 200: env(List('Providers.'), 'A page of providers.', PaginationMeta) },
  },
  {
    method: 'get',
    path: '/v1/providers/{slug}',
    operationId: 'getProvider',
    summary: 'A provider: profile, trust badges, stats, live APIs',
    tag: 'Catalog',
    auth: 'none',
    success: { 200: env(Obj('The provider.'), 'The provider.') },
  },
  {
    method: 'get',
    path: '/v1/documents/{document_id}/snapshot',
    operationId: 'getDocumentSnapshot',
    summary: 'The exact text behind a content hash (raw Markdown, no envelope)',
    tag: 'Catalog',
    auth: 'none',
    success: { 200: { kind: 'media', type: 'text/markdown', description: 'The document text.' } },
  },
  // Market
  {
    method: 'get',
    path: '/v1/leaderboards/{board}',
    operationId: 'getLeaderboard',
    summary: 'A ranked board of listings',
    tag: 'Market',
    auth: 'none',
    query: LeaderboardQuery,
    success: {
      200: env(
        List('Ranked listings.'),
        'The board; meta names it and its metric.',
        z.looseObject({ request_id: z.string(), board: z.string(), metric: z.string() }),
      ),
    },
  },
  {
    method: 'get',
    path: '/v1/market/overview',
    operationId: 'getMarketOverview',
    summary: 'Market totals',
    tag: 'Market',
    auth: 'none',
    success: { 200: env(Obj('Totals.'), 'The overview.') },
  },
  {
    method: 'get',
    path: '/v1/market/activity',
    operationId: 'getMarketActivity',
    summary: 'Activity feed',
    tag: 'Market',
    auth: 'bearer',
    query: ActivityQuery,
    success: { 200: env(z.unknown().describe('Activity.'), 'The feed.') },
  },
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
  {
    method: 'get',
    path: '/v1/api-requests',
    operationId: 'listApiRequests',
    summary: 'Open API requests (without emails or notes)',
    tag: 'Market',
    auth: 'none',
    query: ApiRequestsQuery,
    success: { 200: env(z.array(ApiRequestView), 'The requests.') },
  },
  // Provider
  {
    method: 'get',
    path: '/v1/provider/apis',
    operationId: 'listProviderApis',
    summary: 'Own APIs',
    tag: 'Provider',
    auth: 'bearer',
    scope: 'provider:write',
    query: Pagination.strict(),
    success: { 200: env(List('API summaries.'), 'A page of APIs.', PaginationMeta) },
  },
  {
    method: 'post',
    path: '/v1/provider/apis',
    operationId: 'createProviderApi',
    summary: 'Create a draft API (or import one)',
    tag: 'Provider',
    auth: 'bearer',
    scope: 'provider:write',
    body: CreateApiBody,
    success: { 201: env(Obj('The draft API.'), 'Created.') },
    errors: [409, 422, 502],
  },
  {
    method: 'get',
    path: '/v1/provider/apis/{api_id}',
    operationId: 'getProviderApi',
    summary: 'One own API',
    tag: 'Provider',
    auth: 'bearer',
    scope: 'provider:write',
    success: { 200: env(Obj('The API.'), 'The API.') },
  },
  {
    method: 'patch',
    path: '/v1/provider/apis/{api_id}',
    operationId: 'updateProviderApi',
    summary: 'Update an own API',
    tag: 'Provider',
    auth: 'bearer',
    scope: 'provider:write',
    body: UpdateApiBody,
    success: { 200: env(Obj('The API.'), 'Updated.') },
    errors: [409, 422],
  },
  {
    method: 'put',
    path: '/v1/provider/apis/{api_id}/credentials',
    operationId: 'setProviderApiCredentials',
    summary: 'Set the upstream credentials (stored encrypted, never shown again)',
    tag: 'Provider',
    auth: 'bearer',
    scope: 'provider:write',
    body: CredentialsBody,
    success: { 200: env(Obj('What is stored (no secret).'), 'Stored.') },
    errors: [409],
  },
  {
    method: 'post',
    path: '/v1/provider/apis/{api_id}/verify',
    operationId: 'verifyProviderApi',
    summary: 'Upstream smoke test',
    tag: 'Provider',
    auth: 'bearer',
    scope: 'provider:write',
    body: EmptyBody,
    success: lifecycle,
    errors: [409, 422],
  },
  {
    method: 'post',
    path: '/v1/provider/apis/{api_id}/publish',
    operationId: 'publishProviderApi',
    summary: 'Publish (draft to live)',
    tag: 'Provider',
    auth: 'bearer',
    scope: 'provider:write',
    body: PublishBody,
    success: lifecycle,
    errors: [409, 422, 428],
  },
  {
    method: 'post',
    path: '/v1/provider/apis/{api_id}/unpublish',
    operationId: 'unpublishProviderApi',
    summary: 'Unpublish (live to draft)',
    tag: 'Provider',
    auth: 'bearer',
    scope: 'provider:write',
    body: EmptyBody,
    success: lifecycle,
    errors: [409],
  },
  {
    method: 'patch',
    path: '/v1/provider/apis/{api_id}/pricing',
    operationId: 'updateProviderApiPricing',
    summary: 'Prices and discounts per endpoint',
    tag: 'Provider',
    auth: 'bearer',
    scope: 'provider:write',
    body: PricingBody,
    success: { 200: env(Obj('The pricing.'), 'Updated.') },
    errors: [409, 422],
  },
  {
    method: 'delete',
    path: '/v1/provider/apis/{api_id}/endpoints/{endpoint_id}/pending-price',
    operationId: 'cancelPendingPrice',
    summary: 'Cancel a scheduled price change',
    tag: 'Provider',
    auth: 'bearer',
    scope: 'provider:write',
    success: { 200: env(Obj('The endpoint pricing.'), 'Cancelled.') },
    errors: [409],
  },
  {
    method: 'post',
    path: '/v1/provider/apis/{api_id}/terms/accept',
    operationId: 'acceptProviderTerms',
    summary: 'Accept the provider terms for an own API (a person)',
    tag: 'Provider',
    auth: 'session',
    scope: 'provider:write',
    body: AcceptTermsBody,
    success: { 200: env(Obj('The acceptance.'), 'Accepted.') },
    errors: [409, 422],
  },
  {
    method: 'get',
    path: '/v1/provider/documents',
    operationId: 'listProviderDocuments',
    summary: 'Own legal documents',
    tag: 'Provider',
    auth: 'bearer',
    scope: 'provider:write',
    query: ListDocumentsQuery,
    success: { 200: env(z.unknown().describe('Documents.'), 'The documents.') },
    errors: [404],
  },
  {
    method: 'post',
    path: '/v1/provider/documents',
    operationId: 'createProviderDocument',
    summary: 'Create a draft document',
    tag: 'Provider',
    auth: 'bearer',
    scope: 'provider:write',
    body: CreateDocumentBody,
    success: { 201: env(Obj('The draft document.'), 'Created.') },
    errors: [404, 409, 422],
  },
  {
    method: 'post',
    path: '/v1/provider/documents/{document_id}/activate',
    operationId: 'activateProviderDocument',
    summary: 'Activate a document',
    tag: 'Provider',
    auth: 'bearer',
    scope: 'provider:write',
    body: EmptyBody,
    success: { 200: env(Obj('The active document.'), 'Activated.') },
    errors: [409, 422],
  },
  {
    method: 'get',
    path: '/v1/provider/analytics',
    operationId: 'getProviderAnalytics',
    summary: 'GMV and payout stats',
    tag: 'Provider',
    auth: 'bearer',
    scope: 'provider:write',
    query: AnalyticsQuery,
    success: { 200: env(Obj('Analytics.'), 'The analytics.') },
  },
  {
    method: 'post',
    path: '/v1/provider/connect/onboard',
    operationId: 'connectOnboard',
    summary: "The payment processor's Connect onboarding URL",
    tag: 'Provider',
    auth: 'bearer',
    scope: 'provider:write',
    body: EmptyBody,
    success: { 200: env(ConnectOnboardView, 'The onboarding link.') },
    errors: [409, 502],
  },
  // Reference
  {
    method: 'get',
    path: '/v1/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This document (raw OpenAPI 3.1.0, no envelope)',
    tag: 'Reference',
    auth: 'none',
    success: { 200: { kind: 'json', schema: Obj('An OpenAPI 3.1.0 document.'), description: 'The document.' } },
  },
  {
    method: 'get',
    path: '/docs',
    operationId: 'getApiReference',
    summary: 'The browsable API reference (HTML)',
    tag: 'Reference',
    auth: 'none',
    html: true,
    success: { 200: html('The reference page.') },
  },
  {
    method: 'get',
    path: '/docs/assets/{file}',
    operationId: 'getApiReferenceAsset',
    summary: "The reference page's scripts and styles (our own copies)",
    tag: 'Reference',
    auth: 'none',
    html: true,
    success: { 200: { kind: 'media', type: '*/*', description: 'The asset.' } },
  },
];

/** Server-rendered pages: HTML, forms posting back with a CSRF token, redirects. */
const PAGES: [HttpMethod, string, string, string][] = [
  ['get', '/', 'getHome', 'Home page'],
  ['get', '/docs/{file}', 'getDoc', 'A shipped Markdown doc, as plain text'],
  ['get', '/login', 'getLoginPage', 'Sign-in page'],
  ['post', '/login', 'postLoginPage', 'Sign-in: mail a code'],
  ['post', '/login/verify', 'postLoginVerifyPage', 'Sign-in: check the code, set the session cookie'],
  ['post', '/logout', 'postLogoutPage', 'Sign out'],
  ['get', '/signup', 'getSignupPage', 'Sign-up page'],
  ['post', '/signup', 'postSignupPage', 'Sign-up: mail a code'],
  [
    'post',
    '/signup/verify',
    'postSignupVerifyPage',
    'Sign-up: check the code, create the account, set the session cookie',
  ],
  ['get', '/verify-email', 'getVerifyEmailPage', 'Email verification page'],
  ['post', '/verify-email', 'postVerifyEmailPage', 'Email verification'],
  ['get', '/terms/{slug}', 'getTermsPage', "A listing's terms"],
  ['post', '/terms/{slug}', 'postTermsPage', "Accept a listing's terms"],
  ['get', '/approve/{keyId}', 'getApprovePage', 'Approve spend for a key'],
  ['post', '/approve/{keyId}', 'postApprovePage', 'Approve spend for a key'],
  ['get', '/billing/return', 'getBillingReturnPage', 'Back from checkout'],
  ['get', '/embedded-payments/checkout/{paymentId}', 'getEmbeddedCheckoutPage', 'Embedded payments: test checkout'],
  ['post', '/embedded-payments/checkout/{paymentId}', 'postEmbeddedCheckoutPage', 'Embedded payments: pay'],
  ['get', '/embedded-payments/setup/{orgId}', 'getEmbeddedSetupPage', 'Embedded payments: test card setup'],
  ['post', '/embedded-payments/setup/{orgId}', 'postEmbeddedSetupPage', 'Embedded payments: save the card'],
  ['get', '/connect/return', 'getConnectReturnPage', 'Back from Connect onboarding'],
  ['get', '/connect/refresh', 'getConnectRefreshPage', 'Connect onboarding link expired'],
  ['get', '/oauth/interaction/{uid}', 'getOauthInteraction', 'OAuth sign-in step (a person)'],
  ['post', '/oauth/interaction/{uid}/email', 'postOauthInteractionEmail', 'OAuth sign-in: mail a code'],
  ['post', '/oauth/interaction/{uid}/code', 'postOauthInteractionCode', 'OAuth sign-in: check the code'],
  ['post', '/oauth/interaction/{uid}/consent', 'postOauthInteractionConsent', 'OAuth consent'],
];

/**
 * Routes the document leaves out, with the reason (the route-coverage test and the response-validation hook honour
 * this list): the web console is a person's UI over the same services, not part of the API; its pages, forms and CSV
 * export change with the UI and are covered by their own page and browser tests (docs/console.md).
 */
export const UNDOCUMENTED_PREFIXES = ['/console'] as const;

export const isUndocumented = (path: string): boolean =>
  UNDOCUMENTED_PREFIXES.some(
    (prefix) => path === prefix || path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}.`),
  );

const pageDecl = ([method, path, operationId, summary]: [HttpMethod, string, string, string]): Decl => ({
  method,
  path,
  operationId,
  summary,
  tag: path.startsWith('/oauth/') ? 'OAuth' : 'Pages',
  auth: 'none',
  html: true,
  ...(method === 'post'
    ? { body: { raw: ['application/x-www-form-urlencoded'], description: 'The form, with its CSRF token.' } }
    : {}),
  success:
    path === '/docs/{file}'
      ? { 200: { kind: 'media', type: 'text/plain', description: 'The Markdown text.' } }
      : { 200: html('The page.'), 302: redirect(), 303: redirect() },
});

/** OAuth 2.1 authorization server (RFC 6749, 7591, 7009, 8414): its own JSON shapes, not the envelope. */
const OAuthJson = z.looseObject({}).describe('An OAuth protocol document (RFC shapes; errors use `error`).');
const OAUTH: [HttpMethod, string, string, string][] = [
  ['get', '/.well-known/openid-configuration', 'getOpenIdConfiguration', 'Authorization server metadata (OIDC)'],
  ['get', '/.well-known/oauth-authorization-server', 'getOauthMetadata', 'Authorization server metadata (RFC 8414)'],
  ['get', '/oauth/authorize', 'oauthAuthorize', 'Authorization endpoint'],
  ['post', '/oauth/authorize', 'oauthAuthorizePost', 'Authorization endpoint (form post)'],
  ['get', '/oauth/authorize/{uid}', 'oauthAuthorizeResume', 'Resume authorization after the sign-in step'],
  ['post', '/oauth/token', 'oauthToken', 'Token endpoint'],
  ['post', '/oauth/register', 'oauthRegister', 'Dynamic client registration (RFC 7591)'],
  ['post', '/oauth/revoke', 'oauthRevoke', 'Token revocation (RFC 7009)'],
  ['get', '/oauth/jwks', 'oauthJwks', 'Signing keys'],
  ['options', '/.well-known/openid-configuration', 'optionsOpenIdConfiguration', 'CORS preflight'],
  ['options', '/.well-known/oauth-authorization-server', 'optionsOauthMetadata', 'CORS preflight'],
  ['options', '/oauth/token', 'optionsOauthToken', 'CORS preflight'],
  ['options', '/oauth/register', 'optionsOauthRegister', 'CORS preflight'],
  ['options', '/oauth/revoke', 'optionsOauthRevoke', 'CORS preflight'],
  ['options', '/oauth/jwks', 'optionsOauthJwks', 'CORS preflight'],
];

const oauthDecl = ([method, path, operationId, summary]: [HttpMethod, string, string, string]): Decl => {
  const base = { method, path, operationId, summary, tag: 'OAuth' as const, auth: 'none' as const };
  if (method === 'options') return { ...base, success: { 204: { kind: 'empty', description: 'CORS headers.' } } };
  const json: SuccessBody = { kind: 'json', schema: OAuthJson, description: 'The protocol answer.' };
  const body =
    method === 'post'
      ? {
          body: {
            raw: ['application/x-www-form-urlencoded', 'application/json'],
            description: 'Protocol parameters.',
          },
        }
      : {};
  if (path.startsWith('/oauth/authorize')) {
    return { ...base, ...body, html: true, success: { 200: html('A page.'), 302: redirect(), 303: redirect() } };
  }
  return { ...base, ...body, success: { 200: json, 201: json } };
};

/** The gateway: `ALL /v1/proxy/{apiSlug}/{path}` (its `GET /health` is the control plane's `/health`, same shape). */
const PROXY_METHODS: HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];
const GATEWAY: Decl[] = [
  ...PROXY_METHODS.map((method): Decl => ({
    method,
    path: '/v1/proxy/{apiSlug}/{path}',
    operationId: `proxy${method[0]!.toUpperCase()}${method.slice(1)}`,
    summary: `Call a catalog API (${method.toUpperCase()})`,
    tag: 'Gateway',
    auth: 'key',
    scope: 'proxy:call',
    description:
      '`path` is the rest of the upstream path and may contain `/`. Any method the upstream endpoint supports is ' +
      'allowed; method and body pass through. `Idempotency-Key` (or `X-Idempotency-Key`) makes a retry a replay: ' +
      '`meta.replayed` is true and `data` is null. A session token is refused with 401.',
    ...(method === 'get' || method === 'head' || method === 'delete' || method === 'options'
      ? {}
      : { body: { raw: ['*/*'], description: "Passed to the upstream as is (the endpoint's input)." } }),
    success:
      method === 'head'
        ? { 200: { kind: 'empty', description: 'The upstream answered (HEAD: no body).' } }
        : {
            200: env(
              z.unknown().describe("The upstream's answer (parsed JSON, else text); null on a replay."),
              'The upstream answered; meta carries the billing fields.',
              GatewayMeta,
            ),
          },
    errors: [402, 409, 413, 422, 428, 429, 502],
  })),
];

export const OPERATIONS: Operation[] = [...CONTROL_PLANE, ...PAGES.map(pageDecl), ...OAUTH.map(oauthDecl)].map(
  (d): Operation => ({ surface: 'control-plane', ...d }),
);

export const GATEWAY_OPERATIONS: Operation[] = GATEWAY.map((d): Operation => ({ ...d, surface: 'gateway' }));
