/**
 * The documented operations of api/oauth/oauth.routes.ts (kept beside it: that file is near its size limit): the
 * authorization server's protocol endpoints with their RFC shapes (not the envelope), their CORS preflights, and the
 * person's sign-in and consent pages. api/openapi/operations.ts gathers them.
 */
import { z } from 'zod';
import {
  documented,
  empty,
  html,
  pageOperation,
  rawJson,
  redirect,
  type HttpMethod,
  type Operation,
} from '../openapi/operation.js';

/** OAuth 2.1 authorization server (RFC 6749, 7591, 7009, 8414): its own JSON shapes, not the envelope. */
const OAuthJson = z.looseObject({}).describe('An OAuth protocol document (RFC shapes; errors use `error`).');
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
  const json = rawJson(OAuthJson, 'The protocol answer.');
  return documented({ ...base, ...body, success: { 200: json, 201: json } });
}

export const OAUTH_OPERATIONS: Operation[] = [
  oauthOperation(
    'get',
    '/.well-known/openid-configuration',
    'getOpenIdConfiguration',
    'Authorization server metadata (OIDC)',
  ),
  oauthOperation(
    'get',
    '/.well-known/oauth-authorization-server',
    'getOauthMetadata',
    'Authorization server metadata (RFC 8414)',
  ),
  oauthOperation('get', '/oauth/authorize', 'oauthAuthorize', 'Authorization endpoint'),
  oauthOperation('post', '/oauth/authorize', 'oauthAuthorizePost', 'Authorization endpoint (form post)'),
  oauthOperation(
    'get',
    '/oauth/authorize/{uid}',
    'oauthAuthorizeResume',
    'Resume authorization after the sign-in step',
  ),
  oauthOperation('post', '/oauth/token', 'oauthToken', 'Token endpoint'),
  oauthOperation('post', '/oauth/register', 'oauthRegister', 'Dynamic client registration (RFC 7591)'),
  oauthOperation('post', '/oauth/revoke', 'oauthRevoke', 'Token revocation (RFC 7009)'),
  oauthOperation('get', '/oauth/jwks', 'oauthJwks', 'Signing keys'),
  oauthOperation('options', '/.well-known/openid-configuration', 'optionsOpenIdConfiguration', 'CORS preflight'),
  oauthOperation('options', '/.well-known/oauth-authorization-server', 'optionsOauthMetadata', 'CORS preflight'),
  oauthOperation('options', '/oauth/token', 'optionsOauthToken', 'CORS preflight'),
  oauthOperation('options', '/oauth/register', 'optionsOauthRegister', 'CORS preflight'),
  oauthOperation('options', '/oauth/revoke', 'optionsOauthRevoke', 'CORS preflight'),
  oauthOperation('options', '/oauth/jwks', 'optionsOauthJwks', 'CORS preflight'),
];

/** The person's step of the authorize flow (server-rendered pages). */
export const OAUTH_PAGE_OPERATIONS: Operation[] = [
  pageOperation('get', '/oauth/interaction/{uid}', 'getOauthInteraction', 'OAuth sign-in step (a person)'),
  pageOperation('post', '/oauth/interaction/{uid}/email', 'postOauthInteractionEmail', 'OAuth sign-in: mail a code'),
  pageOperation('post', '/oauth/interaction/{uid}/code', 'postOauthInteractionCode', 'OAuth sign-in: check the code'),
  pageOperation('post', '/oauth/interaction/{uid}/consent', 'postOauthInteractionConsent', 'OAuth consent'),
];
