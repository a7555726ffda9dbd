/**
 * Keys as their owners see them: list (with caps and spend), create (scopes no wider than the caller's), patch caps,
 * revoke. Every change drops the key from every process's auth cache (KeysService.invalidate).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { ApiKey, Org, type IApiKey } from '../../db/entities/index.js';
import type { Principal, Scope } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../errors.js';
import { isId } from '../ids.js';
import { pageInfo, type Page } from '../pagination.js';
import type { ApproveSpendBody, CreateKeyBody, ListKeysQuery, PatchKeyBody } from './keys.schemas.js';
import type { KeysService } from './keys.service.js';

export const MAX_ACTIVE_KEYS_PER_ORG = 100;

export interface KeySummary {
  id: string;
  name: string;
  keyPrefix: string;
  scopes: string[];
  source: string;
  budget_cents: number | null;
  per_call_max_cents: number | null;
  daily_cap_cents: number | null;
  approval_mode: boolean;
  /** Approval mode: spend people have approved so far, and what is left of it (null without approval mode). */
  approved_cents: number;
  remaining_approval_cents: number | null;
  spent_cents: number;
  spent_today_cents: number;
  remaining_budget_cents: number | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface CreatedKey extends KeySummary {
  /** The plaintext key: shown in this response only. */
  api_key: string;
}

export function startOfUtcDay(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
}

export class KeyAdminService {
  constructor(
    private readonly orm: MikroORM,
    private readonly keys: KeysService,
    private readonly clock: Clock,
  ) {}

  private summarize(key: IApiKey, spentToday: number): KeySummary {
    return {
      id: key.id,
      name: key.name,
      keyPrefix: key.keyPrefix,
      scopes: [...key.scopes],
      source: key.source,
      budget_cents: key.budgetCents ?? null,
      per_call_max_cents: key.perCallMaxCents ?? null,
      daily_cap_cents: key.dailyCapCents ?? null,
      approval_mode: key.approvalMode,
      approved_cents: key.approvedCents,
      remaining_approval_cents: key.approvalMode ? Math.max(0, key.approvedCents - key.spentCents) : null,
      spent_cents: key.spentCents,
      spent_today_cents: spentToday,
      remaining_budget_cents: key.budgetCents == null ? null : Math.max(0, key.budgetCents - key.spentCents),
      created_at: key.createdAt.toISOString(),
      last_used_at: key.lastUsedAt?.toISOString() ?? null,
      revoked_at: key.revokedAt?.toISOString() ?? null,
    };
  }

  /** Today's (UTC) successful spend per key, from the usage events. */
  private async spentToday(keyIds: string[]): Promise<Map<string, number>> {
    if (keyIds.length === 0) return new Map();
    const rows = await this.orm.em.fork().execute<{ key_id: string; spent: string }[]>(
      `select key_id, coalesce(sum(cost_cents), 0) as spent from usage_events
        where key_id in (${keyIds.map(() => '?').join(',')}) and outcome = 'success' and created_at >= ?
        group by key_id`,
      [...keyIds, startOfUtcDay(this.clock.now())],
    );
    return new Map(rows.map((r) => [r.key_id, Number(r.spent)]));
  }

  async list(principal: Principal, query: ListKeysQuery): Promise<Page<KeySummary>> {
    const where = { org: principal.orgId, ...(query.include_revoked ? {} : { revokedAt: null }) };
    const [keys, total] = await this.orm.em.fork().findAndCount(ApiKey, where, {
      orderBy: { createdAt: 'asc', id: 'asc' },
      limit: query.limit,
      offset: query.offset,
    });
    const spent = await this.spentToday(keys.map((k) => k.id));
    return {
      items: keys.map((k) => this.summarize(k, spent.get(k.id) ?? 0)),
      pagination: pageInfo(query.limit, query.offset, keys.length, total),
    };
  }

