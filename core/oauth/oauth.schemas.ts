/**
 * The OAuth protocol answers of our authorization server (oidc-provider speaks them; the OpenAPI document describes
 * them here). Each is an RFC shape, not the envelope; metadata and registrations are extensible by their RFCs, so
 * the known members are typed and further members are allowed.
 */
import { z } from 'zod';

const Strings = z.array(z.string());

/** RFC 8414 §2 (and OpenID Connect Discovery): what the server supports and where its endpoints are. */
export const OAuthMetadata = z
  .looseObject({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    registration_endpoint: z.string().optional(),
    revocation_endpoint: z.string().optional(),
    jwks_uri: z.string().optional(),
    scopes_supported: Strings.optional(),
    response_types_supported: Strings,
    grant_types_supported: Strings.optional(),
    code_challenge_methods_supported: Strings.optional(),
    token_endpoint_auth_methods_supported: Strings.optional(),
    authorization_response_iss_parameter_supported: z.boolean().optional(),
    client_id_metadata_document_supported: z.boolean().optional(),
  })
  .describe('Authorization server metadata (RFC 8414; further members as that RFC allows).');

/** RFC 6749 §5.1: a successful token answer. */
export const TokenResponse = z
  .looseObject({
    access_token: z.string(),
    token_type: z.string().describe('`Bearer`.'),
    expires_in: z.number().int().optional(),
    refresh_token: z.string().optional(),
    scope: z.string().optional().describe('The granted scopes, space-separated.'),
  })
  .describe('Access token answer (RFC 6749 §5.1).');

/** RFC 7591 §3.2.1: the registered client (its metadata echoed, with the issued identifier). */
export const ClientRegistration = z
  .looseObject({
    client_id: z.string(),
    client_id_issued_at: z.number().int().optional(),
    client_secret: z.string().optional(),
    client_secret_expires_at: z.number().int().optional(),
    client_name: z.string().optional(),
    redirect_uris: Strings,
    grant_types: Strings.optional(),
    response_types: Strings.optional(),
    token_endpoint_auth_method: z.string().optional(),
    application_type: z.string().optional(),
  })
  .describe('Client information (RFC 7591 §3.2.1; the client metadata echoed).');

/** RFC 7517 §5: the server's public signing keys. */
export const JsonWebKeySet = z
  .object({ keys: z.array(z.looseObject({ kty: z.string(), kid: z.string().optional(), use: z.string().optional() })) })
  .describe('JSON Web Key Set (RFC 7517).');

/** RFC 6749 §5.2: an error answer of a protocol endpoint. */
export const OAuthError = z
  .looseObject({ error: z.string(), error_description: z.string().optional() })
  .describe('OAuth protocol error (RFC 6749 §5.2).');
