/**
 * The agent-tool server's check of an OAuth access token (it never calls the control plane over HTTP): the token's
 * hash is looked up in the authorization server's store; it must be live, be an access token, and name our MCP
 * resource as its audience (a token issued for anything else is refused). It then acts as the key the person minted
 * on approval: that key must still be active, so revoking the key ends its tokens at once, and it acts with the
 * scopes both the token was granted and the key holds (a client that asked for `catalog:read` gets only that).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { ApiKey } from '../../db/entities/index.js';
import type { Principal, Scope } from '../auth/scopes.js';
import { UnauthenticatedError } from '../errors.js';
import { payloadRowId } from './oauth-adapter.js';

export type OAuthKeyPrincipal = Extract<Principal, { type: 'api_key' }>;

export interface VerifiedAccessToken {
  principal: OAuthKeyPrincipal;
  clientId: string;
  grantId: string;
  scopes: string[];
  /** Seconds since the epoch. */
  expiresAt: number;
}

interface StoredAccessToken {
  accountId?: string;
  clientId?: string;
  grantId?: string;
  aud?: string | string[];
  scope?: string;
  exp?: number;
}

export class OAuthAccessTokens {
  constructor(
    private readonly orm: MikroORM,
    /** The audience every accepted token must carry (config MCP_URL + '/mcp'). */
    private readonly audience: string,
  ) {}

  async verify(token: string): Promise<VerifiedAccessToken> {
    const invalid = (why: string) => new UnauthenticatedError(`The access token is ${why}.`);
    if (!token || token.length > 512) throw invalid('not valid');
    const em = this.orm.em.fork();
    const rows = await em.execute<{ payload: StoredAccessToken }[]>(
      `select payload from oauth_payloads
        where id = ? and model = 'AccessToken' and (expires_at is null or expires_at > now())`,
      [payloadRowId('AccessToken', token)],
    );
    const payload = rows[0]?.payload;
    if (!payload?.accountId || !payload.clientId || !payload.grantId) throw invalid('unknown, expired or revoked');
    // The grant must still exist: a revoked family (reuse detection) also ends a token issued in a race with it.
    const grant = await em.execute(`select 1 from oauth_payloads where id = ? and model = 'Grant'`, [
      payloadRowId('Grant', payload.grantId),
    ]);
    if (grant.length === 0) throw invalid('of a revoked grant');
    if (payload.exp !== undefined && payload.exp * 1000 <= Date.now()) throw invalid('expired');
    const audiences = Array.isArray(payload.aud) ? payload.aud : payload.aud ? [payload.aud] : [];
    if (!audiences.includes(this.audience)) throw invalid(`not issued for ${this.audience}`);

    const key = await em.findOne(
      ApiKey,
      { id: payload.accountId, revokedAt: null },
      { fields: ['id', 'org', 'keyPrefix', 'scopes'] },
    );
    if (!key) throw invalid('for a key that was revoked');
    const granted = payload.scope ? payload.scope.split(' ') : [];
    return {
      principal: {
        type: 'api_key',
        orgId: key.org.id,
        keyId: key.id,
        keyPrefix: key.keyPrefix,
        // What the client was granted, and never more than the key holds.
        scopes: (key.scopes as Scope[]).filter((s) => granted.includes(s)),
      },
      clientId: payload.clientId,
      grantId: payload.grantId,
      scopes: granted,
      expiresAt: payload.exp ?? 0,
    };
  }
}
