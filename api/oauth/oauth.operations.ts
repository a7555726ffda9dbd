/**
 * The documented operations of api/oauth/oauth.routes.ts (kept beside it: that file is near its size limit): the
 * authorization server's protocol endpoints with their RFC shapes (not the envelope), their CORS preflights, and the
 * person's sign-in and consent pages. api/openapi/operations.ts gathers them.
 */
import { ClientRegistration, JsonWebKeySet, OAuthMetadata, TokenResponse } from '../../core/oauth/oauth.schemas.js';
import {
  documented,
  empty,
  html,
  pageOperation,
  rawJson,
  redirect,
  type HttpMethod,
  type Operation,
  type SuccessBody,
} from '../openapi/operation.js';

/** OAuth 2.1 authorization server (RFC 6749, 7591, 7009, 8414): its own JSON shapes, not the envelope. */
const ANSWERS: Record<string, SuccessBody> = {
  getOpenIdConfiguration: rawJson(OAuthMetadata, 'The metadata.'),
  getOauthMetadata: rawJson(OAuthMetadata, 'The metadata.'),
  oauthToken: rawJson(TokenResponse, 'The tokens.'),
  oauthRegister: rawJson(ClientRegistration, 'The registered client.'),
  oauthRevoke: empty('Revoked (also when the token was unknown: RFC 7009 §2.2).'),
  oauthJwks: rawJson(JsonWebKeySet, 'The keys.', 'application/jwk-set+json'),
};
const CREATED = new Set(['oauthRegister']);
const PROTOCOL_BODY = {
  raw: ['application/x-www-form-urlencoded', 'application/json'],
  description: 'Protocol parameters.',
};

function oauthOperation(method: HttpMethod, path: string, operationId: string, summary: string): Operation {
  const base = { method, path, operationId, summary, tag: 'OAuth' as const, auth: 'none' as const };
  if (method === 'options') return documented({ ...base, success: { 204: empty('CORS headers.') } });
  const body = method === 'post' ? { body: PROTOCOL_BODY } : {};
  if (path.startsWith('/oauth/authorize')) {
    return documented({
      ...base,
      ...body,
      html: true,
      success: { 200: html('A page.'), 302: redirect(), 303: redirect() },
    });
  }
  const answer = ANSWERS[operationId]!;
  return documented({ ...base, ...body, success: CREATED.has(operationId) ? { 201: answer } : { 200: answer } });
}

/** The protocol endpoints: operationId, method, path, summary. */
const PROTOCOL: [string, HttpMethod, string, string][] = [
  ['getOpenIdConfiguration', 'get', '/.well-known/openid-configuration', 'Authorization server metadata (OIDC)'],
  ['getOauthMetadata', 'get', '/.well-known/oauth-authorization-server', 'Authorization server metadata (RFC 8414)'],
  ['oauthAuthorize', 'get', '/oauth/authorize', 'Authorization endpoint'],
  ['oauthAuthorizePost', 'post', '/oauth/authorize', 'Authorization endpoint (form post)'],
  ['oauthAuthorizeResume', 'get', '/oauth/authorize/{uid}', 'Resume authorization after the sign-in step'],
  ['oauthToken', 'post', '/oauth/token', 'Token endpoint'],
  ['oauthRegister', 'post', '/oauth/register', 'Dynamic client registration (RFC 7591)'],
  ['oauthRevoke', 'post', '/oauth/revoke', 'Token revocation (RFC 7009)'],
  ['oauthJwks', 'get', '/oauth/jwks', 'Signing keys'],
];
const PROTOCOL_OPERATIONS = PROTOCOL.map(([id, method, path, summary]) => oauthOperation(method, path, id, summary));

/**
 * Every protocol endpoint but authorize (a browser navigation) answers a CORS preflight (oauth.routes.ts), documented
 * as `options` + its name: getOauthMetadata → optionsOauthMetadata, oauthToken → optionsOauthToken.
 */
const preflight = (op: Operation) =>
  oauthOperation(
    'options',
    op.path,
    `options${op.operationId.replace(/^get/, '').replace(/^o/, 'O')}`,
    'CORS preflight',
  );

export const OAUTH_OPERATIONS: Operation[] = [
  ...PROTOCOL_OPERATIONS,
  ...PROTOCOL_OPERATIONS.filter((op) => !op.path.startsWith('/oauth/authorize')).map(preflight),
];

/** The person's step of the authorize flow (server-rendered pages). */
export const OAUTH_PAGE_OPERATIONS: Operation[] = [
  pageOperation('get', '/oauth/interaction/{uid}', 'getOauthInteraction', 'OAuth sign-in step (a person)'),
  pageOperation('post', '/oauth/interaction/{uid}/email', 'postOauthInteractionEmail', 'OAuth sign-in: mail a code'),
  pageOperation('post', '/oauth/interaction/{uid}/code', 'postOauthInteractionCode', 'OAuth sign-in: check the code'),
  pageOperation('post', '/oauth/interaction/{uid}/consent', 'postOauthInteractionConsent', 'OAuth consent'),
];
