/**
 * The OAuth authorize step's sign-in (spec, Authentication rule 7): the email (GET and POST
 * `/oauth/interaction/:uid`, `…/email`), then the one-time code mailed to it (`…/code`, the sign-in code rules; an
 * unknown address gets an account on first use), which leads to the consent page (oauth-consent.page.ts). The GET is
 * also where "Not you?" leads: it forgets the address proven so far. Server-rendered, no JavaScript, CSRF double
 * submit, the pages' strict CSP.
 */
import type Router from '@koa/router';
import { LoginRequestBody, LoginVerifyBody } from '../../core/accounts/accounts.schemas.js';
import { ValidationError } from '../../core/errors.js';
import { INTERACTION_TTL_S, OAUTH_PATHS } from '../../core/oauth/oauth-provider.js';
import type { AppContext, AppState } from '../context.js';
import { clientOf } from '../middleware/auth.js';
import { codeStep, readForm, render } from './forms.js';
import { escapeHtml } from './layout.js';
import { consentForm } from './oauth-consent.page.js';
import {
  allowRedirectTo,
  base,
  clientLine,
  clientOfInteraction,
  type ClientView,
  csrf,
  denyForm,
  emailForm,
  notYou,
  type OAuthPagesDeps,
  oauthPage,
  type Proof,
  proofKey,
} from './oauth-interaction.js';

const codeForm = (
  deps: OAuthPagesDeps,
  ctx: AppContext,
  c: ClientView,
  email: string,
  message?: string,
) => `${clientLine(c)}
${codeStep({
  mail: deps.services.config.mail.kind,
  action: `${base(ctx)}/code`,
  csrf: csrf(ctx),
  email,
  message,
  intro: `<p>We sent a 6-digit code to <strong>${escapeHtml(email)}</strong>. It works for 10 minutes.</p>`,
  submitLabel: 'Continue',
  after: `${notYou(ctx, 'Use another email or get a new code')}\n${denyForm(ctx)}`,
})}`;

/** GET: the first visit, or "Not you?" from a later step. */
function emailPage(router: Router<AppState>, deps: OAuthPagesDeps): void {
  router.get(
    `${OAUTH_PATHS.interaction}/:uid`,
    oauthPage('Authorize an agent', async (ctx) => {
      const { details, client } = await clientOfInteraction(deps, ctx);
      // Whoever proved an address here before must prove theirs again, so an approval never mints a key for the
      // address this browser proved first.
      await deps.services.counters.del(proofKey(details.uid));
      render(ctx, 200, 'Authorize an agent', emailForm(ctx, client));
      allowRedirectTo(ctx, client);
    }),
  );
}

/** POST …/email: mail a code (to an unknown address too: it gets an account on first use). */
function emailPost(router: Router<AppState>, deps: OAuthPagesDeps): void {
  router.post(
    `${OAUTH_PATHS.interaction}/:uid/email`,
    oauthPage(
      'Authorize an agent',
      async (ctx) => {
        const form = await readForm(ctx);
        const { client } = await clientOfInteraction(deps, ctx);
        const body = LoginRequestBody.safeParse({ email: form.email });
        if (!body.success) {
          render(ctx, 400, 'Authorize an agent', emailForm(ctx, client, 'Enter a valid email address.'));
          return;
        }
        await deps.services.loginCodes.requestLoginCode(body.data, clientOf(ctx), { mailUnknown: true });
        render(ctx, 200, 'Check your email', codeForm(deps, ctx, client, body.data.email));
        allowRedirectTo(ctx, client);
      },
      async (ctx, err) => {
        const { client } = await clientOfInteraction(deps, ctx);
        render(ctx, err.status, 'Authorize an agent', emailForm(ctx, client, err.message));
      },
    ),
  );
}

/** POST …/code: the mailed code proves the address (kept for this interaction); the consent page follows. */
function codePost(router: Router<AppState>, deps: OAuthPagesDeps): void {
  router.post(
    `${OAUTH_PATHS.interaction}/:uid/code`,
    oauthPage(
      'Check your email',
      async (ctx) => {
        const form = await readForm(ctx);
        ctx.state.pageEmail = form.email ?? '';
        const { details, client } = await clientOfInteraction(deps, ctx);
        const body = LoginVerifyBody.safeParse({ email: form.email, code: form.code });
        if (!body.success) throw new ValidationError('Enter the 6-digit code from the email.');
        const person = await deps.services.oauthEmailProof.verifyCodeForOAuth(body.data, clientOf(ctx));
        const proof: Proof = { orgId: person.orgId, email: person.email };
        await deps.services.counters.set(proofKey(details.uid), JSON.stringify(proof), INTERACTION_TTL_S * 1000);
        render(ctx, 200, 'Approve the agent', consentForm(ctx, client, proof));
        allowRedirectTo(ctx, client);
      },
      async (ctx, err) => {
        const { client } = await clientOfInteraction(deps, ctx);
        const email = String(ctx.state.pageEmail ?? '');
        render(ctx, err.status, 'Check your email', codeForm(deps, ctx, client, email, err.message));
      },
    ),
  );
}

/** The sign-in steps of the OAuth authorize pages. */
export function oauthSignInPages(router: Router<AppState>, deps: OAuthPagesDeps): void {
  emailPage(router, deps);
  emailPost(router, deps);
  codePost(router, deps);
}
