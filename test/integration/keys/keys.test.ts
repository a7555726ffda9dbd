// Key authentication through the cache, and invalidation that reaches a second process's cache via Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey, Org } from '../../../db/entities/index.js';
import { CONSUMER_SCOPES } from '../../../core/auth/scopes.js';
import { UnauthenticatedError } from '../../../core/errors.js';
import { newId } from '../../../core/ids.js';
import { hashKey } from '../../../core/keys/key-material.js';
import { sql } from '../../helpers/db.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

describe('KeysService', () => {
  let a: TestStack;
  let b: TestStack; // a second "process": same database and Redis prefix, its own cache

  beforeAll(async () => {
    a = await createTestStack();
    b = await createTestStack({ db: a.db, env: { REDIS_KEY_PREFIX: a.config.counters.keyPrefix } });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  async function createKey(): Promise<{ plaintext: string; keyId: string; orgId: string }> {
    const em = a.services.orm.em.fork();
    const org = em.create(Org, { id: newId('org') });
    const { key, plaintext } = a.services.keys.create(em, {
      orgId: org.id,
      name: 'k',
      scopes: CONSUMER_SCOPES,
      source: 'api',
    });
    await em.flush();
    return { plaintext, keyId: key.id, orgId: org.id };
  }

  /** The second process refuses the key within `timeoutMs`. */
  async function refusedByB(plaintext: string, timeoutMs: number): Promise<void> {
    const outcome = () =>
      b.services.keys.authenticate(plaintext).then(
        () => 'accepted',
        () => 'refused',
      );
    await expect.poll(outcome, { timeout: timeoutMs, interval: 20 }).toBe('refused');
  }

  it('authenticates a key and stores only its hash', async () => {
    const { plaintext, keyId, orgId } = await createKey();
    const { principal } = await a.services.keys.authenticate(plaintext);
    expect(principal).toEqual({
      type: 'api_key',
      orgId,
      keyId,
      keyPrefix: plaintext.slice(0, 17),
      scopes: CONSUMER_SCOPES,
    });
    const [row] = await sql(a.db.url, 'select key_hash, key_prefix from api_keys where id = $1', [keyId]);
    expect(row).toEqual({ key_hash: hashKey(plaintext), key_prefix: plaintext.slice(0, 17) });
  });

  it('refuses an unknown key', async () => {
    await expect(a.services.keys.authenticate('svc_live_' + 'x'.repeat(24))).rejects.toBeInstanceOf(
      UnauthenticatedError,
    );
  });

  it('a revocation published by one process reaches the other within a second', async () => {
    const { plaintext, keyId } = await createKey();
    // Warm both caches.
    await a.services.keys.authenticate(plaintext);
    await b.services.keys.authenticate(plaintext);

    const em = a.services.orm.em.fork();
    const key = await em.findOneOrFail(ApiKey, keyId);
    key.revokedAt = new Date();
    await em.flush();
    const started = Date.now();
    await a.services.keys.invalidate(key.keyHash);

    await expect(a.services.keys.authenticate(plaintext)).rejects.toBeInstanceOf(UnauthenticatedError);
    await refusedByB(plaintext, 1_000);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('a revocation reaches a process that misses the message within a second (issue 21 item 12)', async () => {
    const { plaintext, keyId } = await createKey();
    await b.services.keys.authenticate(plaintext); // warm b's cache
    // Revoked in the database with no message at all: as if b's subscriber were cut when it was published.
    await sql(a.db.url, 'update api_keys set revoked_at = now() where id = $1', [keyId]);
    const started = Date.now();
    await refusedByB(plaintext, 1_500);
    expect(Date.now() - started).toBeLessThan(1_100);
  });
});
