/**
 * A listing's upstream credential: the provider sets it (sealed at rest by SecretBox, never shown again), the smoke
 * test and the gateway open it. Changing it is announced to the gateways once it commits.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { IApi } from '../../db/entities/index.js';
import type { Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import { assertNotArchived, ownApi } from '../db/owned-api.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { GatewayEvents } from '../spend/gateway-events.js';
import type { UpstreamCredential } from '../upstream/credentials.js';
import { iso } from './listing-views.js';
import type { CredentialsBody, CredentialView } from './providers.schemas.js';

export class ProviderCredentialsService {
  constructor(private readonly deps: { orm: MikroORM; clock: Clock; secrets: SecretBox; events: GatewayEvents }) {}

  async setCredentials(principal: Principal, apiId: string, body: CredentialsBody): Promise<CredentialView> {
    const em = this.deps.orm.em.fork();
    const api = await ownApi(em, principal, apiId);
    assertNotArchived(api);
    api.credentialCiphertext = this.deps.secrets.seal(body.secret);
    api.injection = body.injection;
    api.injectionName = body.injection === 'header' || body.injection === 'query' ? body.injection_name! : null;
    api.credentialUpdatedAt = this.deps.clock.now();
    await em.flush();
    await this.deps.events.listingChanged(api.slug);
    return {
      set: true,
      injection: api.injection,
      injection_name: api.injectionName ?? null,
      updated_at: iso(api.credentialUpdatedAt),
    };
  }

  /** The decrypted credential (server side only: the smoke test and the gateway). */
  async credentialOf(em: EntityManager, api: IApi): Promise<UpstreamCredential | null> {
    return (await this.credentialsOf(em, [api])).get(api.id) ?? null;
  }

  /** The decrypted credentials of several listings in one read (the gateway's catalog refresh), by listing id. */
  async credentialsOf(em: EntityManager, apis: readonly IApi[]): Promise<Map<string, UpstreamCredential | null>> {
    const out = new Map<string, UpstreamCredential | null>();
    const injected = apis.filter((a) => a.injection);
    for (const api of apis) out.set(api.id, null);
    if (injected.length === 0) return out;
    const rows = await em.execute<{ id: string; credential_ciphertext: string | null }[]>(
      `select id, credential_ciphertext from apis where id in (${injected.map(() => '?').join(',')})`,
      injected.map((a) => a.id),
    );
    const sealed = new Map(rows.map((r) => [r.id, r.credential_ciphertext]));
    for (const api of injected) {
      const ciphertext = sealed.get(api.id);
      if (!ciphertext) continue;
      out.set(api.id, {
        secret: this.deps.secrets.open(ciphertext),
        injection: api.injection!,
        injectionName: api.injectionName ?? null,
      });
    }
    return out;
  }
}
