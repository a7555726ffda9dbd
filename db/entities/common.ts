/** Property builders shared by entities. */
import { p } from '@mikro-orm/core';

/** A prefixed id (`org_01JH…`, core/ids.ts) as the primary key. */
export const prefixedId = () => p.string().length(40).primary();

/** The prefixed id of another row, held without a foreign key. */
export const idRef = () => p.string().length(40);

/** Hex SHA-256 (of a secret, a token or a body). */
export const sha256Hex = () => p.string().length(64);

/** An idempotency key: ours, or the one a caller sent. */
export const idemKey = () => p.string().length(200);

/** An email address (RFC 5321's 320 characters at most). */
export const emailAddress = () => p.string().length(320);

/** A Stripe object id (checkout session, payment intent, transfer, event). */
export const stripeId = () => p.string().length(255);

/** A datetime the database sets to now() when an insert leaves it out. */
export const dbNow = () => p.datetime().defaultRaw('now()');

/** A datetime MikroORM sets when it creates the row, and the database defaults for raw SQL inserts. */
export const createdNow = () => dbNow().onCreate(() => new Date());

/** Integer cents: a bigint column read as a number. */
export const cents = () => p.bigint('number');

/** `created_at` and `updated_at`, set by MikroORM and defaulted by the database for raw SQL inserts. */
export const timestamps = () => ({
  createdAt: createdNow(),
  updatedAt: createdNow().onUpdate(() => new Date()),
});

/** A token's issue and expiry: `created_at` defaulted by the database, `expires_at` required. */
export const issuedExpiring = () => ({
  createdAt: dbNow(),
  expiresAt: p.datetime(),
});

/** A single-use token's life: issued, void after `expires_at`, spent at `consumed_at`. */
export const singleUse = () => ({
  ...issuedExpiring(),
  consumedAt: p.datetime().nullable(),
});

/** A row a secret token names: its prefixed id and the token's SHA-256 (the token itself is never stored). */
export const hashedTokenRow = () => ({
  id: prefixedId(),
  tokenHash: sha256Hex().unique(),
});

/** The key of an idempotent call: org, API key and the caller's Idempotency-Key. */
export const idempotencyPk = () => ({
  orgId: idRef().primary(),
  keyId: idRef().primary(),
  idempotencyKey: idemKey().primary(),
});
