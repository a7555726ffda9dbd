/** An uploaded avatar image (png, jpeg or webp judged by its bytes, at most 2 MB), served back by id. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { orgOwnedRow } from './org-owned.js';
import { createdNow, sha256Hex } from './common.js';

export const AVATAR_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type AvatarType = (typeof AVATAR_TYPES)[number];

export const Avatar = defineEntity({
  name: 'Avatar',
  tableName: 'avatars',
  properties: {
    ...orgOwnedRow(),
    contentType: p.enum([...AVATAR_TYPES]),
    bytes: p.blob().lazy(true, false),
    sizeBytes: p.integer(),
    sha256: sha256Hex(),
    createdAt: createdNow(),
  },
  checks: [{ name: 'avatars_size_limit', expression: 'size_bytes > 0 AND size_bytes <= 2097152' }],
});

export type IAvatar = InferEntity<typeof Avatar>;
