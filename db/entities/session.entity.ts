/**
 * A signed-in person's session on the control plane. The token (`sess_…`) is stored only as its SHA-256. A session
 * ends at `expiresAt` (absolute), after the idle limit since `lastSeenAt`, or when revoked (logout).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { dbNow, hashedTokenRow } from './common.js';
import { Org } from './org.entity.js';
import { User } from './user.entity.js';

export const Session = defineEntity({
  name: 'Session',
  tableName: 'sessions',
  properties: {
    ...hashedTokenRow(),
    user: p.manyToOne(User).index(),
    org: p.manyToOne(Org),
    createdAt: dbNow(),
    lastSeenAt: dbNow(),
    expiresAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
    ip: p.string().length(64).nullable(),
    userAgent: p.string().length(300).nullable(),
  },
});

export type ISession = InferEntity<typeof Session>;
