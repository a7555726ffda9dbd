/**
 * `/signup`: creating an account in the browser (issue 22): email (and a name), then the 6-digit code mailed to it,
 * then signed in and in the console. The bot challenge is the spec's rule for human signup (required in production:
 * the form carries the widget's `challenge_token`); no account exists until the code proves the address, and an
 * address that already has one is simply signed in (the page says the same either way).
 */
import type Router from '@koa/router';
import { LoginVerifyBody, SignupBody } from '../../core/accounts/accounts.schemas.js';
import type { Services } from '../../platform/services.js';
import type { AppContext, AppState } from '../context.js';
import { clientOf } from '../middleware/auth.js';
import { escapeHtml } from './layout.js';
import {
  codeProblems,
  codeStep,
  csrfToken,
  hidden,
  pageHandler,
  parseForm,
  readForm,
  render,
  safeNext,
  SIGN_IN_FIELDS,
  signInBrowser,
} from './forms.js';
import { pageAndForm, pageOperation } from '../openapi/operation.js';
import { pageRouter } from './page-router.js';
import { fieldMessage, type FormProblems, invalidAttrs, problemsOf, problemSummary } from './form-errors.js';

interface SignupState {
  email: string;
  name: string;
  next?: string;
}

/** The sign-up form's fields, as the person reads them (form-errors.ts). */
const SIGNUP_FIELDS = { ...SIGN_IN_FIELDS, name: 'Name', challenge_token: 'Bot check' };

function signupForm(ctx: AppContext, services: Services, state: SignupState, p?: FormProblems): string {
  const challenge =
    services.config.env === 'production'
      ? `<label for="challenge_token">Bot check</label>
  <input id="challenge_token" name="challenge_token" required${invalidAttrs(p, 'challenge_token')}>${fieldMessage(p, 'challenge_token')}`
      : '';
  return `${problemSummary(p)}
<form method="post" action="/signup">
  ${hidden('csrf', csrfToken(ctx))}
  ${state.next ? hidden('next', state.next) : ''}
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(state.email)}"${invalidAttrs(p, 'email')}>${fieldMessage(p, 'email')}
  <label for="name">Your name or your company's (optional)</label>
  <input id="name" name="name" autocomplete="name" maxlength="100" value="${escapeHtml(state.name)}"${invalidAttrs(p, 'name')}>${fieldMessage(p, 'name')}
  ${challenge}
  <button type="submit">Email me a code</button>
</form>
<p class="muted">Already have an account? <a href="/login${state.next ? `?next=${encodeURIComponent(state.next)}` : ''}">Sign in</a>.</p>`;
}

function codeForm(ctx: AppContext, services: Services, state: SignupState, problems?: FormProblems): string {
  return codeStep({
    mail: services.config.mail.kind,
    action: '/signup/verify',
    csrf: csrfToken(ctx),
    email: state.email,
    problems,
    intro: `<p>We sent a 6-digit code to <strong>${escapeHtml(state.email)}</strong>. It works for 10 minutes.</p>`,
    submitLabel: 'Create my account',
    hiddenFields: { next: state.next, name: state.name },
    after: '<p class="muted"><a href="/signup">Use another email or get a new code</a></p>',
  });
}

function stateOf(form: Record<string, string | undefined>): SignupState {
  return { email: (form.email ?? '').slice(0, 320), name: (form.name ?? '').slice(0, 100), next: safeNext(form.next) };
}

// What the person typed, kept on the request (never shared between requests) for the error page.
function remember(ctx: AppContext, state: SignupState): SignupState {
  ctx.state.pageEmail = state.email;
  ctx.state.pageName = state.name;
  ctx.state.pageNext = state.next;
  return state;
}

const recall = (ctx: AppContext): SignupState => ({
  email: ctx.state.pageEmail ?? '',
  name: ctx.state.pageName ?? '',
  next: ctx.state.pageNext,
});

/** `/signup`: the form (GET), and its POST, which mails the code (no account exists yet). */
function signupForms(router: Router<AppState>, services: Services): void {
  router.get('/signup', (ctx) => {
    const email = typeof ctx.query.email === 'string' ? ctx.query.email : '';
    render(
      ctx,
      200,
      'Create an account',
      signupForm(ctx, services, { email, name: '', next: safeNext(ctx.query.next) }),
    );
  });

  router.post(
    '/signup',
    pageHandler(
      async (ctx) => {
        const form = await readForm(ctx);
        const posted = remember(ctx, stateOf(form));
        const body = parseForm(
          SignupBody,
          {
            email: form.email,
            ...(form.name?.trim() ? { name: form.name } : {}),
            ...(form.challenge_token ? { challenge_token: form.challenge_token } : {}),
          },
          SIGNUP_FIELDS,
        );
        await services.signup.requestSignupCode(body, clientOf(ctx));
        render(ctx, 200, 'Check your email', codeForm(ctx, services, { ...posted, email: body.email }));
      },
      (ctx, err) =>
        render(
          ctx,
          err.status,
          'Create an account',
          signupForm(ctx, services, recall(ctx), problemsOf(err, SIGNUP_FIELDS)),
        ),
    ),
  );
}

/** `POST /signup/verify`: the code creates the account (or signs in the one that exists) and signs the browser in. */
function signupVerify(router: Router<AppState>, services: Services): void {
  router.post(
    '/signup/verify',
    pageHandler(
      async (ctx) => {
        const form = await readForm(ctx);
        const posted = remember(ctx, stateOf(form));
        const body = parseForm(LoginVerifyBody, { email: form.email, code: form.code }, SIGNUP_FIELDS);
        const name = form.name?.trim() ? form.name.trim().slice(0, 100) : undefined;
        const session = await services.signup.verifySignupCode(body, clientOf(ctx), name);
        signInBrowser(ctx, session.session_token, posted.next);
      },
      (ctx, err) => {
        const posted = recall(ctx);
        render(
          ctx,
          err.status,
          posted.email ? 'Check your email' : 'Create an account',
          posted.email
            ? codeForm(ctx, services, posted, codeProblems(err))
            : signupForm(ctx, services, posted, problemsOf(err, SIGNUP_FIELDS)),
        );
      },
    ),
  );
}

export const signupPages = (services: Services) => pageRouter(services, signupForms, signupVerify);

/** The documented operations of this file's routes (api/openapi/operations.ts gathers them). */
export const SIGNUP_PAGE_OPERATIONS = [
  ...pageAndForm('/signup', 'Signup', 'Sign-up page', 'Sign-up: mail a code'),
  pageOperation(
    'post',
    '/signup/verify',
    'postSignupVerifyPage',
    'Sign-up: check the code, create the account, set the session cookie',
  ),
];
