/**
 * Keys as their owners see them: list (with caps and spend), create (scopes no wider than the caller's), patch caps,
 * revoke, under the governance rules of key-governance.ts (a key minted by a key is its child; keys tighten, people
 * loosen). Every change drops the key and its descendants from every process's auth cache.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { ApiKey, Org, type IApiKey } from '../../db/entities/index.js';
import type { Principal, Scope } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import { ConflictError, ForbiddenError, NotFoundError, UnauthenticatedError } from '../errors.js';
import { lockOrg } from '../db/sql.js';
import { isId } from '../ids.js';
import { endMcpSessionsOfKeys } from '../sessions/mcp-session-store.js';
import { pageInfo, type Page } from '../pagination.js';
import type {
  ApproveSpendBody,
  CreatedKeyView,
  CreateKeyBody,
  KeySummaryView,
  ListKeysQuery,
  PatchKeyBody,
  RevokedKeyView,
} from './keys.schemas.js';
import {
  ancestorsOf,
  CAP_FIELDS,
  childGovernance,
  clampDescendants,
  descendantsOf,
  isUncappedRoot,
  keyMayActOn,
  looserThanParent,
  loosenedFields,
  MAX_KEY_DEPTH,
  type Governance,
  type GovernanceChange,
  type GovKey,
} from './key-governance.js';
import type { KeysService } from './keys.service.js';

export const MAX_ACTIVE_KEYS_PER_ORG = 100;

/** One key as the routes and tools show it (core/keys/keys.schemas.ts). */
export type KeySummary = KeySummaryView;

