/**
 * Pages for the human steps, on the control plane: `/login` (a code by email, then a session cookie) and
 * `/verify-email` (the link in the verification mail; a button, so mail scanners that follow links do not use up
 * the token). Forms carry a CSRF token that must match the `svc_csrf` cookie (double submit).
 */
import { untilUsageDrained } from '../../core/spend/usage-barrier.js';
import Router from '@koa/router';
import type { z } from 'zod';
import { LoginRequestBody, LoginVerifyBody, VerifyEmailBody } from '../../core/accounts/accounts.schemas.js';
import { SESSION_COOKIE } from '../../core/auth/authenticator.js';
import { randomString, safeEqual } from '../../core/crypto.js';
import { type AppError, ForbiddenError, toAppError, ValidationError } from '../../core/errors.js';
import { SESSION_ABSOLUTE_MS, type SessionPrincipal } from '../../core/sessions/sessions.service.js';
import type { Services } from '../../platform/services.js';
import type { AppContext, AppState } from '../context.js';
import { formatIssues, readRawBody } from '../middleware/body.js';
import { fromHttpError } from '../middleware/error-envelope.js';
import { clientOf } from '../middleware/auth.js';
import { escapeHtml, page, PAGE_CSP } from './layout.js';
import { verifyEmailConfirmation } from './verify-email.page.js';

const CSRF_COOKIE = 'svc_csrf';

/** Where to go after signing in: only a path on this site (never `//host` or a full URL). */
/**
 * Where to go after signing in: a path on this site only (one leading slash, no scheme, host, backslash or fragment),
 * with an optional plain query string (`/console/usage?outcome=failed`), at most 200 characters; else undefined.
 */
export function safeNext(value: unknown): string | undefined {
  return typeof value === 'string' &&
    /^\/(?!\/)[A-Za-z0-9/_.~%-]*(\?[A-Za-z0-9_.~%=&+,-]*)?$/.test(value) &&
    value.length <= 200
    ? value
    : undefined;
}
const FORM_LIMIT = 16 * 1024;

/** The person signed in through the session cookie, if any (pages never take bearer keys). */
export async function signedIn(ctx: AppContext, services: Services): Promise<SessionPrincipal | undefined> {
  const token = ctx.cookies.get(SESSION_COOKIE);
  if (!token) return undefined;
  let principal: SessionPrincipal;
  try {
    principal = await services.sessions.authenticate(token);
  } catch {
    return undefined;
  }
  await untilUsageDrained(services.spend, principal.orgId);
  return principal;
}

/** A route parameter (page handlers see the plain context type). */
export function paramOf(ctx: AppContext, name: string): string {
  return String((ctx as AppContext & { params?: Record<string, string> }).params?.[name] ?? '');
}

export function render(ctx: AppContext, status: number, title: string, body: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', PAGE_CSP);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  ctx.body = page(title, body);
}

/** Cookies are `Secure` whenever the request arrived over HTTPS (directly, or per X-Forwarded-Proto behind our proxies). */
function secureCookies(ctx: AppContext): boolean {
  return ctx.secure;
}

export function csrfToken(ctx: AppContext): string {
  if (ctx.state.csrf) return ctx.state.csrf;
  let token = ctx.cookies.get(CSRF_COOKIE);
  if (!token || !/^[0-9A-Za-z]{32}$/.test(token)) {
    // A first visit with several forms: one new token for all of them (each call minting its own left every form
    // but the last with a token its cookie no longer held).
    token = randomString(32);
    ctx.cookies.set(CSRF_COOKIE, token, { httpOnly: true, sameSite: 'strict', secure: secureCookies(ctx), path: '/' });
  }
  ctx.state.csrf = token;
  return token;
}

/** The submitted form after the CSRF check (double submit: the hidden field must match the cookie). */
export async function readFormParams(ctx: AppContext): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) throw new ValidationError('Submit the form from the page.');
  const params = new URLSearchParams((await readRawBody(ctx, FORM_LIMIT)).toString('utf8'));
  const cookie = ctx.cookies.get(CSRF_COOKIE);
  const sent = params.get('csrf');
  if (!cookie || !sent || !safeEqual(cookie, sent)) {
    throw new ForbiddenError('This form has expired; reload the page and try again.');
  }
  params.delete('csrf');
  return params;
}

export async function readForm(ctx: AppContext): Promise<Record<string, string>> {
  return Object.fromEntries((await readFormParams(ctx)).entries());
}

/** Parse with a route's own zod schema; a failure is a 400 whose message names the fields (pages and console forms). */
export function parseForm<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw new ValidationError(formatIssues(r.error).message);
  return r.data;
}

export const hidden = (name: string, value: string) =>
  `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
export const errorLine = (message?: string) =>
  message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : '';

function emailForm(csrf: string, message?: string, email = '', next?: string): string {
  return `${errorLine(message)}
<form method="post" action="/login">
  ${hidden('csrf', csrf)}
  ${next ? hidden('next', next) : ''}
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(email)}">
  <button type="submit">Email me a code</button>
</form>
<p class="muted">New here? <a href="/signup${next ? `?next=${encodeURIComponent(next)}` : ''}">Create an account</a>.</p>`;
}

function codeForm(csrf: string, email: string, message?: string, next?: string): string {
  return `${errorLine(message)}
<p>If an account exists for <strong>${escapeHtml(email)}</strong>, we sent it a 6-digit code. It works for 10 minutes.</p>
<form method="post" action="/login/verify">
  ${hidden('csrf', csrf)}
  ${next ? hidden('next', next) : ''}
  ${hidden('email', email)}
  <label for="code">Code</label>
  <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
  <button type="submit">Sign in</button>
