/**
 * What a person's approval of an agent creates (spec, Authentication rule 7): a full-scope root key of the person's
 * org, named after the client, with the money caps the person chose. Its plaintext is never shown to anyone: the
 * OAuth tokens act as the key, and the person sees and revokes it in GET /v1/keys like any other key.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Org } from '../../db/entities/index.js';
import { ALL_SCOPES } from '../auth/scopes.js';
import { ConflictError, ForbiddenError } from '../errors.js';
import { lockOrg } from '../db/sql.js';
import { MAX_ACTIVE_KEYS_PER_ORG } from '../keys/key-admin.service.js';
import { Cents } from '../money/cents.js';
import type { KeysService } from '../keys/keys.service.js';
import { ApiKey } from '../../db/entities/index.js';

/** The caps a person sets on the consent page. null = no cap. */
export const OAuthKeyCaps = z
  .object({
    budget_cents: Cents.nullable(),
    daily_cap_cents: Cents.nullable(),
    per_call_max_cents: Cents.nullable(),
    approval_mode: z.boolean(),
  })
  .strict();
export type OAuthKeyCaps = z.infer<typeof OAuthKeyCaps>;

/** What the consent page proposes: small enough that a runaway agent cannot do much harm. */
export const DEFAULT_OAUTH_CAPS: OAuthKeyCaps = {
  budget_cents: 1_000,
  daily_cap_cents: 500,
  per_call_max_cents: 100,
  approval_mode: false,
};

export function oauthKeyName(clientName: string): string {
  return `OAuth: ${clientName}`.slice(0, 100);
}

export async function mintOAuthKey(
  deps: { orm: MikroORM; keys: KeysService },
  input: { orgId: string; clientName: string; caps: OAuthKeyCaps },
): Promise<{ keyId: string }> {
  return deps.orm.em.fork().transactional(async (tem) => {
    await lockOrg(tem, input.orgId);
    const org = await tem.findOneOrFail(Org, input.orgId, { fields: ['suspended'] });
    if (org.suspended) throw new ForbiddenError('This organization is suspended and cannot create keys.');
    if ((await tem.count(ApiKey, { org: input.orgId, revokedAt: null })) >= MAX_ACTIVE_KEYS_PER_ORG) {
      throw new ConflictError(
        `An organization can hold at most ${MAX_ACTIVE_KEYS_PER_ORG} active keys; revoke one in GET /v1/keys first.`,
      );
    }
    const { key } = deps.keys.create(tem, {
      orgId: input.orgId,
      name: oauthKeyName(input.clientName),
      scopes: ALL_SCOPES,
      source: 'oauth',
      budgetCents: input.caps.budget_cents,
      dailyCapCents: input.caps.daily_cap_cents,
      perCallMaxCents: input.caps.per_call_max_cents,
    });
    key.approvalMode = input.caps.approval_mode;
    await tem.flush();
    return { keyId: key.id };
  });
}
