/**
 * Org profiles. Public fields: display_name, slug, bio, website, avatar_url. Private fields (own profile only):
 * contact_email, contact_phone. Avatars are png, jpeg or webp judged by their bytes, at most 2 MB, stored in the
 * database and served from `/v1/avatars/{id}.{ext}` with their true content type.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { z } from 'zod';
import { Avatar, Org, Profile, type IProfile } from '../../db/entities/index.js';
import type { Principal } from '../auth/scopes.js';
import { sha256Hex } from '../crypto.js';
import {
  ConflictError,
  NotFoundError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../errors.js';
import { newId } from '../ids.js';
import { AVATAR_EXTENSIONS, AVATAR_MAX_BYTES, sniffImageType } from './image.js';
import type { AvatarView, OwnProfileView } from './profiles.schemas.js';
import { isReservedSlug, RESERVED_SLUG_RULE } from './reserved-slugs.js';

export const ProfilePatch = z
  .object({
    display_name: z.string().trim().min(1).max(80).nullable(),
    slug: z
      .string()
      .trim()
      .regex(/^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/, 'must be 1-40 lower-case letters, digits or inner hyphens')
      .refine((s) => !isReservedSlug(s), RESERVED_SLUG_RULE)
      .nullable(),
    bio: z.string().trim().max(1000).nullable(),
    website: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
      .max(200)
      .nullable(),
    contact_email: z
      .string()
      .trim()
      .max(320)
      .pipe(z.email({ error: 'must be an email address' }))
      .nullable(),
    contact_phone: z
      .string()
      .trim()
      .regex(/^\+?[0-9 ().-]{5,32}$/, 'must be a phone number')
      .nullable(),
  })
  .partial()
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'send at least one profile field');
export type ProfilePatch = z.infer<typeof ProfilePatch>;

export class ProfilesService {
  constructor(
    private readonly orm: MikroORM,
    private readonly publicBaseUrl: string,
  ) {}

  avatarUrl(avatar: { id: string; contentType: keyof typeof AVATAR_EXTENSIONS } | null | undefined): string | null {
    return avatar ? `${this.publicBaseUrl}/v1/avatars/${avatar.id}.${AVATAR_EXTENSIONS[avatar.contentType]}` : null;
  }

  private ownView(orgId: string, profile: IProfile | null): OwnProfileView {
    return {
      org_id: orgId,
      display_name: profile?.displayName ?? null,
      slug: profile?.slug ?? null,
      bio: profile?.bio ?? null,
      website: profile?.website ?? null,
      avatar_url: this.avatarUrl(profile?.avatar),
      contact_email: profile?.contactEmail ?? null,
      contact_phone: profile?.contactPhone ?? null,
      updated_at: profile?.updatedAt.toISOString() ?? null,
    };
  }

  async getOwn(principal: Principal): Promise<OwnProfileView> {
    const profile = await this.orm.em.fork().findOne(Profile, { org: principal.orgId }, { populate: ['avatar'] });
    return this.ownView(principal.orgId, profile);
  }

  async update(principal: Principal, patch: ProfilePatch): Promise<OwnProfileView> {
    const em = this.orm.em.fork();
    try {
      return await em.transactional(async (tem) => {
        let profile = await tem.findOne(Profile, { org: principal.orgId }, { populate: ['avatar'] });
        profile ??= tem.create(Profile, { org: tem.getReference(Org, principal.orgId) });
        if (patch.display_name !== undefined) profile.displayName = patch.display_name;
        if (patch.slug !== undefined) profile.slug = patch.slug;
        if (patch.bio !== undefined) profile.bio = patch.bio;
        if (patch.website !== undefined) profile.website = patch.website;
        if (patch.contact_email !== undefined) profile.contactEmail = patch.contact_email?.toLowerCase() ?? null;
        if (patch.contact_phone !== undefined) profile.contactPhone = patch.contact_phone;
        await tem.flush();
        return this.ownView(principal.orgId, profile);
      });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) {
        throw new ConflictError(`The slug "${patch.slug}" is taken.`, { details: { field: 'slug' } });
      }
      throw err;
    }
  }

  async setAvatar(principal: Principal, bytes: Buffer): Promise<AvatarView> {
    if (bytes.length === 0) throw new ValidationError('Send the image as the request body.');
    if (bytes.length > AVATAR_MAX_BYTES) throw new PayloadTooLargeError(AVATAR_MAX_BYTES, 'Avatar image');
    const contentType = sniffImageType(bytes);
    if (!contentType) throw new UnsupportedMediaTypeError('The avatar must be a PNG, JPEG or WebP image.');
    const profile = await this.orm.em.fork().transactional(async (tem) => {
      const avatar = tem.create(Avatar, {
        id: newId('avatar'),
        org: tem.getReference(Org, principal.orgId),
        contentType,
        bytes,
        sizeBytes: bytes.length,
        sha256: sha256Hex(bytes),
      });
      let p = await tem.findOne(Profile, { org: principal.orgId });
      p ??= tem.create(Profile, { org: tem.getReference(Org, principal.orgId) });
      p.avatar = avatar;
      await tem.flush();
      return p;
    });
    const view = this.ownView(principal.orgId, profile);
    return { avatar_url: view.avatar_url!, profile: view };
  }

  /** The stored image for `/v1/avatars/{id}.{ext}` (public). */
  async getAvatar(id: string): Promise<{ contentType: string; bytes: Buffer; sha256: string }> {
    const avatar = await this.orm.em.fork().findOne(Avatar, { id }, { populate: ['bytes'] });
    if (!avatar) throw new NotFoundError('No such avatar.');
    return { contentType: avatar.contentType, bytes: Buffer.from(avatar.bytes), sha256: avatar.sha256 };
  }
}
