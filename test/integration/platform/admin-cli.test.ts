// The operators' CLI against a real database: audited ledger rows, suspension flags, and the books check. Every
// org-taking command names the org by id, profile slug or owner email (issue 31, section 6).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { ROOT } from '../../helpers/env.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

const run = promisify(execFile);

describe('npm run admin', () => {
  let stack: TestStack;
  let orgId: string;

  beforeAll(async () => {
    stack = await createTestStack();
    orgId = (await stack.services.accounts.register({ ip: '10.9.0.1' })).org_id;
  });
  afterAll(async () => {
    // Every money test file ends with the books consistent (each org's cached balance = its ledger sum).
    expect(await stack.services.ledger.findDrift()).toEqual([]);
    await stack.close();
  });

  const admin = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run('npx', ['tsx', 'scripts/admin.ts', ...args], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: stack.db.url, LOG_LEVEL: 'silent' },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  it('grants credits as an audited ledger row, once per idempotency key', async () => {
    const res = await admin(
      'grant-credits',
      orgId,
      '250',
      '--reason',
      'support goodwill',
      '--operator',
      'alice',
      '--key',
      'ticket-42',
    );
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ ok: true, balance_after_cents: 250, replayed: false });
    const again = await admin('grant-credits', orgId, '250', '--reason', 'support goodwill', '--key', 'ticket-42');
    expect(JSON.parse(again.stdout)).toMatchObject({ replayed: true, balance_after_cents: 250 });
    const rows = await sql(
      stack.db.url,
      'select kind, amount_cents, reference, memo from ledger_entries where org_id = $1',
      [orgId],
    );
    expect(rows).toEqual([{ kind: 'grant', amount_cents: '250', reference: 'admin:alice', memo: 'support goodwill' }]);
    const negative = await admin('grant-credits', orgId, '-50', '--reason', 'correction', '--operator', 'alice');
    expect(JSON.parse(negative.stdout).balance_after_cents).toBe(200);
  });

  it('suspends and unsuspends with the reason recorded', async () => {
    expect((await admin('suspend', orgId, '--reason', 'chargeback', '--operator', 'bob')).code).toBe(0);
    expect((await sql(stack.db.url, 'select suspended, suspended_reason from orgs where id = $1', [orgId]))[0]).toEqual(
      { suspended: true, suspended_reason: 'operator: chargeback' },
    );
    expect((await admin('unsuspend', orgId)).code).toBe(0);
    expect((await sql(stack.db.url, 'select suspended, suspended_reason from orgs where id = $1', [orgId]))[0]).toEqual(
      { suspended: false, suspended_reason: null },
    );
  });

  it("sets and resets a card-billed org's credit limit", async () => {
    const set = await admin('set-credit-limit', orgId, '25000', '--reason', 'trusted customer', '--operator', 'ops');
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ ok: true, org_id: orgId, credit_limit_cents: 25000, default: false });
    expect(set.stderr).toContain('trusted customer');
    const [row] = await sql(stack.db.url, 'select credit_limit_cents from orgs where id = $1', [orgId]);
    expect(row).toEqual({ credit_limit_cents: '25000' });
    const reset = await admin('set-credit-limit', orgId, 'default', '--reason', 'review ended');
    expect(JSON.parse(reset.stdout)).toMatchObject({ credit_limit_cents: 10000, default: true });
    const [after] = await sql(stack.db.url, 'select credit_limit_cents from orgs where id = $1', [orgId]);
    expect(after).toEqual({ credit_limit_cents: null });
    for (const bad of [
      ['set-credit-limit', orgId, '-5', '--reason', 'x'],
      ['set-credit-limit', orgId, '10'],
    ]) {
      expect((await admin(...bad)).code, bad.join(' ')).toBe(2);
    }
  });

  describe('an org named by profile slug or owner email', () => {
    let owner: Person;
    let member: Person;
    const slug = `acme-${Date.now()}`;
    const org = async () =>
      (
        await sql(stack.db.url, 'select suspended, suspended_reason, credit_limit_cents from orgs where id = $1', [
          owner.orgId,
        ])
      )[0];
    const ledgerRows = async () =>
      (
        await sql<{ n: string }>(stack.db.url, 'select count(*) as n from ledger_entries where org_id = $1', [
          owner.orgId,
        ])
      )[0]?.n;

    beforeAll(async () => {
      owner = await createPerson(stack.services);
      member = await createPerson(stack.services, { orgId: owner.orgId, role: 'member' });
      await sql(
        stack.db.url,
        'insert into profiles (org_id, slug, created_at, updated_at) values ($1, $2, now(), now())',
        [owner.orgId, slug],
      );
    });

    it('every org-taking command accepts them', { timeout: 180_000 }, async () => {
      const byEmail = await admin('grant-credits', owner.email.toUpperCase(), '40', '--reason', 'by email');
      expect(byEmail.code, byEmail.stderr).toBe(0);
      expect(JSON.parse(byEmail.stdout)).toMatchObject({ ok: true, org_id: owner.orgId, balance_after_cents: 40 });
      const bySlug = await admin('grant-credits', slug, '-2', '--reason', 'by slug');
      expect(JSON.parse(bySlug.stdout)).toMatchObject({ org_id: owner.orgId, balance_after_cents: 38 });

      expect(JSON.parse((await admin('suspend', slug, '--reason', 'abuse')).stdout)).toEqual({
        ok: true,
        org_id: owner.orgId,
        suspended: true,
      });
      expect(await org()).toMatchObject({ suspended: true, suspended_reason: 'operator: abuse' });
      expect((await admin('unsuspend', owner.email)).code).toBe(0);
      expect(await org()).toMatchObject({ suspended: false, suspended_reason: null });
      const limit = await admin('set-credit-limit', slug, '500', '--reason', 'trusted');
      expect(JSON.parse(limit.stdout)).toMatchObject({ org_id: owner.orgId, credit_limit_cents: 500 });
      expect(await org()).toMatchObject({ credit_limit_cents: '500' });
      expect(await ledgerRows()).toBe('2');
    });

    it(
      'a name matching no org, or only a non-owner, fails with exit 1, says why and changes nothing',
      {
        timeout: 180_000,
      },
      async () => {
        const before = await org();
        for (const [args, message] of [
          [
            ['suspend', 'no-such-slug', '--reason', 'x'],
            'no organization matches "no-such-slug" by id, profile slug or owner email',
          ],
          [
            ['grant-credits', 'nobody@example.com', '10', '--reason', 'x'],
            'no organization matches "nobody@example.com"',
          ],
          [['set-credit-limit', 'org_missing', '10', '--reason', 'x'], 'no organization matches "org_missing"'],
          [
            ['suspend', member.email, '--reason', 'x'],
            `${member.email} is a user of ${owner.orgId} with the role member, not an owner`,
          ],
        ] as const) {
          const res = await admin(...args);
          expect(res.code, args.join(' ')).toBe(1);
          expect(res.stderr).toContain(`error: ${message}`);
          expect(res.stderr).not.toContain('usage: npm run admin');
        }
        expect(await org()).toEqual(before);
        expect(await ledgerRows()).toBe('2');
      },
    );
  });

  it('reconciles: exit 0 on consistent books, 1 with the drift listed when they are not', async () => {
    const ok = await admin('reconcile');
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout).ok).toBe(true);
    await sql(stack.db.url, 'update orgs set credit_cents = credit_cents + 1 where id = $1', [orgId]);
    const bad = await admin('reconcile');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).drift).toEqual([{ orgId, creditCents: 201, ledgerSumCents: 200 }]);
    await sql(stack.db.url, 'update orgs set credit_cents = credit_cents - 1 where id = $1', [orgId]);
  });

  it('refuses bad usage with exit code 2 and changes nothing', async () => {
    for (const args of [
      [],
      ['frobnicate'],
      ['grant-credits', orgId, '1.5', '--reason', 'x'],
      ['grant-credits', orgId, '10'],
      ['suspend', orgId],
    ]) {
      const res = await admin(...args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr).toContain('usage: npm run admin');
    }
    expect((await admin('grant-credits', 'org_missing', '10', '--reason', 'x')).code).toBe(1);
    const [row] = await sql<{ n: string }>(stack.db.url, 'select count(*) as n from ledger_entries where org_id = $1', [
      orgId,
    ]);
    expect(row?.n).toBe('2');
  });
});
