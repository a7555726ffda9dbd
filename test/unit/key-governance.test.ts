import { describe, expect, it } from 'vitest';
import {
  ancestorsOf,
  childGovernance,
  clampDescendants,
  descendantsOf,
  isUncappedRoot,
  keyMayActOn,
  loosenedFields,
  type GovKey,
} from '../../core/keys/key-governance.js';

const key = (id: string, parentKeyId: string | null, g: Partial<GovKey> = {}): GovKey => ({
  id,
  parentKeyId,
  budget_cents: null,
  per_call_max_cents: null,
  daily_cap_cents: null,
  approval_mode: false,
  ...g,
});

//   root ─┬─ a (budget 100) ── a1 ── a2
//         └─ b (budget 100)
const tree = new Map(
  [
    key('root', null),
    key('a', 'root', { budget_cents: 100 }),
    key('a1', 'a', { budget_cents: 80 }),
    key('a2', 'a1', { budget_cents: 80, per_call_max_cents: 5 }),
    key('b', 'root', { budget_cents: 100 }),
  ].map((k) => [k.id, k]),
);

describe('key governance rules', () => {
  it('names the loosened fields: a raised or removed cap, approval mode off; tightening is none', () => {
    const current = { budget_cents: 100, per_call_max_cents: null, daily_cap_cents: 50, approval_mode: true };
    expect(loosenedFields(current, { budget_cents: 99, daily_cap_cents: 0, per_call_max_cents: 7 })).toEqual([]);
    expect(loosenedFields(current, { budget_cents: 100, approval_mode: true })).toEqual([]);
    expect(loosenedFields(current, { budget_cents: 101 })).toEqual(['budget_cents']);
    expect(loosenedFields(current, { budget_cents: null, daily_cap_cents: null, approval_mode: false })).toEqual([
      'budget_cents',
      'daily_cap_cents',
      'approval_mode',
    ]);
    expect(loosenedFields(current, { per_call_max_cents: null })).toEqual([]); // it had none
  });

  it('fills a child’s caps from its parent, inherits approval mode, and names what would be looser', () => {
    const parent = { budget_cents: 400, per_call_max_cents: null, daily_cap_cents: 100, approval_mode: true };
    expect(childGovernance(parent, {})).toEqual({ governance: parent, violations: [] });
    expect(childGovernance(parent, { budget_cents: 10, per_call_max_cents: 3 })).toEqual({
      governance: { budget_cents: 10, per_call_max_cents: 3, daily_cap_cents: 100, approval_mode: true },
      violations: [],
    });
    expect(
      childGovernance(parent, { budget_cents: null, daily_cap_cents: 101, approval_mode: false }).violations,
    ).toEqual(['budget_cents', 'daily_cap_cents', 'approval_mode']);
  });

  it('walks the chain both ways', () => {
    expect(ancestorsOf(tree, 'a2').map((k) => k.id)).toEqual(['a1', 'a', 'root']);
    expect(ancestorsOf(tree, 'root')).toEqual([]);
    expect(descendantsOf(tree, 'root').map((k) => k.id)).toEqual(['a', 'b', 'a1', 'a2']);
    expect(descendantsOf(tree, 'a1').map((k) => k.id)).toEqual(['a2']);
  });

  it('a key acts on itself and its descendants; an uncapped root on any key', () => {
    const a = tree.get('a')!;
    expect(['a', 'a1', 'a2'].map((t) => keyMayActOn(tree, a, t))).toEqual([true, true, true]);
    expect(['b', 'root'].map((t) => keyMayActOn(tree, a, t))).toEqual([false, false]);
    expect(keyMayActOn(tree, tree.get('a1')!, 'a')).toBe(false);
    expect(isUncappedRoot(tree.get('root')!)).toBe(true);
    expect(isUncappedRoot(key('capped-root', null, { daily_cap_cents: 1 }))).toBe(false);
    expect(isUncappedRoot(key('approval-root', null, { approval_mode: true }))).toBe(false);
    expect(isUncappedRoot(tree.get('a')!)).toBe(false);
    expect(keyMayActOn(tree, tree.get('root')!, 'b')).toBe(true);
  });

  it('tightening a key clamps its descendants down the chain, and only those that were looser', () => {
    const tightened = { ...tree.get('a')!, budget_cents: 50, per_call_max_cents: 4, approval_mode: true };
    const changed = clampDescendants(new Map(tree).set('a', tightened), tightened);
    expect(changed.map((c) => [c.key.id, c.governance])).toEqual([
      ['a1', { budget_cents: 50, per_call_max_cents: 4, daily_cap_cents: null, approval_mode: true }],
      ['a2', { budget_cents: 50, per_call_max_cents: 4, daily_cap_cents: null, approval_mode: true }],
    ]);
    const loosened = { ...tree.get('a')!, budget_cents: null };
    expect(clampDescendants(new Map(tree).set('a', loosened), loosened)).toEqual([]);
  });
});
