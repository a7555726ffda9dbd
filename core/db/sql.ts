/** Small SQL helpers shared by the services that run raw queries (no domain knowledge here). */
import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../errors.js';

/** Raw query results carry timestamps as strings (MikroORM leaves type conversion to entities). */
export const toDate = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));

/** A Postgres array literal (knex would expand a JS array into a list of values). */
export const pgArray = (values: readonly string[]): string =>
  `{${values.map((v) => `"${v.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;

/** Adds `condition` and its one parameter to a query's filters when `value` is set (an optional list filter). */
export function addFilter(filters: string[], params: unknown[], condition: string, value: unknown): void {
  if (!value) return;
  filters.push(condition);
  params.push(value);
}

/**
 * Serialise key changes per org (the active-key cap and the key tree hold under concurrency). `FOR NO KEY UPDATE`:
 * it excludes other key changes and balance updates of the org, but not the key-share locks that inserting rows
 * which reference the org (the gateway's usage events) takes, so calls are not held up by it.
 */
export async function lockOrg(em: EntityManager, orgId: string): Promise<void> {
  const rows = await em.execute('select id from orgs where id = ? for no key update', [orgId]);
  if (rows.length === 0) throw new NotFoundError('Organization not found.');
}
