/** Parsing of `Authorization: Bearer …` into a recognised credential shape (no lookup here). */
import { UnauthenticatedError } from '../errors.js';

export const API_KEY_PREFIX = 'svc_live_';
export const API_KEY_RANDOM_LENGTH = 24;
export const SESSION_PREFIX = 'sess_';

const API_KEY_RE = /^svc_live_[0-9A-Za-z]{24}$/;
const SESSION_RE = /^sess_[0-9A-Za-z_-]{22,128}$/;

export type BearerCredential = { type: 'api_key'; token: string } | { type: 'session'; token: string };

/**
 * Returns the credential carried by an Authorization header value. Missing or malformed headers throw 401
 * `unauthenticated`, with a message that says which of the two it was.
 */
export function parseBearer(header: string | undefined): BearerCredential {
  if (!header) throw new UnauthenticatedError('Missing Authorization header; send "Authorization: Bearer <key>".');
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match) throw new UnauthenticatedError('Malformed Authorization header; expected "Bearer <token>".');
  const token = match[1]!;
  if (API_KEY_RE.test(token)) return { type: 'api_key', token };
  if (SESSION_RE.test(token)) return { type: 'session', token };
  throw new UnauthenticatedError('Malformed bearer token; expected an API key (svc_live_…) or a session token.');
}

export function isApiKeyFormat(token: string): boolean {
  return API_KEY_RE.test(token);
}
