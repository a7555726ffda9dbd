/**
 * The human pages' forms toolkit (issue 24: one forms module): the CSRF double submit (`csrfToken`, `readForm`), the
 * readers and the zod parse with a 400 naming the fields, the signed-in person (`signedIn`, `requireSignedIn`), the
 * page renderer and error mapping, and the email and code steps every sign-in shares (`/login` and the OAuth pages).
 */
import { untilUsageDrained } from '../../core/spend/usage-barrier.js';
import type { z } from 'zod';
import { SESSION_COOKIE } from '../../core/auth/authenticator.js';
import { randomString, safeEqual } from '../../core/crypto.js';
import { type AppError, ForbiddenError, toAppError, ValidationError } from '../../core/errors.js';
import { SESSION_ABSOLUTE_MS, type SessionPrincipal } from '../../core/sessions/sessions.service.js';
import type { Services } from '../../platform/services.js';
import type { AppContext } from '../context.js';
import { readRawBody } from '../middleware/body.js';
import { fromHttpError } from '../middleware/error-envelope.js';
import { escapeHtml, page, PAGE_CSP } from './layout.js';
import {
  fieldMessage,
  type FormFields,
  type FormProblems,
  invalidAttrs,
  parseFormFields,
  problemsOf,
  problemSummary,
} from './form-errors.js';

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

/**
 * The submitted form after the CSRF check (double submit: the hidden field must match the cookie). `limit`: a larger
 * body for a form that carries documents (the endpoint editor's JSON Schemas).
 */
export async function readFormParams(ctx: AppContext, limit = FORM_LIMIT): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) throw new ValidationError('Submit the form from the page.');
  const params = new URLSearchParams((await readRawBody(ctx, limit)).toString('utf8'));
  const cookie = ctx.cookies.get(CSRF_COOKIE);
  const sent = params.get('csrf');
  if (!cookie || !sent || !safeEqual(cookie, sent)) {
    throw new ForbiddenError('This form has expired; reload the page and try again.');
  }
  params.delete('csrf');
  return params;
}

export async function readForm(ctx: AppContext, limit?: number): Promise<Record<string, string>> {
  return Object.fromEntries((await readFormParams(ctx, limit)).entries());
}

/**
 * Parse with a route's own zod schema; a failure is a 400 `FormError` worded for people, one message per field, each
 * named by its label in `fields` (form-errors.ts; pages and console forms).
 */
export function parseForm<S extends z.ZodType>(schema: S, value: unknown, fields?: FormFields): z.output<S> {
  return parseFormFields(schema, value, fields);
}

export const hidden = (name: string, value: string) =>
  `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
export const errorLine = (message?: string) =>
  message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : '';

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

/**
 * The signed-in person, or a 303 to `/login` that comes back to `next` (default: this page for a GET) and undefined:
 * the caller returns at once.
 */
export async function requireSignedIn(
  ctx: AppContext,
  services: Services,
  next = ctx.method === 'GET' ? ctx.originalUrl.slice(0, 200) : undefined,
): Promise<SessionPrincipal | undefined> {
  const person = await signedIn(ctx, services);
  if (person) return person;
  ctx.status = 303;
  ctx.redirect(next ? `/login?next=${encodeURIComponent(next)}` : '/login');
  return undefined;
}

/** A signed-in page action: its title, the page it belongs to (sign-in returns there), the error page's link text. */
export interface SignedInAction {
  title: string;
  back: (ctx: AppContext) => string;
  backText: string;
}

/**
 * A page form's POST acting for the signed-in person: the form (CSRF-checked), then the person (else a 303 to sign in
 * that comes back to the page), then `fn`; an error is a page with its message and a link back to the page.
 */
export function signedInPost(
  services: Services,
  page: SignedInAction,
  fn: (ctx: AppContext, person: SessionPrincipal, form: URLSearchParams) => Promise<void>,
) {
  return pageHandler(
    async (ctx) => {
      const form = await readFormParams(ctx);
      const person = await requireSignedIn(ctx, services, page.back(ctx));
      if (!person) return;
      await fn(ctx, person, form);
    },
    (ctx, err) =>
      render(
        ctx,
        err.status,
        page.title,
        `${errorLine(err.message)}<p><a href="${escapeHtml(page.back(ctx))}">${escapeHtml(page.backText)}</a></p>`,
      ),
  );
}

/** The email step of a sign-in: where it posts, what it says first, what it carries, what follows the form. */
export interface EmailStep {
  action: string;
  csrf: string;
  message?: string;
  /** A refusal to show beside its field (the email) and above the form; else `message`, if any. */
  problems?: FormProblems;
  email?: string;
  intro?: string;
  hiddenFields?: Record<string, string | undefined>;
  after?: string;
}

const hiddenAll = (fields: Record<string, string | undefined> = {}) =>
  Object.entries(fields)
    .filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')
    .map(([k, v]) => hidden(k, v))
    .join('\n  ');

export function emailStep(s: EmailStep): string {
  return `${problemSummary(s.problems) || errorLine(s.message)}${s.intro ? `\n${s.intro}` : ''}
<form method="post" action="${escapeHtml(s.action)}">
  ${hidden('csrf', s.csrf)}
  ${hiddenAll(s.hiddenFields)}
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(s.email ?? '')}"${invalidAttrs(s.problems, 'email')}>${fieldMessage(s.problems, 'email')}
  <button type="submit">Email me a code</button>
</form>${s.after ? `\n${s.after}` : ''}`;
}

/** The sign-in forms' fields, as the person reads them (form-errors.ts). */
export const SIGN_IN_FIELDS = { email: 'Email', code: 'Code' };

/** A refusal of the code step: a wrong or expired code (401) is shown beside the code field. */
export function codeProblems(err: AppError): FormProblems {
  const problems = problemsOf(err, SIGN_IN_FIELDS);
  return Object.keys(problems.fields).length || err.status !== 401
    ? problems
    : { message: err.message, fields: { code: err.message } };
}

/** The code step: the 6-digit code mailed to `email`, posted with it. */
export interface CodeStep {
  action: string;
  csrf: string;
  email: string;
  message?: string;
  /** A refusal to show beside its field (the code) and above the form; else `message`, if any. */
  problems?: FormProblems;
  intro: string;
  submitLabel: string;
  hiddenFields?: Record<string, string | undefined>;
  after?: string;
  /** How this marketplace sends mail (`config.mail.kind`): with none configured, the step says where the code is. */
  mail: 'smtp' | 'console';
}

/**
 * With no SMTP_URL the mail is printed where the marketplace runs (`npm start`'s terminal), so the code step says so
 * rather than leaving a newcomer to search an inbox.
 */
export const PRINTED_MAIL_NOTE = `<p class="muted">This marketplace sends no email yet (no <code>SMTP_URL</code> is set): the
mail is printed in the terminal where the marketplace runs (<code>npm start</code>), under “Mail to” your address.</p>`;

export function codeStep(s: CodeStep): string {
  return `${problemSummary(s.problems) || errorLine(s.message)}
${s.intro}${s.mail === 'console' ? `\n${PRINTED_MAIL_NOTE}` : ''}
<form method="post" action="${escapeHtml(s.action)}">
  ${hidden('csrf', s.csrf)}
  ${hiddenAll(s.hiddenFields)}
  ${hidden('email', s.email)}
  <label for="code">Code</label>
  <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required${invalidAttrs(s.problems, 'code')}>${fieldMessage(s.problems, 'code')}
  <button type="submit">${escapeHtml(s.submitLabel)}</button>
</form>${s.after ? `\n${s.after}` : ''}`;
}
