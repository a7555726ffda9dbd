// Rotating SECRETS_KEY: credentials sealed under key A still open once the services run with SECRETS_KEY=B and
// SECRETS_KEY_PREVIOUS=A; `npm run admin -- rotate-secrets` re-seals them under B (a dry run writes nothing; a value
// under a key nobody configured makes it refuse and name the row), after which B alone opens everything.
import { execFile } from 'node:child_process';
import { createCipheriv, createHmac, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { rotateSecrets, type RotationResult } from '../../../platform/rotate-secrets.js';
import { SecretBox, secretKeyId } from '../../../core/secrets/secret-box.js';
import { Api, Org, User } from '../../../db/entities/index.js';
import { createTestDatabase, sql, type TestDatabase } from '../../helpers/db.js';
import { ROOT } from '../../helpers/env.js';
import { createLiveApi } from '../../helpers/listings.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

const run = promisify(execFile);

const KEY_A = 'a1'.repeat(32);
const KEY_B = 'b2'.repeat(32);
const KEY_C = 'c3'.repeat(32);
const ID_A = secretKeyId(Buffer.from(KEY_A, 'hex'));
const ID_B = secretKeyId(Buffer.from(KEY_B, 'hex'));
const ID_C = secretKeyId(Buffer.from(KEY_C, 'hex'));

/** The format before key ids, as the box wrote it. */
function sealV1(hexKey: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(hexKey, 'hex'), iv);
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return 'v1.' + Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64');
}

