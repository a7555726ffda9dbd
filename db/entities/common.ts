/** Property builders shared by entities. */
import { p } from '@mikro-orm/core';

/** `created_at` and `updated_at`, set by MikroORM and defaulted by the database for raw SQL inserts. */
export const timestamps = () => ({
  createdAt: p
    .datetime()
    .defaultRaw('now()')
    .onCreate(() => new Date()),
  updatedAt: p
    .datetime()
    .defaultRaw('now()')
    .onCreate(() => new Date())
    .onUpdate(() => new Date()),
});
