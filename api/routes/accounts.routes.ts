/** Registration, signup, email verification (and attaching an email to an anonymous org), sign-in, the caller's org. */
import {
  AttachEmailBody,
  AttachEmailView,
  EmptyBody,
  LoginRequestBody,
  LoginRequestView,
  LoginVerifyBody,
  LogoutView,
  MeView,
  RegistrationView,
  SessionView,
  SignupBody,
  SignupView,
  VerifiedView,
  VerifyEmailBody,
} from '../../core/accounts/accounts.schemas.js';
import type { Services } from '../../platform/services.js';
import type { AppContext } from '../context.js';
import { clientOf } from '../middleware/auth.js';
import { env } from '../openapi/operation.js';
import { mountRoutes, route, type RouteInput } from '../openapi/route.js';

const noStore = (ctx: AppContext) => ctx.set('Cache-Control', 'no-store');

/** Signup answers with the new key in a header too. */
async function signup(ctx: AppContext, { services, body }: RouteInput<typeof SignupBody, undefined, 'none', Services>) {
  const result = await services.signup.signup(body, clientOf(ctx));
  ctx.set('X-Svc-Key', result.api_key);
  noStore(ctx);
  return result;
}

const SIGNUP = {
  summary: 'Human signup: account, API key, session and withheld starter credits',
  tag: 'Accounts',
  auth: 'none',
  body: SignupBody,
  success: { 201: env(SignupView, 'The new account.') },
  errors: [403, 409, 429],
} as const;

export const ACCOUNTS_ROUTES = [
  route(
    {
      method: 'post',
      path: '/v1/register',
      operationId: 'register',
      summary: 'Anonymous registration: a new org and a consumer-scoped key',
      tag: 'Accounts',
      auth: 'none',
      body: EmptyBody,
      success: { 201: env(RegistrationView, 'The new org and its key (also in the X-Svc-Key header).') },
      errors: [429],
    },
    async (ctx, { services }) => {
      const result = await services.accounts.register({ ip: ctx.ip });
      ctx.set('X-Svc-Key', result.api_key);
      noStore(ctx);
      return result;
    },
  ),
  route({ method: 'post', path: '/v1/signup', operationId: 'signup', ...SIGNUP }, signup),
  route(
    {
      method: 'post',
      path: '/v1/auth/signup',
      operationId: 'authSignup',
      ...SIGNUP,
      summary: 'Human signup (alias of /v1/signup)',
    },
    signup,
  ),
  route(
    {
      method: 'post',
      path: '/v1/auth/verify-email',
      operationId: 'verifyEmail',
      summary: 'Verify an email: elevates the key in place and releases withheld credits',
      tag: 'Accounts',
      auth: 'none',
      body: VerifyEmailBody,
      success: { 200: env(VerifiedView, 'The email is verified.') },
      errors: [409, 422, 429],
    },
    (ctx, { services, body }) => {
      noStore(ctx);
      return services.emailVerification.verifyEmail(body);
    },
  ),
  route(
    {
      method: 'post',
      path: '/v1/auth/login/request',
      operationId: 'loginRequest',
      summary: 'Mail a 6-digit sign-in code (generic answer for known and unknown emails)',
      tag: 'Accounts',
      auth: 'none',
      body: LoginRequestBody,
      success: { 200: env(LoginRequestView, 'The generic answer.') },
      errors: [429],
    },
    (ctx, { services, body }) => {
      noStore(ctx);
      return services.loginCodes.requestLoginCode(body, clientOf(ctx));
    },
  ),
  route(
    {
      method: 'post',
      path: '/v1/auth/login/verify',
      operationId: 'loginVerify',
      summary: 'Exchange the code for a session; grants starter credits once',
      tag: 'Accounts',
      auth: 'none',
      body: LoginVerifyBody,
      success: { 200: env(SessionView, 'The new session.') },
      errors: [401, 422, 429],
    },
    (ctx, { services, body }) => {
      noStore(ctx);
      return services.loginCodes.verifyLoginCode(body, clientOf(ctx));
    },
  ),
  route(
    {
      method: 'post',
      path: '/v1/auth/logout',
      operationId: 'logout',
      summary: 'End the current session',
      tag: 'Accounts',
      auth: 'session',
      body: EmptyBody,
      success: { 200: env(LogoutView, 'The session is over.') },
    },
    (_ctx, { services, principal }) => {
      if (principal.type !== 'session') throw new Error('unreachable: auth() requires a session');
      return services.loginCodes.logout(principal.sessionId);
    },
  ),
  route(
    {
      method: 'get',
      path: '/v1/me',
      operationId: 'getMe',
      summary: 'The caller: org, credits, scopes, credential',
      tag: 'Accounts',
      auth: 'bearer',
      success: { 200: env(MeView, 'The caller.') },
      errors: [404],
    },
    (_ctx, { services, principal }) => services.accounts.me(principal),
  ),
  // Agent-first elevation: an anonymous org's root key attaches an email; the mailed link elevates it in place.
  route(
    {
      method: 'post',
      path: '/v1/me/email',
      operationId: 'attachEmail',
      summary: "Attach an email to an anonymous org's root key (the mailed link elevates it)",
      tag: 'Accounts',
      auth: 'bearer',
      body: AttachEmailBody,
      success: { 200: env(AttachEmailView, 'The link is on its way.') },
      errors: [409, 429],
    },
    (ctx, { services, principal, body }) => {
      noStore(ctx);
      return services.emailVerification.attachEmail(principal, body, clientOf(ctx));
    },
  ),
];

export const accountsRoutes = (services: Services) => mountRoutes(services, ACCOUNTS_ROUTES);
