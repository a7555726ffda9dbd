/** Registration, signup, email verification (and attaching an email to an anonymous org), sign-in, the caller's org. */
import Router from '@koa/router';
import {
  AttachEmailBody,
  EmptyBody,
  LoginRequestBody,
  LoginVerifyBody,
  SignupBody,
  VerifyEmailBody,
} from '../../core/accounts/accounts.schemas.js';
import { ok } from '../../core/envelope.js';
import type { Services } from '../../platform/services.js';
import type { AppContext, AppState } from '../context.js';
import { auth, clientOf, principalOf } from '../middleware/auth.js';
import { parseBody } from '../middleware/body.js';

export function accountsRoutes(services: Services): Router<AppState> {
  const router = new Router<AppState>();
  const noStore = (ctx: AppContext) => ctx.set('Cache-Control', 'no-store');

  router.post('/v1/register', async (ctx) => {
    parseBody(ctx, EmptyBody);
    const result = await services.accounts.register({ ip: ctx.ip });
    ctx.status = 201;
    ctx.set('X-Svc-Key', result.api_key);
    noStore(ctx);
    ctx.body = ok(result, ctx.state.requestId);
  });

  router.post(['/v1/signup', '/v1/auth/signup'], async (ctx) => {
    const body = parseBody(ctx, SignupBody);
    const result = await services.signup.signup(body, clientOf(ctx));
    ctx.status = 201;
    ctx.set('X-Svc-Key', result.api_key);
    noStore(ctx);
    ctx.body = ok(result, ctx.state.requestId);
  });

  router.post('/v1/auth/verify-email', async (ctx) => {
    const body = parseBody(ctx, VerifyEmailBody);
    noStore(ctx);
    ctx.body = ok(await services.emailVerification.verifyEmail(body), ctx.state.requestId);
  });

  router.post('/v1/auth/login/request', async (ctx) => {
    const body = parseBody(ctx, LoginRequestBody);
    noStore(ctx);
    ctx.body = ok(await services.loginCodes.requestLoginCode(body, clientOf(ctx)), ctx.state.requestId);
  });

  router.post('/v1/auth/login/verify', async (ctx) => {
    const body = parseBody(ctx, LoginVerifyBody);
    noStore(ctx);
    ctx.body = ok(await services.loginCodes.verifyLoginCode(body, clientOf(ctx)), ctx.state.requestId);
  });

  router.post('/v1/auth/logout', auth(services, { session: true }), async (ctx) => {
    parseBody(ctx, EmptyBody);
    const principal = principalOf(ctx.state);
    if (principal.type !== 'session') throw new Error('unreachable: auth() requires a session');
    ctx.body = ok(await services.loginCodes.logout(principal.sessionId), ctx.state.requestId);
  });

  router.get('/v1/me', auth(services), async (ctx) => {
    ctx.body = ok(await services.accounts.me(principalOf(ctx.state)), ctx.state.requestId);
  });

  // Agent-first elevation: an anonymous org's root key attaches an email; the mailed link elevates it in place.
  router.post('/v1/me/email', auth(services), async (ctx) => {
    const body = parseBody(ctx, AttachEmailBody);
    noStore(ctx);
    ctx.body = ok(
      await services.emailVerification.attachEmail(principalOf(ctx.state), body, clientOf(ctx)),
      ctx.state.requestId,
    );
  });

  return router;
}
