/**
 * Key governance, as pure rules over one org's active keys (DESIGN.md "Keys and governance"; docs/decisions.md
 * "Key governance and agent-first elevation"):
 * - a key may tighten its own caps and turn approval mode on; loosening (raising or removing a cap, approval mode
 *   off) needs a person's session, owner or admin; the one exception is an uncapped root key loosening its own
 *   descendants (it could mint them uncapped anyway);
 * - a key minted by a key is its child: scopes within the parent's, each cap at or under the parent's (the parent's
 *   cap when the request names none), approval mode on when the parent's is; at most MAX_KEY_DEPTH below its root;
 * - a key acts on itself and its descendants only, unless it is an uncapped root (no parent, no caps, no approval
 *   mode), which governs every key of its org;
 * - a child is never looser than its parent: tightening a key tightens its descendants down the chain.
 */

/** Keys below a root: a root is depth 0, its deepest descendant depth MAX_KEY_DEPTH (a chain of five keys). */
export const MAX_KEY_DEPTH = 4;

export const CAP_FIELDS = ['budget_cents', 'per_call_max_cents', 'daily_cap_cents'] as const;
export type CapField = (typeof CAP_FIELDS)[number];

export interface Governance {
  budget_cents: number | null;
  per_call_max_cents: number | null;
  daily_cap_cents: number | null;
  approval_mode: boolean;
}

export interface GovKey extends Governance {
  id: string;
  parentKeyId: string | null;
}

export type GovernanceChange = Partial<Governance>;

/** A cap value: null is no cap, the loosest. */
const looser = (a: number | null, b: number | null): boolean => b !== null && (a === null || a > b);

/** No parent, no caps, no approval mode: an anonymous org's first key, a signup key, a person's plain key. */
export function isUncappedRoot(key: GovKey): boolean {
  return key.parentKeyId === null && CAP_FIELDS.every((f) => key[f] === null) && !key.approval_mode;
}

/** The fields a change would loosen (raise or remove a cap, turn approval mode off). */
export function loosenedFields(current: Governance, change: GovernanceChange): (CapField | 'approval_mode')[] {
  const out: (CapField | 'approval_mode')[] = [];
  for (const f of CAP_FIELDS) {
    const next = change[f];
    if (next !== undefined && looser(next, current[f])) out.push(f);
  }
  if (change.approval_mode === false && current.approval_mode) out.push('approval_mode');
  return out;
}

/** The fields where `child` is looser than `parent`. */
export function looserThanParent(child: Governance, parent: Governance): (CapField | 'approval_mode')[] {
  const out: (CapField | 'approval_mode')[] = CAP_FIELDS.filter((f) => looser(child[f], parent[f]));
  if (parent.approval_mode && !child.approval_mode) out.push('approval_mode');
  return out;
}

/**
 * A new child's governance: what the request names, the parent's cap where it names none, approval mode on when
 * the parent's is. `violations` lists the requested fields that would be looser than the parent.
 */
export function childGovernance(
  parent: Governance,
  requested: GovernanceChange,
): { governance: Governance; violations: (CapField | 'approval_mode')[] } {
  const governance: Governance = {
    budget_cents: requested.budget_cents !== undefined ? requested.budget_cents : parent.budget_cents,
    per_call_max_cents:
      requested.per_call_max_cents !== undefined ? requested.per_call_max_cents : parent.per_call_max_cents,
    daily_cap_cents: requested.daily_cap_cents !== undefined ? requested.daily_cap_cents : parent.daily_cap_cents,
    approval_mode: requested.approval_mode ?? parent.approval_mode,
  };
  return { governance, violations: looserThanParent(governance, parent) };
}

/** The keys above `id`, nearest parent first (stops at a key missing from the map). */
export function ancestorsOf(keys: ReadonlyMap<string, GovKey>, id: string): GovKey[] {
  const out: GovKey[] = [];
  const seen = new Set([id]);
  let parentId = keys.get(id)?.parentKeyId ?? null;
  while (parentId && !seen.has(parentId)) {
    const parent = keys.get(parentId);
    if (!parent) break;
    out.push(parent);
    seen.add(parentId);
    parentId = parent.parentKeyId;
  }
  return out;
}

/** The keys below `id`, parents before their children (breadth first). */
export function descendantsOf(keys: ReadonlyMap<string, GovKey>, id: string): GovKey[] {
  const children = new Map<string, GovKey[]>();
  for (const k of keys.values()) {
    if (!k.parentKeyId) continue;
    const list = children.get(k.parentKeyId) ?? [];
    list.push(k);
    children.set(k.parentKeyId, list);
  }
  const out: GovKey[] = [];
  const seen = new Set([id]);
  const queue = [id];
  while (queue.length) {
    for (const child of children.get(queue.shift()!) ?? []) {
      if (seen.has(child.id)) continue;
      seen.add(child.id);
      out.push(child);
      queue.push(child.id);
    }
  }
  return out;
}

/** May `actor` (a key) change or revoke `target`? Itself, its descendants, or anything when it is an uncapped root. */
export function keyMayActOn(keys: ReadonlyMap<string, GovKey>, actor: GovKey, targetId: string): boolean {
  if (actor.id === targetId || isUncappedRoot(actor)) return true;
  return ancestorsOf(keys, targetId).some((a) => a.id === actor.id);
}

/**
 * After `root`'s governance changed: each descendant, parents first, made no looser than its (possibly just
 * tightened) parent. Returns the descendants that changed, with their new governance.
 */
export function clampDescendants(
  keys: ReadonlyMap<string, GovKey>,
  root: GovKey,
): { key: GovKey; governance: Governance }[] {
  const current = new Map<string, Governance>([[root.id, root]]);
  const changed: { key: GovKey; governance: Governance }[] = [];
  for (const d of descendantsOf(keys, root.id)) {
    const parent = current.get(d.parentKeyId!)!;
    const next: Governance = {
      budget_cents: looser(d.budget_cents, parent.budget_cents) ? parent.budget_cents : d.budget_cents,
      per_call_max_cents: looser(d.per_call_max_cents, parent.per_call_max_cents)
        ? parent.per_call_max_cents
        : d.per_call_max_cents,
      daily_cap_cents: looser(d.daily_cap_cents, parent.daily_cap_cents) ? parent.daily_cap_cents : d.daily_cap_cents,
      approval_mode: d.approval_mode || parent.approval_mode,
    };
    current.set(d.id, next);
    if (looserThanParent(d, next).length) changed.push({ key: d, governance: next });
  }
  return changed;
}
