/**
 * Pages for the human steps, on the control plane: `/login` (a code by email, then a session cookie) and
 * `/verify-email` (the link in the verification mail; a button, so mail scanners that follow links do not use up
 * the token). Forms carry a CSRF token that must match the `svc_csrf` cookie (double submit).
 */
import type Router from '@koa/router';
import { LoginRequestBody, LoginVerifyBody, VerifyEmailBody } from '../../core/accounts/accounts.schemas.js';
import { SESSION_COOKIE } from '../../core/auth/authenticator.js';
import { type AppError, ValidationError } from '../../core/errors.js';
import type { Services } from '../../platform/services.js';
import type { AppContext, AppState } from '../context.js';
import { clientOf } from '../middleware/auth.js';
import {
  codeProblems,
  codeStep,
  type CodeStep,
  csrfToken,
  emailStep,
  errorLine,
  pageHandler,
  parseForm,
  readForm,
  render,
  safeNext,
  SIGN_IN_FIELDS,
  signInBrowser,
} from './forms.js';
import { escapeHtml } from './layout.js';
import { type FormProblems, problemsOf } from './form-errors.js';
import { verifyEmailConfirmation } from './verify-email.page.js';
import { pageAndForm, pageOperation } from '../openapi/operation.js';
import { pageRouter } from './page-router.js';

function emailForm(csrf: string, problems?: FormProblems, email = '', next?: string): string {
  return emailStep({
    action: '/login',
    csrf,
    problems,
    email,
    hiddenFields: { next },
    after: `<p class="muted">New here? <a href="/signup${next ? `?next=${encodeURIComponent(next)}` : ''}">Create an account</a>.</p>`,
  });
}

function codeForm(mail: CodeStep['mail'], csrf: string, email: string, problems?: FormProblems, next?: string): string {
  return codeStep({
    mail,
    action: '/login/verify',
    csrf,
    email,
    problems,
    intro: `<p>If an account exists for <strong>${escapeHtml(email)}</strong>, we sent it a 6-digit code. It works for 10 minutes.</p>`,
    submitLabel: 'Sign in',
    hiddenFields: { next },
    after: '<p class="muted"><a href="/login">Use another email or get a new code</a></p>',
  });
}

/** The verification page's error: the message and the way back to signing in. */
const verifyError = (ctx: AppContext, err: AppError) =>
  render(
    ctx,
    err.status,
    'Verify your email',
    `${errorLine(err.message)}<p><a href="/login">Sign in with a code instead</a></p>`,
  );

/** `/login`: the email step (GET, POST mails the code), then `/login/verify` (the code sets the session cookie). */
function loginPages(router: Router<AppState>, services: Services): void {
  router.get('/login', (ctx) => {
    render(ctx, 200, 'Sign in', emailForm(csrfToken(ctx), undefined, '', safeNext(ctx.query.next)));
  });

  router.post(
    '/login',
    pageHandler(
      async (ctx) => {
        const form = await readForm(ctx);
        ctx.state.pageNext = safeNext(form.next);
        ctx.state.pageEmail = (form.email ?? '').slice(0, 320);
        const body = parseForm(LoginRequestBody, { email: form.email }, SIGN_IN_FIELDS);
        await services.loginCodes.requestLoginCode(body, clientOf(ctx));
        render(
          ctx,
          200,
          'Check your email',
          codeForm(services.config.mail.kind, csrfToken(ctx), body.email, undefined, ctx.state.pageNext),
        );
      },
      (ctx, err) =>
        render(
          ctx,
          err.status,
          'Sign in',
          emailForm(csrfToken(ctx), problemsOf(err, SIGN_IN_FIELDS), ctx.state.pageEmail ?? '', ctx.state.pageNext),
        ),
    ),
  );

  router.post(
    '/login/verify',
    pageHandler(
      async (ctx) => {
        const form = await readForm(ctx);
        ctx.state.pageEmail = form.email ?? '';
        ctx.state.pageNext = safeNext(form.next);
        const body = parseForm(LoginVerifyBody, { email: form.email, code: form.code }, SIGN_IN_FIELDS);
        const session = await services.loginCodes.verifyLoginCode(body, clientOf(ctx));
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
            ? codeForm(services.config.mail.kind, csrf, email, codeProblems(err), ctx.state.pageNext)
            : emailForm(csrf, problemsOf(err, SIGN_IN_FIELDS), '', ctx.state.pageNext),
        );
      },
    ),
  );
}

/** `POST /logout`: ends the session (if any) and drops its cookie. */
function logoutPage(router: Router<AppState>, services: Services): void {
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
}

/** `/verify-email`: the mailed link shows a button (GET reads only); its POST verifies. */
function verifyEmailPages(router: Router<AppState>, services: Services): void {
  router.get(
    '/verify-email',
    pageHandler(async (ctx) => {
      const token = typeof ctx.query.token === 'string' ? ctx.query.token : '';
      if (!token) throw new ValidationError('This link is missing its token. Open the link from the email again.');
      // Read only: the click below, a POST with the CSRF token, is what verifies (mail scanners follow links).
      const facts = await services.emailVerification.describeVerification(token);
      render(ctx, 200, 'Verify your email', verifyEmailConfirmation(facts, csrfToken(ctx), token));
    }, verifyError),
  );

  router.post(
    '/verify-email',
    pageHandler(async (ctx) => {
      const form = await readForm(ctx);
      const body = parseForm(VerifyEmailBody, { token: form.token });
      const result = await services.emailVerification.verifyEmail(body);
      const credit = (result.credit_cents / 100).toFixed(2);
      render(
        ctx,
        200,
        'Email verified',
        `<p class="ok" role="status">Thank you, <strong>${escapeHtml(result.user.email)}</strong> is verified.</p>
<p>Your balance is <strong>$${credit}</strong>. Billing and provider features are unlocked on your key.</p>`,
      );
    }, verifyError),
  );
}

export const pagesRoutes = (services: Services) => pageRouter(services, loginPages, logoutPage, verifyEmailPages);

/** The documented operations of this file's routes (api/openapi/operations.ts gathers them). */
export const SIGN_IN_PAGE_OPERATIONS = [
  ...pageAndForm('/login', 'Login', 'Sign-in page', 'Sign-in: mail a code'),
  pageOperation('post', '/login/verify', 'postLoginVerifyPage', 'Sign-in: check the code, set the session cookie'),
  pageOperation('post', '/logout', 'postLogoutPage', 'Sign out'),
  ...pageAndForm('/verify-email', 'VerifyEmail', 'Email verification page', 'Email verification'),
];
