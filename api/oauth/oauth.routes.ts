/**
 * The OAuth 2.1 authorization server on the control plane (core/oauth/oauth-provider.ts) and the person's step
 * (spec, Authentication rule 7). The protocol endpoints are oidc-provider's, served as they are; the metadata is also
 * served at the RFC 8414 address. The authorize step is three server-rendered pages beside the other human pages
 * (api/pages/oauth-signin.page.ts: the email, then the one-time code mailed to it; api/pages/oauth-consent.page.ts:
 * consent naming the client and its redirect host, where the person sets the new key's money caps).
 */
import type { IncomingMessage } from 'node:http';
import Router from '@koa/router';
import type Provider from 'oidc-provider';
import { SCOPES } from '../../core/auth/scopes.js';
import { createOAuthProvider, OAUTH_PATHS } from '../../core/oauth/oauth-provider.js';
import type { Services } from '../../platform/services.js';
import type { AppContext, AppState } from '../context.js';
import { oauthConsentPage } from '../pages/oauth-consent.page.js';
import { oauthSignInPages } from '../pages/oauth-signin.page.js';

type Delegate = (ctx: AppContext) => Promise<void>;

/** Hand the request to oidc-provider as it is (it writes the response). */
function delegateTo(provider: Provider): Delegate {
  const callback = provider.callback();
  return async (ctx) => {
    // Our JSON body parser already read a JSON body (registration): the library takes it from req.body then.
    if (ctx.request.body !== undefined) (ctx.req as IncomingMessage & { body?: unknown }).body = ctx.request.body;
    ctx.respond = false;
    await callback(ctx.req, ctx.res);
  };
}

/** The protocol endpoints: metadata (at both addresses), authorize, token, registration, revocation, JWKS. */
function protocolRoutes(router: Router<AppState>, delegate: Delegate): void {
  router.get(['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'], async (ctx) => {
    ctx.req.url = '/.well-known/openid-configuration'; // one document, at both addresses (RFC 8414 and OIDC)
    await delegate(ctx);
  });
  router.get(OAUTH_PATHS.authorization, async (ctx) => {
    // A client that names no scope asks for what the approval grants: the tokens act as a full-scope key.
    if (ctx.query.scope === undefined) {
      const url = new URL(ctx.req.url ?? '/', 'http://x');
      url.searchParams.set('scope', SCOPES.join(' '));
      ctx.req.url = url.pathname + url.search;
    }
    await delegate(ctx);
  });
  router.post(OAUTH_PATHS.authorization, delegate);
  router.get(`${OAUTH_PATHS.authorization}/:uid`, delegate); // resume after the person's step
  router.post(OAUTH_PATHS.token, delegate);
  router.post(OAUTH_PATHS.registration, delegate);
  router.post(OAUTH_PATHS.revocation, delegate);
  router.get(OAUTH_PATHS.jwks, delegate);
  // CORS preflights (browser-based clients): the library answers them for its endpoints.
  router.options(
    [
      '/.well-known/openid-configuration',
      '/.well-known/oauth-authorization-server',
      OAUTH_PATHS.token,
      OAUTH_PATHS.registration,
      OAUTH_PATHS.revocation,
      OAUTH_PATHS.jwks,
    ],
    async (ctx) => {
      if (ctx.path === '/.well-known/oauth-authorization-server') ctx.req.url = '/.well-known/openid-configuration';
      await delegate(ctx);
    },
  );
}

export function oauthRoutes(services: Services): Router<AppState> {
  const router = new Router<AppState>();
  const provider = createOAuthProvider({
    orm: services.orm,
    config: services.config,
    guard: services.guard,
    logger: services.logger,
  });
  protocolRoutes(router, delegateTo(provider));
  // The person's step, between authorize and its resume (`/oauth/interaction/:uid…`).
  oauthSignInPages(router, { services, provider });
  oauthConsentPage(router, { services, provider });
  return router;
}
