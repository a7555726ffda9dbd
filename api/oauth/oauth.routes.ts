/**
 * The OAuth 2.1 authorization server on the control plane (core/oauth/oauth-provider.ts) and the person's step
 * (spec, Authentication rule 7). The protocol endpoints are oidc-provider's, served as they are; the metadata is also
 * served at the RFC 8414 address. The authorize step is three server-rendered pages (no JavaScript, CSRF double
 * submit, strict CSP): an email, the one-time code mailed to it (the sign-in code rules; an unknown address gets an
 * account on first use), then consent naming the client and its redirect host, where the person sets the new key's
 * money caps. Approval mints the key and grants the client; denial sends `access_denied` back to the client. The code
 * and consent pages link back to the email step ("Not you?"), which forgets the address proven so far.
 */
import type { IncomingMessage } from 'node:http';
import Router from '@koa/router';
import type Provider from 'oidc-provider';
import { LoginRequestBody, LoginVerifyBody } from '../../core/accounts/accounts.schemas.js';
import { sha256Hex } from '../../core/crypto.js';
import { AppError, ValidationError } from '../../core/errors.js';
import { DEFAULT_OAUTH_CAPS, mintOAuthKey, OAuthKeyCaps, oauthKeyName } from '../../core/oauth/oauth-approval.js';
import { createOAuthProvider, INTERACTION_TTL_S, mcpResource, OAUTH_PATHS } from '../../core/oauth/oauth-provider.js';
import { SCOPES } from '../../core/auth/scopes.js';
import type { Services } from '../../platform/services.js';
import type { AppContext, AppState } from '../context.js';
import { clientOf } from '../middleware/auth.js';
import { escapeHtml, PAGE_CSP } from '../pages/layout.js';
import { codeStep, csrfToken, emailStep, errorLine, hidden, paramOf, readForm, render } from '../pages/forms.js';

/** One CSRF token per response (the pages' helper would set a second cookie when called twice in one request). */
const csrfOfResponse = new WeakMap<AppContext, string>();
function csrf(ctx: AppContext): string {
  let token = csrfOfResponse.get(ctx);
  if (!token) csrfOfResponse.set(ctx, (token = csrfToken(ctx)));
  return token;
}

/** Where a verified email waits for the consent step: per interaction, never in the browser. */
const proofKey = (uid: string) => `oauth:proof:${sha256Hex(uid)}`;

interface Proof {
  orgId: string;
  email: string;
}

interface ClientView {
  clientId: string;
  name: string;
  redirectUri: string;
  redirectOrigin: string;
  /** For a client known by its metadata document: the host that published it (and so chose its name). */
  publishedBy?: string;
}