/** A new key with its plaintext, shown in this response only. */
export type CreatedKey = CreatedKeyView;

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
      parent_key_id: key.parentKey?.id ?? null,
      ...keyGovernance(key),
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

  /**
   * Today's (UTC) spend per key as its daily cap counts it: the key's own calls and those of every key below it,
   * booked on the key's row with the call (`day_spent_cents` of its latest day, `spent_day`), like `spent_cents` for
   * the budget.
   */
  private async spentToday(keyIds: string[]): Promise<Map<string, number>> {
    if (keyIds.length === 0) return new Map();
    const rows = await this.orm.em.fork().execute<{ key_id: string; spent: string }[]>(
      `select id as key_id, day_spent_cents as spent from api_keys
        where id in (${keyIds.map(() => '?').join(',')}) and spent_day = ?`,
      [...keyIds, this.clock.now().toISOString().slice(0, 10)],
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
      await lockOrg(tem, principal.orgId);
      const org = await tem.findOneOrFail(Org, principal.orgId, { fields: ['suspended'] });
      if (org.suspended) throw new ForbiddenError('This organization is suspended and cannot create keys.');
      const { rows, gov } = await this.orgKeys(tem, principal.orgId);
      if (rows.size >= MAX_ACTIVE_KEYS_PER_ORG) {
        throw new ConflictError(
          `An organization can hold at most ${MAX_ACTIVE_KEYS_PER_ORG} active keys; revoke one first.`,
        );
      }
      const { governance, parentKeyId } = newKeyGovernance(gov, principal, governanceChange(input));
      const { key, plaintext } = this.keys.create(tem, {
        orgId: principal.orgId,
        parentKeyId,
        name: input.name,
        scopes,
        source: 'api',
        budgetCents: governance.budget_cents,
        perCallMaxCents: governance.per_call_max_cents,
        dailyCapCents: governance.daily_cap_cents,
      });
      key.approvalMode = governance.approval_mode;
      await tem.flush();
      return { ...this.summarize(key, 0), api_key: plaintext };
    });
  }

  /** One key of the caller's org (404 for another org's). */
  async get(principal: Principal, id: string): Promise<KeySummary> {
    const em = this.orm.em.fork();
    const key = await findOwn(em, principal, id);
    const spent = await this.spentToday([key.id]);
    return this.summarize(key, spent.get(key.id) ?? 0);
  }

  /** The org's active keys, as entities and as the governance view of its key tree. */
  private async orgKeys(em: EntityManager, orgId: string) {
    const keys = await em.find(ApiKey, { org: orgId, revokedAt: null });
    return {
      rows: new Map(keys.map((k) => [k.id, k])),
      gov: new Map(keys.map((k) => [k.id, govKey(k)])),
    };
  }

  async patch(principal: Principal, id: string, input: PatchKeyBody): Promise<KeySummary> {
    const { key, hashes } = await this.orm.em.fork().transactional(async (tem) => {
      await lockOrg(tem, principal.orgId);
      const target = await findOwn(tem, principal, id);
      if (target.revokedAt) throw new ConflictError('This key is revoked; it cannot be changed.');
      const { rows, gov } = await this.orgKeys(tem, principal.orgId);
      const current = gov.get(target.id)!;
      const change = governanceChange(input);
      const loosened = loosenedFields(current, change);
      if (principal.type === 'api_key') {
        const actor = actingKey(gov, principal);
        if (!keyMayActOn(gov, actor, target.id)) throw notYourKey();
        // Loosening by a key: only an uncapped root, on its own descendants (it could mint them uncapped anyway).
        const ownDescendant = ancestorsOf(gov, target.id).some((a) => a.id === actor.id);
        if (loosened.length && !(isUncappedRoot(actor) && ownDescendant)) {
          throw new ForbiddenError(
            `Loosening a key (${loosened.join(', ')}) needs a person's session (owner or admin); ` +
              'a key may only tighten its caps or turn approval mode on.',
            { details: { loosened, required_credential: 'session' } },
          );
        }
      } else if (loosened.length && principal.role !== 'owner' && principal.role !== 'admin') {
        throw new ForbiddenError(`Loosening a key (${loosened.join(', ')}) needs an owner or admin.`, {
          details: { loosened },
        });
      }
      const next: Governance = { ...governanceOf(current), ...change };
      const parent = current.parentKeyId ? gov.get(current.parentKeyId) : undefined;
      const beyondParent = parent ? looserThanParent(next, parent) : [];
      if (parent && beyondParent.length) {
        throw new ForbiddenError(
          `A child key cannot be looser than its parent (${parent.id}): ${beyondParent.join(', ')}. ` +
            'Loosen the parent first.',
          { details: { looser_than_parent: beyondParent, parent_key_id: parent.id } },
        );
      }
      applyGovernance(target, next);
      const updated: GovKey = { ...current, ...next };
      gov.set(target.id, updated);
      // A child is never looser than its parent: tightening a key tightens its descendants down the chain.
      for (const { key, governance } of clampDescendants(gov, updated)) applyGovernance(rows.get(key.id)!, governance);
      await tem.flush();
      // Every descendant caches its ancestors' budgets: drop them all.
      return { key: target, hashes: treeHashes(rows, gov, target.id) };
    });
    await this.keys.invalidateMany(hashes, principal.orgId);
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
    const em = this.orm.em.fork();
    const key = await findOwn(em, principal, id);
    if (key.revokedAt) throw new ConflictError('This key is revoked.');
    if (!key.approvalMode) throw new ConflictError('This key is not in approval mode; it needs no approval.');
    await em.execute('update api_keys set approved_cents = approved_cents + ?, updated_at = now() where id = ?', [
      input.amount_cents,
      key.id,
    ]);
    await this.keys.invalidate(key.keyHash, principal.orgId);
    await em.refresh(key);
    const spent = await this.spentToday([key.id]);
    return this.summarize(key, spent.get(key.id) ?? 0);
  }

  /**
   * Revoke (idempotent), with every descendant of the key: a child never outlives its parent. Every process refuses
   * them once the invalidations land; their MCP sessions end in the same transaction.
   */
  async revoke(principal: Principal, id: string): Promise<RevokedKeyView> {
    const { key, hashes } = await this.orm.em.fork().transactional(async (tem) => {
      await lockOrg(tem, principal.orgId);
      const target = await findOwn(tem, principal, id);
      const { rows, gov } = await this.orgKeys(tem, principal.orgId);
      if (principal.type === 'api_key') {
        const actor = actingKey(gov, principal);
        const mayAct = target.revokedAt
          ? isUncappedRoot(actor) || (await revokedKeyDescendsFrom(tem, target, actor.id))
          : keyMayActOn(gov, actor, target.id);
        if (!mayAct) throw notYourKey();
      }
      if (target.revokedAt) return { key: target, hashes: [target.keyHash] };
      const now = this.clock.now();
      target.revokedAt = now;
      const descendants = descendantsOf(gov, target.id);
      for (const d of descendants) rows.get(d.id)!.revokedAt = now;
      await tem.flush();
      await endMcpSessionsOfKeys(tem, [target.id, ...descendants.map((d) => d.id)], now);
      return { key: target, hashes: treeHashes(rows, gov, target.id) };
    });
    await this.keys.invalidateMany(hashes, principal.orgId);
    return { id: key.id, revoked: true, revoked_at: key.revokedAt!.toISOString() };
  }
}

type ActingPrincipal = Extract<Principal, { type: 'api_key' }>;

/** The calling key as the tree sees it now (it may have been revoked since its lookup was cached). */
function actingKey(gov: ReadonlyMap<string, GovKey>, principal: ActingPrincipal): GovKey {
  const key = gov.get(principal.keyId);
  if (!key) throw new UnauthenticatedError('Unknown or revoked API key.');
  return key;
}