  async create(principal: Principal, input: CreateKeyBody): Promise<CreatedKey> {
    const scopes: readonly Scope[] = input.scopes ?? principal.scopes;
    const beyond = scopes.filter((s) => !principal.scopes.includes(s));
    if (beyond.length) {
      throw new ForbiddenError(`A key cannot be given scopes its creator lacks: ${beyond.join(', ')}.`, {
        details: { scopes_not_held: beyond },
      });
    }
    return this.orm.em.fork().transactional(async (tem) => {
      const org = await tem.findOneOrFail(Org, principal.orgId);
      if (org.suspended) throw new ForbiddenError('This organization is suspended and cannot create keys.');
      const active = await tem.count(ApiKey, { org: principal.orgId, revokedAt: null });
      if (active >= MAX_ACTIVE_KEYS_PER_ORG) {
        throw new ConflictError(
          `An organization can hold at most ${MAX_ACTIVE_KEYS_PER_ORG} active keys; revoke one first.`,
        );
      }
      const { key, plaintext } = this.keys.create(tem, {
        orgId: principal.orgId,
        name: input.name,
        scopes,
        source: 'api',
        budgetCents: input.budget_cents,
        perCallMaxCents: input.per_call_max_cents,
        dailyCapCents: input.daily_cap_cents,
      });
      key.approvalMode = input.approval_mode ?? false;
      await tem.flush();
      return { ...this.summarize(key, 0), api_key: plaintext };
    });
  }

  /** One key of the caller's org (404 for another org's). */
  async get(principal: Principal, id: string): Promise<KeySummary> {
    const { key } = await this.ownKey(principal, id);
    const spent = await this.spentToday([key.id]);
    return this.summarize(key, spent.get(key.id) ?? 0);
  }

  /** A key of the caller's org, or 404 (another org's key is indistinguishable from a missing one). */
  private async ownKey(principal: Principal, id: string) {
    const em = this.orm.em.fork();
    const key = isId('apiKey', id) ? await em.findOne(ApiKey, { id, org: principal.orgId }) : null;
    if (!key) throw new NotFoundError(`No key ${id}.`);
    return { em, key };
  }

  async patch(principal: Principal, id: string, input: PatchKeyBody): Promise<KeySummary> {
    const { em, key } = await this.ownKey(principal, id);
    if (key.revokedAt) throw new ConflictError('This key is revoked; it cannot be changed.');
    if (input.budget_cents !== undefined) key.budgetCents = input.budget_cents;
    if (input.per_call_max_cents !== undefined) key.perCallMaxCents = input.per_call_max_cents;
    if (input.daily_cap_cents !== undefined) key.dailyCapCents = input.daily_cap_cents;
    if (input.approval_mode !== undefined) {
      // Turning approval on approves nothing yet: spend so far does not count as approved headroom.
      if (input.approval_mode && !key.approvalMode) key.approvedCents = key.spentCents;
      key.approvalMode = input.approval_mode;
    }
    await em.flush();
    await this.keys.invalidate(key.keyHash);
    const spent = await this.spentToday([key.id]);
    return this.summarize(key, spent.get(key.id) ?? 0);
  }

  /**
   * A person (owner or admin, email verified, signed in: never a key, which could approve its own spend) approves
   * `amount_cents` more spend for an approval-mode key.
   */
  async approve(principal: Principal, id: string, input: ApproveSpendBody): Promise<KeySummary> {
    if (principal.type !== 'session') {
      throw new ForbiddenError('Approving spend needs a person signed in (a session), not an API key.', {
        details: { required_credential: 'session' },
      });
    }
    if (principal.role !== 'owner' && principal.role !== 'admin') {
      throw new ForbiddenError('Only an owner or admin of the organization can approve spend.');
    }
    if (!principal.emailVerified) throw new ForbiddenError('Verify your email before approving spend.');
    const { em, key } = await this.ownKey(principal, id);
    if (key.revokedAt) throw new ConflictError('This key is revoked.');
    if (!key.approvalMode) throw new ConflictError('This key is not in approval mode; it needs no approval.');
    await em.execute('update api_keys set approved_cents = approved_cents + ?, updated_at = now() where id = ?', [
      input.amount_cents,
      key.id,
    ]);
    await this.keys.invalidate(key.keyHash);
    await em.refresh(key);
    const spent = await this.spentToday([key.id]);
    return this.summarize(key, spent.get(key.id) ?? 0);
  }

  /** Revoke (idempotent): every process refuses the key once the invalidation lands. */
  async revoke(principal: Principal, id: string): Promise<{ id: string; revoked: true; revoked_at: string }> {
    const { em, key } = await this.ownKey(principal, id);
    if (!key.revokedAt) {
      key.revokedAt = this.clock.now();
      await em.flush();
    }
    await this.keys.invalidate(key.keyHash);
    return { id: key.id, revoked: true, revoked_at: key.revokedAt.toISOString() };
  }
}
