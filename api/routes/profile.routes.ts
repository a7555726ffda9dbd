/** The caller's own profile and avatar, and the public avatar images. */
import { NotFoundError } from '../../core/errors.js';
import { AVATAR_MAX_BYTES } from '../../core/profiles/image.js';
import { AvatarView, OwnProfileView } from '../../core/profiles/profiles.schemas.js';
import { ProfilePatch } from '../../core/profiles/profiles.service.js';
import type { Services } from '../../platform/services.js';
import { readRawBody } from '../middleware/body.js';
import { empty, env, media } from '../openapi/operation.js';
import { mountRoutes, route } from '../openapi/route.js';

export const PROFILE_ROUTES = [
  route(
    {
      method: 'get',
      path: '/v1/me/profile',
      operationId: 'getProfile',
      summary: 'Own profile, including private fields',
      tag: 'Profile',
      auth: 'bearer',
      success: { 200: env(OwnProfileView, 'The profile.') },
    },
    (_ctx, { services, principal }) => services.profiles.getOwn(principal),
  ),
  route(
    {
      method: 'patch',
      path: '/v1/me/profile',
      operationId: 'patchProfile',
      summary: 'Update the profile',
      tag: 'Profile',
      auth: 'bearer',
      scope: 'provider:write',
      body: ProfilePatch,
      success: { 200: env(OwnProfileView, 'Updated.') },
      errors: [409],
    },
    (_ctx, { services, principal, body }) => services.profiles.update(principal, body),
  ),
  // The image is the raw request body (any Content-Type); its type is judged by its bytes.
  route(
    {
      method: 'post',
      path: '/v1/me/avatar',
      operationId: 'uploadAvatar',
      summary: 'Upload the avatar (png, jpeg or webp, at most 2 MB; raw bytes)',
      tag: 'Profile',
      auth: 'bearer',
      scope: 'provider:write',
      body: {
        raw: ['image/png', 'image/jpeg', 'image/webp'],
        description: 'The image bytes; the type is judged by them.',
      },
      success: { 200: env(AvatarView, 'Stored.') },
    },
    async (ctx, { services, principal }) =>
      services.profiles.setAvatar(principal, await readRawBody(ctx, AVATAR_MAX_BYTES)),
  ),
  route(
    {
      method: 'get',
      path: '/v1/avatars/{file}',
      operationId: 'getAvatar',
      summary: 'A public avatar image',
      tag: 'Profile',
      auth: 'none',
      success: { 200: media('image/*', 'The image.'), 304: empty('Not modified (If-None-Match).') },
    },
    async (ctx, { services, params }) => {
      const match = /^(avt_[0-9a-z]{26})\.(png|jpg|webp)$/.exec(params.file);
      if (!match) throw new NotFoundError('No such avatar.');
      const avatar = await services.profiles.getAvatar(match[1]!);
      const etag = `"${avatar.sha256}"`;
      ctx.set('ETag', etag);
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
      if (ctx.get('if-none-match') === etag) {
        ctx.status = 304;
        return;
      }
      ctx.type = avatar.contentType;
      ctx.body = avatar.bytes;
    },
  ),
];

export const profileRoutes = (services: Services) => mountRoutes(services, PROFILE_ROUTES);
