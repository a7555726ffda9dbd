/**
 * Re-sealing every stored secret under the current SECRETS_KEY (`npm run admin -- rotate-secrets`), so the previous
 * keys can be dropped. Two passes over every sealed column, in id order and in batches:
 *
 * 1. check (read only): each value must open under a configured key; if one does not, nothing is written and the
 *    result lists it (the usual cause: the old key is missing from SECRETS_KEY_PREVIOUS).
 * 2. re-seal (skipped by a dry run): one transaction per batch, rows locked, each value re-read, opened and sealed
 *    again unless it is already under the current key.
 *
 * Idempotent and resumable: a value under the current key is left alone, so a second run (or a run after an
 * interruption) re-seals only what is left. Plaintexts never leave the process and are never logged.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { SecretBox } from '../core/secrets/secret-box.js';

/** Every column holding SecretBox values. A new sealed column is added here. */
export const SEALED_COLUMNS = [{ table: 'apis', column: 'credential_ciphertext' }] as const;

export interface RotationFailure {
  table: string;
  id: string;
  /** The key id the value names (undefined for `v1.` values, which name none). */
  key_id: string | null;
  error: string;
}

export interface RotationResult {
  ok: boolean;
  dry_run: boolean;
  key_id: string;
  previous_key_ids: string[];
  scanned: number;
  /** Re-sealed under the current key by this run (a dry run or a refusal writes nothing: 0). */
  resealed: number;
  already_current: number;
  /** Open under a previous key and not re-sealed (what a dry run would re-seal); 0 after a successful run. */
  pending: number;
  /** Open under no configured key (listed in `failures`). */
  failed: number;
  failures: RotationFailure[];
}

export interface RotationOptions {
  orm: MikroORM;
  box: SecretBox;
  dryRun?: boolean;
  batchSize?: number;
}

type Row = { id: string; value: string };

/** The counts of one pass over the sealed values (the check, then the re-seal). */
function emptyCounts() {
  return { scanned: 0, resealed: 0, already_current: 0, pending: 0, failed: 0, failures: [] as RotationFailure[] };
}

export async function rotateSecrets(options: RotationOptions): Promise<RotationResult> {
  const { box, dryRun = false } = options;
  const check = await checkSealed(options);
  const base = { dry_run: dryRun, key_id: box.keyId, previous_key_ids: box.keyIds.slice(1) };
  if (dryRun || check.failed > 0 || check.pending === 0) return { ok: check.failed === 0, ...base, ...check };
  const done = await resealAll(options);
  return { ok: done.failed === 0, ...base, ...done };
}

function failure(box: SecretBox, table: string, row: Row, err: unknown): RotationFailure {
  return {
    table,
    id: row.id,
    key_id: box.keyIdOf(row.value) ?? null,
    error: err instanceof Error ? err.message : String(err),
  };
}

/** The check: every sealed value opened, and counted as current, stale (pending) or failed. */
async function checkSealed({ orm, box, batchSize = 200 }: RotationOptions) {
  const check = emptyCounts();
  const verdict = (table: string, row: Row) => {
    try {
      box.open(row.value);
      return box.isCurrent(row.value) ? 'current' : 'stale';
    } catch (err) {
      check.failures.push(failure(box, table, row, err));
      return 'failed';
    }
  };

  for (const { table, column } of SEALED_COLUMNS) {
    const em = orm.em.fork();
    for (let after = ''; ;) {
      const rows = await em.execute<Row[]>(
        `select id, ${column} as value from ${table} where ${column} is not null and id > ? order by id limit ?`,
        [after, batchSize],
      );
      for (const row of rows) {
        check.scanned++;
        const v = verdict(table, row);
        if (v === 'current') check.already_current++;
        else if (v === 'stale') check.pending++;
        else check.failed++;
      }
      if (rows.length < batchSize) break;
      after = rows[rows.length - 1]!.id;
    }
  }
  return check;
}

/** The re-seal: every value not sealed with the current key, a batch per transaction (rows locked). */
async function resealAll({ orm, box, batchSize = 200 }: RotationOptions) {
  const done = emptyCounts();
  for (const { table, column } of SEALED_COLUMNS) {
    for (let after = ''; ;) {
      const last = await orm.em.fork().transactional(async (tem) => {
        const rows = await tem.execute<Row[]>(
          `select id, ${column} as value from ${table} where ${column} is not null and id > ? order by id limit ?
            for update`,
          [after, batchSize],
        );
        for (const row of rows) {
          done.scanned++;
          if (box.isCurrent(row.value)) {
            done.already_current++;
            continue;
          }
          let plaintext: string;
          try {
            plaintext = box.open(row.value);
          } catch (err) {
            // Written since the check under a key we do not have: left as it is, and reported.
            done.failed++;
            done.failures.push(failure(box, table, row, err));
            continue;
          }
          await tem.execute(`update ${table} set ${column} = ? where id = ?`, [box.seal(plaintext), row.id], 'run');
          done.resealed++;
        }
        return rows.length < batchSize ? undefined : rows[rows.length - 1]!.id;
      });
      if (last === undefined) break;
      after = last;
    }
  }
  return done;
}
