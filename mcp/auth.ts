/**
 * Who is calling /mcp: a bearer API key, or an OAuth access token our authorization server issued for this resource
 * (it acts as the key a person minted when approving the client). Every request authenticates again (the keys
 * service's cache is invalidated over pub/sub, so a revoked key answers 401 at once). A 401 carries WWW-Authenticate
 * with `resource_metadata` and `scope`, so clients can discover how to authorise.
 */
import type { ParameterizedContext } from 'koa';
import type { AppState } from '../api/context.js';
import { isApiKeyFormat, parseBearer } from '../core/auth/bearer.js';
import { SCOPES } from '../core/auth/scopes.js';
import { AppError, UnauthenticatedError } from '../core/errors.js';
import { OAuthAccessTokens } from '../core/oauth/access-tokens.js';
import type { Services } from '../platform/services.js';
import type { KeyPrincipal } from './sessions.js';

/** An opaque OAuth access token (oidc-provider's: base64url), as opposed to an API key or a session token. */
const OAUTH_TOKEN_RE = /^Bearer[ ]+([A-Za-z0-9_-]{32,512})\s*$/i;

export type McpAuthenticator = (ctx: ParameterizedContext<AppState>, sessionId?: string) => Promise<KeyPrincipal>;

export function mcpAuthenticator(
  services: Services,
  urls: { resource: string; metadata: string },
  /** Told when a request naming a session presented a credential that no longer authenticates. */
  afterUnauthenticated: (sessionId: string) => Promise<void>,
): McpAuthenticator {
  const oauthTokens = new OAuthAccessTokens(services.orm, urls.resource); // tokens for this resource only
  const challenge = `Bearer error="invalid_token", resource_metadata="${urls.metadata}", scope="${SCOPES.join(' ')}"`;

  const verify = async (header: string | undefined, presented: (token: string) => void): Promise<KeyPrincipal> => {
    const oauthToken = OAUTH_TOKEN_RE.exec(header ?? '')?.[1];
    if (oauthToken && !isApiKeyFormat(oauthToken)) {
      presented(oauthToken);
      return (await oauthTokens.verify(oauthToken)).principal;
    }
    const credential = parseBearer(header);
    if (credential.type !== 'api_key') {
      throw new UnauthenticatedError('The agent-tool server accepts API keys and OAuth access tokens.');
    }
    presented(credential.token);
    const { principal } = await services.keys.authenticate(credential.token);
    if (principal.type !== 'api_key') throw new UnauthenticatedError('The agent-tool server accepts API keys.');
    return principal;
  };

  return async (ctx, sessionId) => {
    let token: string | undefined;
    try {
      return await verify(ctx.get('authorization') || undefined, (t) => (token = t));
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 401) throw err;
      if (sessionId && token) await afterUnauthenticated(sessionId);
      throw new UnauthenticatedError(err.message, { headers: { 'WWW-Authenticate': challenge } });
    }
  };
}