</form>
<p class="muted"><a href="/login">Use another email or get a new code</a></p>`;
}

/**
 * What a page shows for a failure: the typed error as it is; anything else mapped as the API maps it (a dependency down
 * is 503, Stripe refusing us 502, an unknown error a masked 500). A 5xx is logged here with its cause, as the error
 * middleware does for the API, since the page answers instead of it.
 */
export function pageError(ctx: AppContext, err: unknown): AppError {
  const appError = fromHttpError(err) ?? toAppError(err);
  if (appError.status >= 500) {
    ctx.state.log.error({ err: appError.cause ?? appError, code: appError.code }, 'page request failed');
  }
  return appError;
}

/**
 * Set the session cookie and go on: to `next` when the person was on their way somewhere, else the console's overview
 * (issue 22: signing in used to end on a page with only a "Sign out" button).
 */
export function signInBrowser(ctx: AppContext, sessionToken: string, next: string | undefined): void {
  ctx.cookies.set(SESSION_COOKIE, sessionToken, {
    httpOnly: true,
    sameSite: 'lax',
    secure: secureCookies(ctx),
    path: '/',
    maxAge: SESSION_ABSOLUTE_MS,
  });
  ctx.status = 303;
  ctx.redirect(next ?? '/console');
}

/** Run a page handler; every error becomes an HTML page with the error's status (never the JSON envelope). */
export function pageHandler(fn: (ctx: AppContext) => Promise<void>, onError: (ctx: AppContext, err: AppError) => void) {
  return async (ctx: AppContext) => {
    try {
      await fn(ctx);
    } catch (err) {
      const appError = pageError(ctx, err);
      for (const [k, v] of Object.entries(appError.headers ?? {})) ctx.set(k, v);
      onError(ctx, appError);
    }
  };
}

export function pagesRoutes(services: Services): Router<AppState> {
  const router = new Router<AppState>();

  router.get('/login', (ctx) => {
    render(ctx, 200, 'Sign in', emailForm(csrfToken(ctx), undefined, '', safeNext(ctx.query.next)));
  });

  router.post(
    '/login',
    pageHandler(
      async (ctx) => {
        const form = await readForm(ctx);
        ctx.state.pageNext = safeNext(form.next);
        const body = parseForm(LoginRequestBody, { email: form.email });
        await services.identity.requestLoginCode(body, clientOf(ctx));
        render(ctx, 200, 'Check your email', codeForm(csrfToken(ctx), body.email, undefined, ctx.state.pageNext));
      },
      (ctx, err) => render(ctx, err.status, 'Sign in', emailForm(csrfToken(ctx), err.message, '', ctx.state.pageNext)),
    ),
  );

  router.post(
    '/login/verify',
    pageHandler(
      async (ctx) => {
        const form = await readForm(ctx);
        ctx.state.pageEmail = form.email ?? '';
        ctx.state.pageNext = safeNext(form.next);
        const body = parseForm(LoginVerifyBody, { email: form.email, code: form.code });
        const session = await services.identity.verifyLoginCode(body, clientOf(ctx));
        signInBrowser(ctx, session.session_token, ctx.state.pageNext);
      },
      (ctx, err) => {
        const email = String(ctx.state.pageEmail ?? '');
        const csrf = csrfToken(ctx);
        render(
          ctx,
          err.status,
          email ? 'Check your email' : 'Sign in',
          email
            ? codeForm(csrf, email, err.message, ctx.state.pageNext)
            : emailForm(csrf, err.message, '', ctx.state.pageNext),
        );
      },
    ),
  );

  router.post(
    '/logout',
    pageHandler(
      async (ctx) => {
        await readForm(ctx);
        const token = ctx.cookies.get(SESSION_COOKIE);
        if (token) {
          try {
            const principal = await services.sessions.authenticate(token);
            await services.sessions.revoke(principal.sessionId);
          } catch {
            // already ended
          }
        }
        ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', path: '/', maxAge: 0 });
        render(
          ctx,
          200,
          'Signed out',
          '<p class="ok" role="status">You are signed out.</p><p><a href="/login">Sign in again</a></p>',
        );
      },
      (ctx, err) => render(ctx, err.status, 'Sign out', errorLine(err.message)),
    ),
  );

  router.get(
    '/verify-email',
    pageHandler(
      async (ctx) => {
        const token = typeof ctx.query.token === 'string' ? ctx.query.token : '';
        if (!token) throw new ValidationError('This link is missing its token. Open the link from the email again.');
        // Read only: the click below, a POST with the CSRF token, is what verifies (mail scanners follow links).
        const facts = await services.identity.describeVerification(token);
        render(ctx, 200, 'Verify your email', verifyEmailConfirmation(facts, csrfToken(ctx), token));
      },
      (ctx, err) =>
        render(
          ctx,
          err.status,
          'Verify your email',
          `${errorLine(err.message)}<p><a href="/login">Sign in with a code instead</a></p>`,
        ),
    ),
  );

  router.post(
    '/verify-email',
    pageHandler(
      async (ctx) => {
        const form = await readForm(ctx);
        const body = parseForm(VerifyEmailBody, { token: form.token });
        const result = await services.identity.verifyEmail(body);
        const credit = (result.credit_cents / 100).toFixed(2);
        render(
          ctx,
          200,
          'Email verified',
          `<p class="ok" role="status">Thank you, <strong>${escapeHtml(result.user.email)}</strong> is verified.</p>
<p>Your balance is <strong>$${credit}</strong>. Billing and provider features are unlocked on your key.</p>`,
        );
      },
      (ctx, err) =>
        render(
          ctx,
          err.status,
          'Verify your email',
          `${errorLine(err.message)}<p><a href="/login">Sign in with a code instead</a></p>`,
        ),
    ),
  );

  return router;
}
