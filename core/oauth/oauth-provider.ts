/**
 * The OAuth 2.1 authorization server for agents (MCP authorization spec 2025-11-25), built on oidc-provider: the
 * code flow only, PKCE S256 required, Client ID Metadata Documents (fetched through our SSRF guard) with dynamic
 * registration as the fallback, the `resource` parameter required and bound into the grant (the only resource is
 * our MCP endpoint), `iss` in the authorization response, one-hour opaque access tokens and rotating refresh tokens
 * (a reused refresh token revokes the grant), revocation. The grant's account is the API key a person minted when
 * approving the client (api/oauth/): the tokens act as that key, and a revoked key ends them.
 * docs/decisions.md, "OAuth 2.1 for agents (issue 12)".
 */
import { generateKeyPairSync, hkdfSync } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import Provider, { errors, interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { ApiKey } from '../../db/entities/index.js';
import { SCOPES } from '../auth/scopes.js';
import type { Config } from '../config.js';
import { escapeHtml } from '../html.js';
import type { Logger } from '../logger.js';
import type { UpstreamGuard } from '../upstream/upstream-guard.js';
import { applyProxyTrust } from '../../platform/runtime/proxy-trust.js';
import { createOAuthAdapter } from './oauth-adapter.js';

export const ACCESS_TOKEN_TTL_S = 3_600;
export const REFRESH_TOKEN_TTL_S = 30 * 86_400;
export const AUTHORIZATION_CODE_TTL_S = 60;
/** How long a person has for the authorize pages (email, code, consent). */
export const INTERACTION_TTL_S = 30 * 60;
/** A Client ID Metadata Document larger than this is refused. */
const CIMD_MAX_BYTES = 5 * 1024;

/** Lifetimes (seconds) of what the library issues. */
const TOKEN_TTLS = {
  AccessToken: ACCESS_TOKEN_TTL_S,
  AuthorizationCode: AUTHORIZATION_CODE_TTL_S,
  RefreshToken: REFRESH_TOKEN_TTL_S,
  Grant: 365 * 86_400,
  Interaction: INTERACTION_TTL_S,
  Session: INTERACTION_TTL_S,
  IdToken: ACCESS_TOKEN_TTL_S,
};

export const OAUTH_PATHS = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  interaction: '/oauth/interaction',
} as const;

/** Our one protected resource: the agent-tool server's endpoint (the tokens' audience). */
export function mcpResource(config: Pick<Config, 'urls'>): string {
  return `${config.urls.mcp}/mcp`;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A web client's redirect URIs: https, or http on a loopback host (a local tool's callback). */
export function checkRedirectUris(_ctx: unknown, key: string, value: unknown, metadata: Record<string, unknown>): void {
  if (key !== 'redirect_uris' || !Array.isArray(value) || (metadata.application_type ?? 'web') !== 'web') return;
  for (const uri of value) {
    const url = typeof uri === 'string' ? URL.parse(uri) : null;
    if (url?.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
      throw new errors.InvalidClientMetadata(
        'redirect_uris of a web client must use https (http only on localhost, 127.0.0.1 or [::1])',
      );
    }
  }
}

/**
 * Where a Client ID Metadata Document is fetched from: its client_id URL (https, the library checks), except that
 * with UPSTREAM_ALLOW_PRIVATE (development and tests only: the configuration refuses it in production) a document
 * on a loopback host is fetched over plain http, so a local agent or a test can serve one without a certificate.
 */
export function cimdFetchUrl(clientId: string, config: Pick<Config, 'upstreamAllowPrivate'>): string {
  const url = URL.parse(clientId);
  if (!url || !config.upstreamAllowPrivate || url.protocol !== 'https:' || !LOOPBACK_HOSTS.has(url.hostname)) {
    return clientId;
  }
  url.protocol = 'http:';
  return url.href;
}

export interface OAuthServerDeps {
  orm: MikroORM;
  config: Config;
  guard: UpstreamGuard;
  logger: Logger;
}

/**
 * Cookie signing keys derived from SECRETS_KEY (HKDF), so every instance signs alike. The library signs with the first
 * and verifies with any (keygrip), so the keys derived from SECRETS_KEY_PREVIOUS keep in-flight authorizations alive
 * through a key rotation.
 */
export function cookieKeys(config: Pick<Config, 'secretsKey' | 'previousSecretsKeys'>): string[] {
  const secrets = config.secretsKey
    ? [config.secretsKey, ...config.previousSecretsKeys]
    : [Buffer.from('svc-marketplace-development-oauth-cookies')];
  return secrets.map((secret) =>
    Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'oauth cookie keys', 32)).toString('base64url'),
  );
}

