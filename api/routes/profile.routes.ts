/** The caller's own profile and avatar, and the public avatar images. */
import Router from '@koa/router';
import { ok } from '../../core/envelope.js';
import { NotFoundError } from '../../core/errors.js';
import { AVATAR_MAX_BYTES } from '../../core/profiles/image.js';
import { ProfilePatch } from '../../core/profiles/profiles.service.js';
import type { Services } from '../../platform/services.js';
import type { AppState } from '../context.js';
import { auth, principalOf } from '../middleware/auth.js';
import { parseBody, readRawBody } from '../middleware/body.js';

export function profileRoutes(services: Services): Router<AppState> {
  const router = new Router<AppState>();

  router.get('/v1/me/profile', auth(services), async (ctx) => {
    ctx.body = ok(await services.profiles.getOwn(principalOf(ctx.state)), ctx.state.requestId);
  });

  router.patch('/v1/me/profile', auth(services, 'provider:write'), async (ctx) => {
    const patch = parseBody(ctx, ProfilePatch);
    ctx.body = ok(await services.profiles.update(principalOf(ctx.state), patch), ctx.state.requestId);
  });

  // The image is the raw request body (any Content-Type); its type is judged by its bytes.
  router.post('/v1/me/avatar', auth(services, 'provider:write'), async (ctx) => {
    const bytes = await readRawBody(ctx, AVATAR_MAX_BYTES);
    ctx.body = ok(await services.profiles.setAvatar(principalOf(ctx.state), bytes), ctx.state.requestId);
  });

  router.get('/v1/avatars/:file', async (ctx) => {
    const match = /^(avt_[0-9a-z]{26})\.(png|jpg|webp)$/.exec(ctx.params.file ?? '');
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
  });

  return router;
}