function notYourKey(): ForbiddenError {
  return new ForbiddenError(
    'A key may change or revoke only itself and the keys it minted (its descendants); ' +
      'other keys of the organization need a person’s session or the org’s uncapped root key.',
    { details: { rule: 'own_keys_only' } },
  );
}

/** A key of the caller's org, in any state, or 404 (another org's key is indistinguishable from a missing one). */
async function findOwn(em: EntityManager, principal: Principal, id: string): Promise<IApiKey> {
  const key = isId('apiKey', id) ? await em.findOne(ApiKey, { id, org: principal.orgId }) : null;
  if (!key) throw new NotFoundError(`No key ${id}.`);
  return key;
}

/** For an already revoked key (no longer in the active tree): is `ancestorId` above it? */
async function revokedKeyDescendsFrom(em: EntityManager, key: IApiKey, ancestorId: string): Promise<boolean> {
  let parentId = key.parentKey?.id;
  for (let i = 0; parentId && i <= MAX_KEY_DEPTH; i++) {
    if (parentId === ancestorId) return true;
    parentId = (await em.findOne(ApiKey, parentId, { fields: ['parentKey'] }))?.parentKey?.id;
  }
  return false;
}

/** A key row's caps and approval mode. */
function keyGovernance(k: IApiKey): Governance {
  return {
    budget_cents: k.budgetCents ?? null,
    per_call_max_cents: k.perCallMaxCents ?? null,
    daily_cap_cents: k.dailyCapCents ?? null,
    approval_mode: k.approvalMode,
  };
}

function govKey(k: IApiKey): GovKey {
  return { id: k.id, parentKeyId: k.parentKey?.id ?? null, ...keyGovernance(k) };
}

function governanceOf(g: Governance): Governance {
  return {
    budget_cents: g.budget_cents,
    per_call_max_cents: g.per_call_max_cents,
    daily_cap_cents: g.daily_cap_cents,
    approval_mode: g.approval_mode,
  };
}

/** The governance fields a create or patch body names (absent fields stay undefined). */
function governanceChange(input: Partial<Record<keyof Governance, number | boolean | null>>): GovernanceChange {
  const change: GovernanceChange = {};
  for (const f of CAP_FIELDS) if (input[f] !== undefined) change[f] = input[f] as number | null;
  if (input.approval_mode !== undefined) change.approval_mode = input.approval_mode as boolean;
  return change;
}

/** A new key's governance: as requested for a person's key; for a key minted by a key, its parent's bounds. */
function newKeyGovernance(
  gov: ReadonlyMap<string, GovKey>,
  principal: Principal,
  requested: GovernanceChange,
): { governance: Governance; parentKeyId: string | null } {
  const governance: Governance = {
    budget_cents: requested.budget_cents ?? null,
    per_call_max_cents: requested.per_call_max_cents ?? null,
    daily_cap_cents: requested.daily_cap_cents ?? null,
    approval_mode: requested.approval_mode ?? false,
  };
  if (principal.type !== 'api_key') return { governance, parentKeyId: null };
  // A key minted by a key is its child: never looser than its parent, and not too deep.
  const parent = actingKey(gov, principal);
  const depth = ancestorsOf(gov, parent.id).length + 1;
  if (depth > MAX_KEY_DEPTH) {
    throw new ForbiddenError(
      `Key chains are at most ${MAX_KEY_DEPTH} keys deep below their root; this key cannot mint keys.`,
      { details: { max_depth: MAX_KEY_DEPTH } },
    );
  }
  const child = childGovernance(parent, requested);
  if (child.violations.length) {
    throw new ForbiddenError(
      `A key minted by a key cannot be looser than its parent (${parent.id}): ${child.violations.join(', ')}. ` +
        'Leave the field out to take the parent’s value, or ask a person (owner or admin) to create the key.',
      { details: { looser_than_parent: child.violations, parent_key_id: parent.id } },
    );
  }
  return { governance: child.governance, parentKeyId: parent.id };
}

function applyGovernance(key: IApiKey, g: Governance): void {
  key.budgetCents = g.budget_cents;
  key.perCallMaxCents = g.per_call_max_cents;
  key.dailyCapCents = g.daily_cap_cents;
  // Turning approval on approves nothing yet: spend so far does not count as approved headroom.
  if (g.approval_mode && !key.approvalMode) key.approvedCents = key.spentCents;
  key.approvalMode = g.approval_mode;
}

function treeHashes(rows: ReadonlyMap<string, IApiKey>, gov: ReadonlyMap<string, GovKey>, id: string): string[] {
  return [id, ...descendantsOf(gov, id).map((d) => d.id)].map((k) => rows.get(k)!.keyHash);
}