describe('rotating SECRETS_KEY', () => {
  let db: TestDatabase;
  let providerOrgId: string;
  /** api id -> the secret its credential holds */
  const secrets = new Map<string, string>();
  let v1ApiId: string;

  const stored = async () =>
    new Map(
      (
        await sql<{ id: string; credential_ciphertext: string }>(
          db.url,
          'select id, credential_ciphertext from apis where credential_ciphertext is not null order by id',
        )
      ).map((r) => [r.id, r.credential_ciphertext]),
    );

  /** Every credential as the providers service reads it (the gateway's and the smoke test's path). */
  const openAll = async (stack: TestStack) => {
    const em = stack.services.orm.em.fork();
    const out = new Map<string, string | undefined>();
    for (const id of secrets.keys()) {
      const api = await em.findOneOrFail(Api, id);
      out.set(id, (await stack.services.providerCredentials.credentialOf(em, api))?.secret);
    }
    return out;
  };

  const withStack = async <T>(env: Record<string, string>, fn: (stack: TestStack) => Promise<T>): Promise<T> => {
    const stack = await createTestStack({ db, env });
    try {
      return await fn(stack);
    } finally {
      await stack.close();
    }
  };

  const admin = async (env: Record<string, string>, ...args: string[]) => {
    try {
      const { stdout, stderr } = await run('npx', ['tsx', 'scripts/admin.ts', 'rotate-secrets', ...args], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'silent', SECRETS_KEY_PREVIOUS: '', ...env },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    // Under key A: five listings with credentials (more than one batch below), one more in the old v1 format.
    await withStack({ SECRETS_KEY: KEY_A }, async (stack) => {
      providerOrgId = (await stack.services.accounts.register({ ip: '10.9.1.1' })).org_id;
      for (let i = 0; i < 5; i++) {
        const secret = `upstream-secret-${i}`;
        const { apiId } = await createLiveApi(stack.services, {
          providerOrgId,
          baseUrl: 'https://upstream.example',
          endpoints: [{ method: 'GET', path: '/x', priceCents: 1 }],
          credential: { secret, injection: 'bearer' },
        });
        secrets.set(apiId, secret);
      }
      const { apiId } = await createLiveApi(stack.services, {
        providerOrgId,
        baseUrl: 'https://upstream.example',
        endpoints: [{ method: 'GET', path: '/x', priceCents: 1 }],
        credential: { secret: 'placeholder', injection: 'bearer' },
      });
      v1ApiId = apiId;
      secrets.set(apiId, 'legacy-v1-secret');
      await sql(db.url, 'update apis set credential_ciphertext = $1 where id = $2', [
        sealV1(KEY_A, 'legacy-v1-secret'),
        apiId,
      ]);
      expect(await openAll(stack)).toEqual(secrets);
    });
    const before = await stored();
    expect([...before.values()].filter((v) => v.startsWith(`v2.${ID_A}.`))).toHaveLength(5);
    expect(before.get(v1ApiId)).toMatch(/^v1\./);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('with SECRETS_KEY=B alone, values under A do not open', async () => {
    await withStack({ SECRETS_KEY: KEY_B }, async (stack) => {
      const em = stack.services.orm.em.fork();
      const api = await em.findOneOrFail(Api, [...secrets.keys()][0]!);
      await expect(stack.services.providerCredentials.credentialOf(em, api)).rejects.toThrow(
        new RegExp(`sealed under key ${ID_A}, which is neither SECRETS_KEY`),
      );
    });
  });

  it('with SECRETS_KEY=B and SECRETS_KEY_PREVIOUS=A everything opens, new values go under B, a dry run writes nothing', async () => {
    const before = await stored();
    await withStack({ SECRETS_KEY: KEY_B, SECRETS_KEY_PREVIOUS: KEY_A }, async (stack) => {
      expect(await openAll(stack)).toEqual(secrets);
      expect(stack.services.secrets.seal('new')).toMatch(new RegExp(`^v2\\.${ID_B}\\.`));

      const dry = await rotateSecrets({ orm: stack.services.orm, box: stack.services.secrets, dryRun: true });
      expect(dry).toMatchObject({
        ok: true,
        dry_run: true,
        key_id: ID_B,
        previous_key_ids: [ID_A],
        scanned: 6,
        resealed: 0,
        already_current: 0,
        pending: 6,
        failed: 0,
      });
    });
    expect(await stored()).toEqual(before);

    const cli = await admin({ SECRETS_KEY: KEY_B, SECRETS_KEY_PREVIOUS: KEY_A }, '--dry-run');
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ dry_run: true, scanned: 6, pending: 6, resealed: 0 });
    expect(await stored()).toEqual(before);
  });

  it('refuses, writing nothing, while a value opens under no configured key, and names it', async () => {
    // One listing whose credential was sealed under a key C nobody configured.
    const strayId = [...secrets.keys()][2]!;
    await sql(db.url, 'update apis set credential_ciphertext = $1 where id = $2', [
      new SecretBox(Buffer.from(KEY_C, 'hex')).seal(secrets.get(strayId)!),
      strayId,
    ]);
    const before = await stored();
    const res = await admin({ SECRETS_KEY: KEY_B, SECRETS_KEY_PREVIOUS: KEY_A });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('1 stored secret(s) open under none of the configured keys');
    expect(res.stderr).toContain('nothing was re-sealed');
    const result = JSON.parse(res.stdout) as RotationResult;
    expect(result).toMatchObject({ ok: false, scanned: 6, resealed: 0, pending: 5, failed: 1 });
    expect(result.failures).toEqual([
      { table: 'apis', id: strayId, key_id: ID_C, error: expect.stringContaining(`sealed under key ${ID_C}`) },
    ]);
    expect(await stored()).toEqual(before);
  });

  it('re-seals everything under B in batches, resumes where a run stopped, and a second run changes nothing', async () => {
    // C joins the previous keys, so every value opens; one value is already under B (as after an interrupted run).
    const resumedId = [...secrets.keys()][4]!;
    const boxB = new SecretBox(Buffer.from(KEY_B, 'hex'));
    await sql(db.url, 'update apis set credential_ciphertext = $1 where id = $2', [
      boxB.seal(secrets.get(resumedId)!),
      resumedId,
    ]);
    await withStack({ SECRETS_KEY: KEY_B, SECRETS_KEY_PREVIOUS: `${KEY_A},${KEY_C}` }, async (stack) => {
      const result = await rotateSecrets({ orm: stack.services.orm, box: stack.services.secrets, batchSize: 2 });
      expect(result).toMatchObject({
        ok: true,
        dry_run: false,
        scanned: 6,
        resealed: 5,
        already_current: 1,
        pending: 0,
        failed: 0,
      });
    });
    const after = await stored();
    for (const value of after.values()) expect(value).toMatch(new RegExp(`^v2\\.${ID_B}\\.`));
    for (const [id, secret] of secrets) expect(after.get(id)).not.toContain(secret);

    const again = await admin({ SECRETS_KEY: KEY_B, SECRETS_KEY_PREVIOUS: `${KEY_A},${KEY_C}` });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, scanned: 6, resealed: 0, already_current: 6 });
    expect(again.stderr).toContain('rotate-secrets');
    expect(await stored()).toEqual(after);
  });

  it('login codes mailed under A still verify with SECRETS_KEY_PREVIOUS=A, and are void with B alone', async () => {
    const email = 'rotation-login@example.com';
    // A verified user (signing in then starts no workflow: these stacks have no Temporal).
    await withStack({ SECRETS_KEY: KEY_A }, async (stack) => {
      const em = stack.services.orm.em.fork();
      const org = em.create(Org, { id: newId('org'), kind: 'standard', name: null });
      em.create(User, { id: newId('user'), org, email, name: null, role: 'owner', emailVerifiedAt: new Date() });
      await em.flush();
    });
    // A code as requestLoginCode stores it under key A (its plaintext is only in the mail).
    const plantCode = async (code: string) =>
      sql(
        db.url,
        `insert into login_codes (id, email, code_hash, expires_at) values ($1, $2, $3, now() + interval '10 minutes')`,
        [
          newId('loginCode'),
          email,
          createHmac('sha256', Buffer.from(KEY_A, 'hex')).update(`${email}:${code}`).digest('hex'),
        ],
      );
    await plantCode('123456');
    await withStack({ SECRETS_KEY: KEY_B, SECRETS_KEY_PREVIOUS: KEY_A }, async (stack) => {
      const session = await stack.services.loginCodes.verifyLoginCode({ email, code: '123456' }, { ip: '10.9.1.2' });
      expect(session.session_token).toBeTruthy();
    });
    await plantCode('654321');
    await withStack({ SECRETS_KEY: KEY_B }, async (stack) => {
      await expect(
        stack.services.loginCodes.verifyLoginCode({ email, code: '654321' }, { ip: '10.9.1.2' }),
      ).rejects.toThrow(/The code is not valid/);
    });
  });

  it('after the rotation SECRETS_KEY=B alone opens every credential', async () => {
    await withStack({ SECRETS_KEY: KEY_B }, async (stack) => {
      expect(await openAll(stack)).toEqual(secrets);
    });
    const res = await admin({ SECRETS_KEY: KEY_B }, '--dry-run');
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ ok: true, scanned: 6, already_current: 6, pending: 0 });
  });
});
