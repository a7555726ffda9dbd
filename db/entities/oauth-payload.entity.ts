/**
 * What the OAuth authorization server (oidc-provider, core/oauth/) stores: authorization codes, access and refresh
 * tokens, grants, registered clients, interactions and its sessions. The row id is the SHA-256 of the model name and
 * the library's id; for codes and tokens that id is the secret itself, so only its hash is stored, and the payload
 * is kept without it (core/oauth/oauth-adapter.ts).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { dbNow, sha256Hex } from './common.js';

export const OAuthPayload = defineEntity({
  name: 'OAuthPayload',
  tableName: 'oauth_payloads',
  properties: {
    /** Hex SHA-256 of `${model}:${id}`. */
    id: sha256Hex().primary(),
    model: p.string().length(40),
    payload: p.json(),
    /** The grant a code or token belongs to (revoking the grant deletes them all). */
    grantId: p.string().length(100).nullable().index(),
    /** Hex SHA-256 of a session's uid (findByUid). */
    uidHash: sha256Hex().nullable().index(),
    expiresAt: p.datetime().nullable().index(),
    consumedAt: p.datetime().nullable(),
    createdAt: dbNow(),
  },
});

export type IOAuthPayload = InferEntity<typeof OAuthPayload>;
