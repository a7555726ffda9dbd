/**
 * Every documented operation, gathered from where it is served: the control plane's `route()` declarations
 * (api/routes/*.routes.ts, the reference routes), the pages' and OAuth's `documented` lists, then the gateway. The
 * list is built on first use (the reference routes import the document builder, which imports this file).
 */
import { APPROVE_PAGE_OPERATIONS } from '../pages/approve.page.js';
import { DEMAND_CONFIRM_PAGE_OPERATIONS } from '../pages/demand-confirm.page.js';
import { EMBEDDED_PAYMENTS_PAGE_OPERATIONS } from '../pages/embedded-payments.page.js';
import { HOME_PAGE_OPERATIONS } from '../pages/home.page.js';
import { SIGN_IN_PAGE_OPERATIONS } from '../pages/pages.routes.js';
import { SIGNUP_PAGE_OPERATIONS } from '../pages/signup.page.js';
import { STOREFRONT_OPERATIONS } from '../pages/storefront/storefront.routes.js';
import { TERMS_PAGE_OPERATIONS } from '../pages/terms.page.js';
import { OAUTH_OPERATIONS, OAUTH_PAGE_OPERATIONS } from '../oauth/oauth.operations.js';
import { ACCOUNTS_ROUTES } from '../routes/accounts.routes.js';
import { BILLING_ROUTES } from '../routes/billing.routes.js';
import { CATALOG_ROUTES } from '../routes/catalog.routes.js';
import { HEALTH_ROUTE } from '../routes/health.routes.js';
import { KEYS_ROUTES } from '../routes/keys.routes.js';
import { LISTINGS_ROUTES } from '../routes/listings.routes.js';
import { MARKET_ROUTES } from '../routes/market.routes.js';
import { PROFILE_ROUTES } from '../routes/profile.routes.js';
import { PROVIDER_ROUTES } from '../routes/provider.routes.js';
import { USAGE_ROUTES } from '../routes/usage.routes.js';
import { GATEWAY_OPERATIONS } from './gateway.operations.js';
import { REFERENCE_ROUTES } from './openapi.routes.js';
import type { Operation } from './operation.js';

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

let gathered: Operation[] | undefined;

/** Every documented operation: control plane (routes, reference, pages, OAuth), then gateway. */
export function allOperations(): Operation[] {
  gathered ??= [
    ...[
      HEALTH_ROUTE,
      ...ACCOUNTS_ROUTES,
      ...PROFILE_ROUTES,
      ...KEYS_ROUTES,
      ...USAGE_ROUTES,
      ...BILLING_ROUTES,
      ...CATALOG_ROUTES,
      ...LISTINGS_ROUTES,
      ...MARKET_ROUTES,
      ...PROVIDER_ROUTES,
      ...REFERENCE_ROUTES,
    ].map((r) => r.operation),
    ...HOME_PAGE_OPERATIONS,
    ...STOREFRONT_OPERATIONS,
    ...SIGN_IN_PAGE_OPERATIONS,
    ...SIGNUP_PAGE_OPERATIONS,
    ...TERMS_PAGE_OPERATIONS,
    ...APPROVE_PAGE_OPERATIONS,
    ...DEMAND_CONFIRM_PAGE_OPERATIONS,
    ...EMBEDDED_PAYMENTS_PAGE_OPERATIONS,
    ...OAUTH_PAGE_OPERATIONS,
    ...OAUTH_OPERATIONS,
    ...GATEWAY_OPERATIONS,
  ];
  return gathered;
}
