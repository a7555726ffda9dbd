/**
 * oidc-provider's storage adapter, on Postgres (table `oauth_payloads`). Our rule holds here too: codes and tokens
 * are stored only as hashes. The row id is SHA-256(`${model}:${id}`), and for the models whose id is the secret
 * itself (authorization codes, access and refresh tokens, registration access tokens, sessions, interactions) the
 * payload is stored without it (`jti`) and given back on read; a leaked table holds no usable code or token.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import { sha256Hex } from '../crypto.js';

/** Marks a stored payload whose `jti` (its own id, the secret) was removed before storing. */
const ID_REMOVED = '_jti_removed';
const PURGE_INTERVAL_MS = 10 * 60_000;
const PURGE_BATCH = 1_000;

export function payloadRowId(model: string, id: string): string {
  return sha256Hex(`${model}:${id}`);
}

interface Row {
  payload: AdapterPayload;
  consumed_at: Date | null;
  expires_at: Date | null;
}

/** The queries the adapter shares across its models: one per process. */
interface PayloadStore {
  execute<T extends object[] = object[]>(sql: string, params: unknown[], mode?: 'run'): Promise<T>;
  /** Deletes a bounded batch of long-expired rows, at most every PURGE_INTERVAL_MS. */
  purgeExpired(): Promise<void>;
  /** Every token and code of a grant, and the grant's own row (a Grant's id is its grant id). */
  revokeGrantFamily(grantId: string): Promise<unknown>;
}

function payloadStore(orm: MikroORM): PayloadStore {
  const execute = <T extends object[] = object[]>(sql: string, params: unknown[], mode?: 'run') =>
    orm.em.fork().execute<T>(sql, params, mode);

  // Expired rows are deleted in bounded batches, at most every PURGE_INTERVAL_MS per process, after a write.
  let lastPurge = 0;
  const purgeExpired = async () => {
    if (Date.now() - lastPurge < PURGE_INTERVAL_MS) return;
    lastPurge = Date.now();
    await execute(
      `delete from oauth_payloads where id in (
         select id from oauth_payloads where expires_at < now() - interval '1 day' limit ${PURGE_BATCH})`,
      [],
      'run',
    );
  };

  const revokeGrantFamily = (grantId: string) =>
    execute(
      'delete from oauth_payloads where grant_id = ? or id = ?',
      [grantId, payloadRowId('Grant', grantId)],
      'run',
    );
  return { execute, purgeExpired, revokeGrantFamily };
}

export function createOAuthAdapter(orm: MikroORM): new (model: string) => Adapter {
  const store = payloadStore(orm);
  return class PostgresOAuthAdapter extends PayloadAdapter {
    constructor(model: string) {
      super(store, model);
    }
  };
}

/** One model's rows (oidc-provider makes one adapter per model). */
class PayloadAdapter implements Adapter {
  constructor(
    private readonly store: PayloadStore,
    private readonly model: string,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const stored: AdapterPayload & { [ID_REMOVED]?: true } = { ...payload };
    if (stored.jti === id) {
      delete stored.jti; // the code or token value itself: never stored
      stored[ID_REMOVED] = true;
    }
    if (this.model === 'Interaction' && stored.session && typeof stored.session === 'object') {
      // An interaction names its browser session by that session's id (the cookie value); the library never reads
      // it back, so it is not stored either.
      const { cookie: _cookie, ...session } = stored.session as Record<string, unknown>;
      stored.session = session;
    }
    const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
    await this.store.execute(
      `insert into oauth_payloads (id, model, payload, grant_id, uid_hash, expires_at)
       values (?, ?, ?::jsonb, ?, ?, ?)
       on conflict (id) do update
         set payload = excluded.payload, grant_id = excluded.grant_id, uid_hash = excluded.uid_hash,
             expires_at = excluded.expires_at`,
      [
        payloadRowId(this.model, id),
        this.model,
        JSON.stringify(stored),
        payload.grantId ?? null,
        payload.uid ? sha256Hex(payload.uid) : null,
        expiresAt,
      ],
      'run',
    );
    await this.store.purgeExpired();
  }

  private async findWhere(column: 'id' | 'uid_hash', value: string): Promise<Row | undefined> {
    const rows = await this.store.execute<Row[]>(
      `select payload, consumed_at, expires_at from oauth_payloads
        where ${column} = ? and model = ? and (expires_at is null or expires_at > now()) limit 1`,
      [value, this.model],
    );
    return rows[0];
  }

  private restore(row: Row | undefined, id?: string): AdapterPayload | undefined {
    if (!row) return undefined;
    const { [ID_REMOVED]: removed, ...payload } = row.payload as AdapterPayload & { [ID_REMOVED]?: true };
    if (removed && id !== undefined) payload.jti = id;
    if (row.consumed_at) payload.consumed = Math.floor(new Date(row.consumed_at).getTime() / 1000);
    return payload;
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return this.restore(await this.findWhere('id', payloadRowId(this.model, id)), id);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.restore(await this.findWhere('uid_hash', sha256Hex(uid)));
  }

  findByUserCode(): Promise<AdapterPayload | undefined> {
    return Promise.resolve(undefined); // the device flow is not enabled
  }

  /**
   * One conditional UPDATE: the library checked `consumed` on its own read, so two concurrent exchanges of one
   * refresh token (or code) can both get here; exactly one updates the row. The other is reuse: the grant's whole
   * family is revoked (every token and code of the grant, and the grant itself) and the request refused.
   */
  async consume(id: string): Promise<void> {
    const rowId = payloadRowId(this.model, id);
    const won = await this.store.execute<{ id: string }[]>(
      'update oauth_payloads set consumed_at = now() where id = ? and consumed_at is null returning id',
      [rowId],
    );
    if (won.length === 1) return;
    const [row] = await this.store.execute<{ grant_id: string | null }[]>(
      'select grant_id from oauth_payloads where id = ?',
      [rowId],
    );
    if (row?.grant_id) await this.store.revokeGrantFamily(row.grant_id);
    throw new errors.InvalidGrant(`${this.model === 'RefreshToken' ? 'refresh token' : 'grant'} already used`);
  }

  async destroy(id: string): Promise<void> {
    await this.store.execute('delete from oauth_payloads where id = ?', [payloadRowId(this.model, id)], 'run');
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.store.execute('delete from oauth_payloads where grant_id = ?', [grantId], 'run');
  }
}
