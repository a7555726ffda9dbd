/**
 * Control-plane authentication: a session (the `svc_session` cookie of the pages, or `Bearer sess_…`) or an API
 * key (`Bearer svc_live_…`). When a request carries both a session and a key, the session wins (spec: Credentials).
 */
import { UnauthenticatedError } from '../errors.js';
import type { KeysService } from '../keys/keys.service.js';
import type { SessionsService } from '../sessions/sessions.service.js';
import { parseBearer, SESSION_PREFIX } from './bearer.js';
import type { Principal } from './scopes.js';

export const SESSION_COOKIE = 'svc_session';

export class Authenticator {
  constructor(
    private readonly keys: KeysService,
    private readonly sessions: SessionsService,
  ) {}

  async authenticate(input: { authorization?: string; sessionCookie?: string }): Promise<Principal> {
    if (input.sessionCookie?.startsWith(SESSION_PREFIX)) {
      try {
        return await this.sessions.authenticate(input.sessionCookie);
      } catch (err) {
        // A stale cookie must not hide a valid Authorization header.
        if (!(err instanceof UnauthenticatedError) || !input.authorization) throw err;
      }
    }
    const credential = parseBearer(input.authorization);
    if (credential.type === 'session') return this.sessions.authenticate(credential.token);
    return (await this.keys.authenticate(credential.token)).principal;
  }
}