export function oauthRoutes(services: Services): Router<AppState> {
  const router = new Router<AppState>();
  const provider = createOAuthProvider({
    orm: services.orm,
    config: services.config,
    guard: services.guard,
    logger: services.logger,
  });
  const callback = provider.callback();

  /** Hand the request to oidc-provider as it is (it writes the response). */
  const delegate = async (ctx: AppContext) => {
    // Our JSON body parser already read a JSON body (registration): the library takes it from req.body then.
    if (ctx.request.body !== undefined) (ctx.req as IncomingMessage & { body?: unknown }).body = ctx.request.body;
    ctx.respond = false;
    await callback(ctx.req, ctx.res);
  };

  router.get(['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'], async (ctx) => {
    ctx.req.url = '/.well-known/openid-configuration'; // one document, at both addresses (RFC 8414 and OIDC)
    await delegate(ctx);
  });
  router.get(OAUTH_PATHS.authorization, async (ctx) => {
    // A client that names no scope asks for what the approval grants: the tokens act as a full-scope key.
    if (ctx.query.scope === undefined) {
      const url = new URL(ctx.req.url ?? '/', 'http://x');
      url.searchParams.set('scope', SCOPES.join(' '));
      ctx.req.url = url.pathname + url.search;
    }
    await delegate(ctx);
  });
  router.post(OAUTH_PATHS.authorization, delegate);
  router.get(`${OAUTH_PATHS.authorization}/:uid`, delegate); // resume after the person's step
  router.post(OAUTH_PATHS.token, delegate);
  router.post(OAUTH_PATHS.registration, delegate);
  router.post(OAUTH_PATHS.revocation, delegate);
  router.get(OAUTH_PATHS.jwks, delegate);
  // CORS preflights (browser-based clients): the library answers them for its endpoints.
  router.options(
    [
      '/.well-known/openid-configuration',
      '/.well-known/oauth-authorization-server',
      OAUTH_PATHS.token,
      OAUTH_PATHS.registration,
      OAUTH_PATHS.revocation,
      OAUTH_PATHS.jwks,
    ],
    async (ctx) => {
      if (ctx.path === '/.well-known/oauth-authorization-server') ctx.req.url = '/.well-known/openid-configuration';
      await delegate(ctx);
    },
  );

  // ---- the person's step --------------------------------------------------------------------------------------

  const base = (ctx: AppContext) => `${OAUTH_PATHS.interaction}/${encodeURIComponent(paramOf(ctx, 'uid'))}`;

  async function clientOfInteraction(ctx: AppContext) {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const params = details.params as Record<string, string | undefined>;
    const client = await provider.Client.find(String(params.client_id));
    if (!client) throw new ValidationError('This authorization request names an unknown client.');
    const redirectUri = String(params.redirect_uri ?? '');
    const view: ClientView = {
      clientId: client.clientId,
      name: client.clientName ?? client.clientId,
      redirectUri,
      redirectOrigin: redirectSource(redirectUri),
      // A metadata document's client_id is its https URL; a registered client's id is an opaque string.
      publishedBy: /^https:\/\//.test(client.clientId) ? URL.parse(client.clientId)?.host : undefined,
    };
    return { details, client: view };
  }

  const clientLine = (c: ClientView) =>
    `<p><strong>${escapeHtml(c.name)}</strong>${c.publishedBy ? ` (the name published at <strong>${escapeHtml(c.publishedBy)}</strong>)` : ''} wants to use the API marketplace's agent tools as you. It will be sent back to <strong>${escapeHtml(URL.parse(c.redirectUri)?.host || c.redirectUri)}</strong>.</p>`;

  const emailForm = (ctx: AppContext, c: ClientView, message?: string) => `${clientLine(c)}
${emailStep({
  action: `${base(ctx)}/email`,
  csrf: csrf(ctx),
  message,
  intro:
    '<p>First, prove your email address: we send it a 6-digit code. Without an account, one is created for it.</p>',
  after: denyForm(ctx),
})}`;

  const codeForm = (ctx: AppContext, c: ClientView, email: string, message?: string) => `${clientLine(c)}
${codeStep({
  action: `${base(ctx)}/code`,
  csrf: csrf(ctx),
  email,
  message,
  intro: `<p>We sent a 6-digit code to <strong>${escapeHtml(email)}</strong>. It works for 10 minutes.</p>`,
  submitLabel: 'Continue',
  after: `${notYou(ctx, 'Use another email or get a new code')}\n${denyForm(ctx)}`,
})}`;

  const centsField = (name: string, label: string, value: number | null) =>
    `<label for="${name}">${label} (cents; empty for no cap)</label>
  <input id="${name}" name="${name}" type="text" inputmode="numeric" pattern="[0-9]*" value="${value ?? ''}">`;

  const consentForm = (ctx: AppContext, c: ClientView, proof: Proof, message?: string) => `${clientLine(c)}
${errorLine(message)}
<p>Approving creates an API key with every scope for your organization (as <strong>${escapeHtml(proof.email)}</strong>), named <strong>${escapeHtml(oauthKeyName(c.name))}</strong>. The agent acts as that key, limited to the scopes it asked for; you see and revoke it in your keys. Set what it may spend:</p>
<form method="post" action="${base(ctx)}/consent">
  ${hidden('csrf', csrf(ctx))}
  ${centsField('budget_cents', 'Total budget', DEFAULT_OAUTH_CAPS.budget_cents)}
  ${centsField('daily_cap_cents', 'Daily cap', DEFAULT_OAUTH_CAPS.daily_cap_cents)}
  ${centsField('per_call_max_cents', 'Most per call', DEFAULT_OAUTH_CAPS.per_call_max_cents)}
  <label><input name="approval_mode" type="checkbox" value="on"${DEFAULT_OAUTH_CAPS.approval_mode ? ' checked' : ''}> Paid calls wait for my approval</label>
  <button type="submit" name="decision" value="approve">Approve</button>
  <button type="submit" name="decision" value="deny">Deny</button>
</form>
${notYou(ctx, `Not you? Use another email than ${proof.email}`)}`;

  /** Back to the email step of this same request (the step's GET forgets the address proven so far). */
  const notYou = (ctx: AppContext, text: string) =>
    `<p class="muted"><a href="${base(ctx)}">${escapeHtml(text)}</a></p>`;

  const denyForm = (ctx: AppContext) =>
    `<form method="post" action="${base(ctx)}/consent">${hidden('csrf', csrf(ctx))}<button type="submit" name="decision" value="deny">Deny access</button></form>`;

  /** The consent form's submission leads to a redirect to the client: its origin joins form-action. */
  const allowRedirectTo = (ctx: AppContext, c: ClientView) => {
    if (c.redirectOrigin) {
      ctx.set(
        'Content-Security-Policy',
        PAGE_CSP.replace("form-action 'self'", `form-action 'self' ${c.redirectOrigin}`),
      );
    }
  };

  /** Page errors: our domain errors and the library's (an expired interaction) become an HTML page. */
  const page =
    (
      title: string,
      fn: (ctx: AppContext) => Promise<void>,
      onError?: (ctx: AppContext, err: AppError) => Promise<void>,
    ) =>
    async (ctx: AppContext) => {
      try {
        await fn(ctx);
      } catch (err) {
        if (err instanceof AppError && err.status < 500 && onError) {
          for (const [k, v] of Object.entries(err.headers ?? {})) ctx.set(k, v);
          try {
            await onError(ctx, err);
            return;
          } catch {
            // the interaction itself is gone: the plain error page below
          }
        }
        const status = (err as { statusCode?: number; status?: number }).statusCode ?? (err as AppError).status;
        if (typeof status === 'number' && status >= 400 && status < 500) {
          const message =
            err instanceof AppError
              ? err.message
              : 'This authorization request has expired or is not yours. Start again from the application.';
          render(ctx, status, title, errorLine(message));
          return;
        }
        throw err;
      }
    };

  router.get(
    `${OAUTH_PATHS.interaction}/:uid`,
    page('Authorize an agent', async (ctx) => {
      const { details, client } = await clientOfInteraction(ctx);
      // The first visit, or "Not you?" from a later step: whoever proved an address here before must prove theirs
      // again, so an approval never mints a key for the address this browser proved first.
      await services.counters.del(proofKey(details.uid));
      render(ctx, 200, 'Authorize an agent', emailForm(ctx, client));
      allowRedirectTo(ctx, client);
    }),
  );

  router.post(
    `${OAUTH_PATHS.interaction}/:uid/email`,
    page(
      'Authorize an agent',
      async (ctx) => {
        const form = await readForm(ctx);
        const { client } = await clientOfInteraction(ctx);
        const body = LoginRequestBody.safeParse({ email: form.email });
        if (!body.success) {
          render(ctx, 400, 'Authorize an agent', emailForm(ctx, client, 'Enter a valid email address.'));
          return;
        }
        await services.loginCodes.requestLoginCode(body.data, clientOf(ctx), { mailUnknown: true });
        render(ctx, 200, 'Check your email', codeForm(ctx, client, body.data.email));
        allowRedirectTo(ctx, client);
      },
      async (ctx, err) => {
        const { client } = await clientOfInteraction(ctx);
        render(ctx, err.status, 'Authorize an agent', emailForm(ctx, client, err.message));
      },
    ),
  );

  router.post(
    `${OAUTH_PATHS.interaction}/:uid/code`,
    page(
      'Check your email',
      async (ctx) => {
        const form = await readForm(ctx);
        ctx.state.pageEmail = form.email ?? '';
        const { details, client } = await clientOfInteraction(ctx);
        const body = LoginVerifyBody.safeParse({ email: form.email, code: form.code });
        if (!body.success) throw new ValidationError('Enter the 6-digit code from the email.');
        const person = await services.oauthEmailProof.verifyCodeForOAuth(body.data, clientOf(ctx));
        const proof: Proof = { orgId: person.orgId, email: person.email };
        await services.counters.set(proofKey(details.uid), JSON.stringify(proof), INTERACTION_TTL_S * 1000);
        render(ctx, 200, 'Approve the agent', consentForm(ctx, client, proof));
        allowRedirectTo(ctx, client);
      },
      async (ctx, err) => {
        const { client } = await clientOfInteraction(ctx);
        const email = String(ctx.state.pageEmail ?? '');
        render(ctx, err.status, 'Check your email', codeForm(ctx, client, email, err.message));
      },
    ),
  );

  router.post(
    `${OAUTH_PATHS.interaction}/:uid/consent`,
    page(
      'Approve the agent',
      async (ctx) => {
        const form = await readForm(ctx);
        const { details, client } = await clientOfInteraction(ctx);
        if (form.decision !== 'approve') {
          await services.counters.del(proofKey(details.uid));
          await finish(ctx, { error: 'access_denied', error_description: 'The person denied access.' });
          return;
        }
        const stored = await services.counters.get(proofKey(details.uid));
        if (!stored) {
          render(ctx, 400, 'Authorize an agent', emailForm(ctx, client, 'Prove your email address first.'));
          return;
        }
        const proof = JSON.parse(stored) as Proof;
        // One approval per interaction, even when the form is sent twice at once.
        if (
          !(await services.counters.setIfAbsent(`${proofKey(details.uid)}:approved`, '1', INTERACTION_TTL_S * 1000))
        ) {
          render(
            ctx,
            409,
            'Approve the agent',
            errorLine('This request was already approved; go back to the application.'),
          );
          return;
        }
        const caps = parseCaps(form);
        if (!caps.success) {
          render(ctx, 400, 'Approve the agent', consentForm(ctx, client, proof, caps.message));
          allowRedirectTo(ctx, client);
          return;
        }
        const { keyId } = await mintOAuthKey(
          { orm: services.orm, keys: services.keys },
          { orgId: proof.orgId, clientName: client.name, caps: caps.data },
        );
        await services.counters.del(proofKey(details.uid));
        const grant = new provider.Grant({ accountId: keyId, clientId: client.clientId });
        // What the client asked for (the login prompt comes first, so its details do not list the scopes yet), and
        // no more: the tokens act as the key with only these scopes (core/oauth/access-tokens.ts intersects them).
        const requested = String((details.params as { scope?: string }).scope ?? '').split(' ');
        const known = new Set<string>(['openid', 'offline_access', ...SCOPES]);
        const scopes = requested.filter((s) => known.has(s));
        if (scopes.length) grant.addOIDCScope(scopes.join(' '));
        const resourceScopes = scopes.filter((s) => (SCOPES as readonly string[]).includes(s));
        if (resourceScopes.length) grant.addResourceScope(mcpResource(services.config), resourceScopes.join(' '));
        const grantId = await grant.save();
        services.logger.info({ key_id: keyId, client_id: client.clientId }, 'oauth client approved');
        await startFreshSession(ctx, details);
        await finish(ctx, { login: { accountId: keyId }, consent: { grantId } });
      },
      async (ctx, err) => {
        const { client } = await clientOfInteraction(ctx);
        render(ctx, err.status, 'Approve the agent', errorLine(err.message) + denyForm(ctx));
        allowRedirectTo(ctx, client);
      },
    ),
  );

  /**
   * Each approval mints its own key, and the key is the authorization server's account. A browser that approved a
   * client before still holds that session (another account), and oidc-provider would answer this approval with its
   * sign-out step (`/session/end/confirm`, which we do not serve): the second approval in one browser dead-ended
   * (issue 22). The email was just proven again, so this approval needs nothing of the old session: the interaction
   * forgets it and the browser drops its cookie, and the resume starts a new session for this key.
   */
  async function startFreshSession(ctx: AppContext, details: Awaited<ReturnType<Provider['interactionDetails']>>) {
    if (!details.session) return;
    delete details.session;
    await details.save(Math.max(1, (details.exp ?? 0) - Math.floor(Date.now() / 1000)));
    const name = provider.cookieName('session');
    for (const cookie of [name, `${name}.sig`, `${name}.legacy`, `${name}.legacy.sig`]) {
      ctx.cookies.set(cookie, null, { path: '/', overwrite: true });
    }
  }

  async function finish(ctx: AppContext, result: Parameters<Provider['interactionFinished']>[2]) {
    const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
    ctx.status = 303;
    ctx.redirect(returnTo);
  }

  return router;
}

/**
 * The redirect URI as a CSP source for `form-action`: its origin, or for a native app's private-use scheme
 * (`com.example.app:/callback`, whose origin is opaque) the scheme itself. Empty when it is neither.
 */
export function redirectSource(redirectUri: string): string {
  const url = URL.parse(redirectUri);
  if (!url) return '';
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.origin;
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) ? url.protocol : '';
}

function parseCaps(
  form: Record<string, string>,
): { success: true; data: OAuthKeyCaps } | { success: false; message: string } {
  const cents = (name: string): number | null | undefined => {
    const raw = (form[name] ?? '').trim();
    if (raw === '') return null;
    return /^\d{1,13}$/.test(raw) ? Number(raw) : undefined;
  };
  const values = {
    budget_cents: cents('budget_cents'),
    daily_cap_cents: cents('daily_cap_cents'),
    per_call_max_cents: cents('per_call_max_cents'),
    approval_mode: form.approval_mode === 'on',
  };
  const parsed = OAuthKeyCaps.safeParse(values);
  if (!parsed.success || Object.values(values).some((v) => v === undefined)) {
    return { success: false, message: 'Caps are whole numbers of cents (or empty for no cap).' };
  }
  return { success: true, data: parsed.data };
}
