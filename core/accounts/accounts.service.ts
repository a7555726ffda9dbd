/**
 * Accounts: anonymous registration (an ephemeral org and a consumer key, 0 credits) and the caller's own view.
 * Returns wire-shaped views so REST routes and agent tools present the same fields.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Org, User } from '../../db/entities/index.js';
import { CONSUMER_SCOPES, type Principal } from '../auth/scopes.js';
import type { CounterStore } from '../counters/index.js';
import { NotFoundError, RateLimitedError } from '../errors.js';
import { newId } from '../ids.js';
import type { KeysService } from '../keys/keys.service.js';
import type { MeView, RegistrationView } from './accounts.schemas.js';
export type { MeView, RegistrationView } from './accounts.schemas.js';

export interface AccountsDeps {
  orm: MikroORM;
  keys: KeysService;
  counters: CounterStore;
  limits: { registerPerHour: number };
}

const HOUR_MS = 3_600_000;

export class AccountsService {
  constructor(private readonly deps: AccountsDeps) {}

  /** POST /v1/register and the `svc_register` tool. Rate limited per client address. */
  async register(client: { ip: string }): Promise<RegistrationView> {
    const hit = await this.deps.counters.hitWindow(
      `rl:register:ip:${client.ip}`,
      this.deps.limits.registerPerHour,
      HOUR_MS,
    );
    if (!hit.allowed) {
      throw new RateLimitedError(hit.resetMs / 1000, 'Too many registrations from this address; try again later.');
    }
    const em = this.deps.orm.em.fork();
    return em.transactional((tem) => {
      const org = tem.create(Org, { id: newId('org'), kind: 'ephemeral' });
      const { plaintext } = this.deps.keys.create(tem, {
        orgId: org.id,
        name: 'default',
        scopes: CONSUMER_SCOPES,
        source: 'register',
      });
      return Promise.resolve({ org_id: org.id, api_key: plaintext, credit_cents: 0 });
    });
  }

  /** GET /v1/me: the caller's org, its credits and the caller's scopes. */
  async me(principal: Principal): Promise<MeView> {
    const em = this.deps.orm.em.fork();
    const org = await em.findOne(Org, { id: principal.orgId });
    if (!org) throw new NotFoundError('Organization not found.');
    const user = principal.type === 'session' ? await em.findOne(User, { id: principal.userId }) : null;
    return {
      org_id: org.id,
      org: {
        org_id: org.id,
        kind: org.kind,
        name: org.name ?? null,
        billing_mode: org.billingMode,
        suspended: org.suspended,
        created_at: org.createdAt.toISOString(),
      },
      credit_cents: org.creditCents,
      withheld_credit_cents: org.withheldCreditCents,
      scopes: [...principal.scopes],
      user: user
        ? {
            user_id: user.id,
            email: user.email,
            name: user.name ?? null,
            role: user.role,
            email_verified: user.emailVerifiedAt != null,
          }
        : null,
      credential:
        principal.type === 'api_key'
          ? { type: 'api_key', key_id: principal.keyId, key_prefix: principal.keyPrefix }
          : { type: 'session', session_id: principal.sessionId },
    };
  }
}