export function createOAuthProvider(deps: OAuthServerDeps): Provider {
  const { orm, config, guard } = deps;
  const resource = mcpResource(config);

  // ID tokens are not part of this flow (clients ask for the MCP resource, not `openid`); the library still needs a
  // signing key, so each process makes one.
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const signingKey = { ...privateKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig' };

  const policy = approvalPolicy();

  const configuration: Configuration = {
    adapter: createOAuthAdapter(orm),
    clients: [],
    // Registered clients may name the marketplace scopes (the MCP SDK copies them from the resource's metadata).
    scopes: ['openid', 'offline_access', ...SCOPES],
    async findAccount(_ctx, id) {
      const key = await orm.em.fork().findOne(ApiKey, { id, revokedAt: null }, { fields: ['id'] });
      return key ? { accountId: id, claims: () => ({ sub: id }) } : undefined;
    },
    jwks: { keys: [signingKey] },
    cookies: {
      keys: cookieKeys(config),
      long: { signed: true, sameSite: 'lax' },
      short: { signed: true, sameSite: 'lax' },
    },
    routes: {
      authorization: OAUTH_PATHS.authorization,
      token: OAUTH_PATHS.token,
      registration: OAUTH_PATHS.registration,
      revocation: OAUTH_PATHS.revocation,
      jwks: OAUTH_PATHS.jwks,
    },
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientAuthMethods: ['none'],
    // application_type (OpenID DCR) at registration and in metadata documents: the library holds `native` clients to
    // loopback http, claimed https or a private-use scheme (and lets a loopback redirect use any port, RFC 8252);
    // `web` (the default) is held here to https, or http on a loopback host only (MCP: "localhost or HTTPS").
    extraClientMetadata: { properties: ['redirect_uris'], validator: checkRedirectUris },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    allowOmittingSingleRegisteredRedirectUri: false,
    features: providerFeatures(resource),
    // Outgoing fetches (Client ID Metadata Documents) go through the SSRF guard: checked URL, checked addresses at
    // connect time, bounded time and size, no redirects.
    fetch: cimdFetcher(config, guard),
    interactions: {
      url: (_ctx, interaction) => `${OAUTH_PATHS.interaction}/${interaction.uid}`,
      policy,
    },
    // A browser-based client may call the token and revocation endpoints from its own redirect URIs' origins.
    clientBasedCORS: (_ctx, origin, client) =>
      origin !== 'null' && (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin),
    issueRefreshToken: (_ctx, client) => Promise.resolve(client.grantTypeAllowed('refresh_token')),
    rotateRefreshToken: true,
    expiresWithSession: () => Promise.resolve(false),
    ttl: { ...TOKEN_TTLS },
    renderError,
  };

  const provider = new Provider(config.urls.publicBase, configuration);
  applyProxyTrust(provider, config.trustProxyHops);
  logRefusals(provider, deps.logger);
  return provider;
}

/** The interaction policy: every authorization is a person's fresh approval. */
function approvalPolicy(): ReturnType<typeof interactionPolicy.base> {
  const policy = interactionPolicy.base();
  // Every authorization is a person's fresh approval (email code, then caps): a browser's earlier approval of
  // another client never carries over, because each approval mints its own key.
  policy
    .get('login')!
    .checks.add(
      new interactionPolicy.Check('fresh_approval', 'each authorization is approved by a person', (ctx) =>
        ctx.oidc.result?.login ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT,
      ),
    );
  return policy;
}

/** The library's features: registration, revocation of a client's own tokens, the resource indicator, CIMD. */
function providerFeatures(resource: string): Configuration['features'] {
  return {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    // A client revokes only its own tokens (public clients included); a stranger's token is answered as unknown.
    revocation: {
      enabled: true,
      allowedPolicy: (_ctx, client, token) => Promise.resolve(token.clientId === client.clientId),
    },
    introspection: { enabled: false },
    userinfo: { enabled: false },
    rpInitiatedLogout: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource(_ctx, _client, oneOf) {
        if (oneOf) return Promise.resolve(oneOf);
        throw new errors.InvalidTarget('the resource parameter (RFC 8707) is required');
      },
      useGrantedResource: () => true,
      getResourceServerInfo(_ctx, indicator) {
        if (indicator !== resource) throw new errors.InvalidTarget(`the only resource served is ${resource}`);
        return Promise.resolve({
          scope: SCOPES.join(' '),
          audience: resource,
          accessTokenTTL: ACCESS_TOKEN_TTL_S,
          accessTokenFormat: 'opaque',
        });
      },
    },
    clientIdMetadataDocument: {
      enabled: true,
      ack: 'draft-02',
      cacheDuration: { min: 60, max: 86_400 },
    },
  };
}

/** Fetches a Client ID Metadata Document through the SSRF guard. */
function cimdFetcher(config: Config, guard: UpstreamGuard): Configuration['fetch'] {
  return async (input: string | URL | Request) => {
    const url = cimdFetchUrl(input instanceof Request ? input.url : String(input), config);
    const res = await guard.fetch(url, {
      method: 'GET',
      headers: { accept: 'application/json' },
      maxBytes: CIMD_MAX_BYTES,
      timeoutMs: 5_000,
      maxRedirects: 0,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (typeof value === 'string') headers.set(name, value);
    }
    return new Response(new Uint8Array(res.body), { status: res.status, headers });
  };
}

/** The library's error page: the error's fields, escaped, on a page nothing can frame. */
function renderError(
  ctx: KoaContextWithOIDC,
  out: Parameters<NonNullable<Configuration['renderError']>>[1],
): Promise<void> {
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
  ctx.set('Cache-Control', 'no-store');
  const lines = Object.entries(out)
    .map(([k, v]) => `<p><strong>${escapeHtml(k)}</strong>: ${escapeHtml(String(v))}</p>`)
    .join('');
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorization error</title></head><body><h1>Authorization error</h1>${lines}</body></html>`;
  return Promise.resolve();
}

/** Server errors logged as errors; refused requests (a bad grant, registration, ...) at info. */
function logRefusals(provider: Provider, logger: Logger): void {
  provider.on('server_error', (_ctx, err) => logger.error({ err }, 'oauth server error'));
  const refused = (event: string) => (_ctx: unknown, err: Error & { error_detail?: string }) =>
    logger.info({ event, error: err.message, detail: err.error_detail }, 'oauth request refused');
  provider.on('grant.error', refused('grant.error'));
  provider.on('authorization.error', refused('authorization.error'));
  provider.on('registration_create.error', refused('registration_create.error'));
  provider.on('revocation.error', refused('revocation.error'));
}
