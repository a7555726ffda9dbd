/** The control plane's Koa application: createApiApp(services). Middleware order matters and is listed here. */
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import { MethodNotAllowedError, NotFoundError } from '../core/errors.js';
import type { Services } from '../platform/services.js';
import type { AppState } from './context.js';
import { errorEnvelope } from './middleware/error-envelope.js';
import { httpMetrics } from './middleware/metrics.js';
import { inputRules } from './middleware/input.js';
import { oauthRoutes } from './oauth/oauth.routes.js';
import { openApiRoutes } from './openapi/openapi.routes.js';
import { requestContext } from './middleware/request-context.js';
import { httpTracing } from './middleware/tracing.js';
import { tracingOn } from '../core/tracing.js';
import { applyProxyTrust } from '../platform/runtime/proxy-trust.js';
import { homePages } from './pages/home.page.js';
import { storefrontRoutes } from './pages/storefront/storefront.routes.js';
import { pagesRoutes } from './pages/pages.routes.js';
import { approvalPages } from './pages/approve.page.js';
import { consoleRoutes } from './pages/console/console.routes.js';
import { termsPages } from './pages/terms.page.js';
import { signupPages } from './pages/signup.page.js';
import { embeddedPaymentsPages } from './pages/embedded-payments.page.js';
import { demandConfirmPages } from './pages/demand-confirm.page.js';
import { accountsRoutes } from './routes/accounts.routes.js';
import { billingRoutes } from './routes/billing.routes.js';
import { catalogRoutes } from './routes/catalog.routes.js';
import { healthRoutes } from './routes/health.routes.js';
import { keysRoutes } from './routes/keys.routes.js';
import { listingsRoutes } from './routes/listings.routes.js';
import { marketRoutes } from './routes/market.routes.js';
import { profileRoutes } from './routes/profile.routes.js';
import { providerRoutes } from './routes/provider.routes.js';
import { usageRoutes } from './routes/usage.routes.js';

export const JSON_BODY_LIMIT = '1mb';

/** The shared Koa scaffolding of our surfaces: ids, envelope errors, JSON bodies and input rules, routers, 404/405. */
export function createKoaApp(
  services: Pick<Services, 'logger' | 'config'> & Partial<Pick<Services, 'metrics'>>,
  routers: Router<AppState>[],
  surface: 'api' | 'mcp' = 'api',
): Koa<AppState> {
  const app = new Koa<AppState>();
  applyProxyTrust(app, services.config.trustProxyHops);
  app.silent = true; // errors are logged by errorEnvelope with the request id
  if (services.metrics) app.use(httpMetrics(services.metrics, surface));
  app.use(requestContext(services.logger));
  if (tracingOn()) app.use(httpTracing(surface));
  app.use(errorEnvelope());
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: JSON_BODY_LIMIT }));
  app.use(inputRules()); // no NUL or lone surrogate in the path, query or JSON body reaches a route
  app.use(async (ctx, next) => {
    await next();
    if (ctx.respond === false) return; // a handler wrote the response itself
    if (ctx.status === 405 || ctx.status === 501) {
      throw new MethodNotAllowedError(ctx.response.get('Allow').split(/,\s*/).filter(Boolean));
    }
    if (ctx.status === 404 && ctx.body == null) throw new NotFoundError(`No route for ${ctx.method} ${ctx.path}.`);
  });
  const root = new Router<AppState>();
  for (const router of routers) root.use(router.routes());
  app.use(root.routes());
  app.use(root.allowedMethods());
  return app;
}

/** Every router of the control plane (the security test checks it covers each route they register). */
export function apiRouters(services: Services): Router<AppState>[] {
  return [
    healthRoutes(services, 'api'),
    accountsRoutes(services),
    keysRoutes(services),
    profileRoutes(services),
    usageRoutes(services),
    providerRoutes(services),
    billingRoutes(services),
    catalogRoutes(services),
    listingsRoutes(services),
    marketRoutes(services),
    homePages(services),
    storefrontRoutes(services),
    pagesRoutes(services),
    signupPages(services),
    termsPages(services),
    embeddedPaymentsPages(services),
    approvalPages(services),
    demandConfirmPages(services),
    consoleRoutes(services),
    oauthRoutes(services),
    openApiRoutes(services.config.urls),
  ];
}

export function createApiApp(services: Services): Koa<AppState> {
  return createKoaApp(services, apiRouters(services));
}
