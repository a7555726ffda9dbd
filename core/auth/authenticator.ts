/**
 * Control-plane authentication for the JSON API: `Authorization: Bearer` only, a session (`sess_…`) or an API key
 * (`svc_live_…`). The pages' `svc_session` cookie is not a credential here: a browser sends cookies on cross-site
 * requests too, so accepting it on `/v1/*` would let any site act for a signed-in person. The pages read the cookie
 * themselves (api/pages) and protect their forms with a CSRF token.
 */
import type { KeysService } from '../keys/keys.service.js';
import type { SessionsService } from '../sessions/sessions.service.js';
import { parseBearer } from './bearer.js';
import type { Principal } from './scopes.js';

/** The pages' session cookie (HttpOnly, SameSite=Lax); read by the pages only. */
export const SESSION_COOKIE = 'svc_session';

export class Authenticator {
  constructor(
    private readonly keys: KeysService,
    private readonly sessions: SessionsService,
  ) {}

  async authenticate(input: { authorization?: string }): Promise<Principal> {
    const credential = parseBearer(input.authorization);
    if (credential.type === 'session') return this.sessions.authenticate(credential.token);
    return (await this.keys.authenticate(credential.token)).principal;
  }
}
