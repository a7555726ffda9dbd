/**
 * Control-plane authentication for the JSON API: `Authorization: Bearer` only, a session (`sess_…`) or an API key
 * (`svc_live_…`). The pages' `svc_session` cookie is not a credential here: a browser sends cookies on cross-site
 * requests too, so accepting it on `/v1/*` would let any site act for a signed-in person. The pages read the cookie
 * themselves (api/pages) and protect their forms with a CSRF token.
 */
import { parseBearer } from './bearer.js';
import type { Principal } from './scopes.js';

/** The pages' session cookie (HttpOnly, SameSite=Lax); read by the pages only. */
export const SESSION_COOKIE = 'svc_session';

/** What the authenticator asks of the credential services (core/keys, core/sessions); auth sits below both. */
export interface KeyAuthenticator {
  authenticate(token: string): Promise<{ principal: Principal }>;
}
export interface SessionAuthenticator {
  authenticate(token: string): Promise<Principal>;
}

export class Authenticator {
  constructor(
    private readonly keys: KeyAuthenticator,
    private readonly sessions: SessionAuthenticator,
  ) {}

  async authenticate(input: { authorization?: string }): Promise<Principal> {
    const credential = parseBearer(input.authorization);
    if (credential.type === 'session') return this.sessions.authenticate(credential.token);
    return (await this.keys.authenticate(credential.token)).principal;
  }
}
