/**
 * The OAuth authorize step's consent page (spec, Authentication rule 7): it names the client and its redirect host,
 * and the person sets the new key's money caps in dollars (the caps fieldset every key form uses, caps-fieldset.ts).
 * `POST /oauth/interaction/:uid/consent` approves (mints the key, grants the client the scopes it asked for) or denies
 * (`access_denied` back to the client). The address proven on the sign-in steps (oauth-signin.page.ts) is what the key
 * is minted for; without it the person starts again from the email step.
 */
import type Router from '@koa/router';
import { SCOPES } from '../../core/auth/scopes.js';
import { ValidationError } from '../../core/errors.js';
import { DEFAULT_OAUTH_CAPS, mintOAuthKey, OAuthKeyCaps, oauthKeyName } from '../../core/oauth/oauth-approval.js';
import { INTERACTION_TTL_S, mcpResource, OAUTH_PATHS } from '../../core/oauth/oauth-provider.js';
import type { AppContext, AppState } from '../context.js';
import { capsFieldset, capsFromForm } from './caps-fieldset.js';
import { errorLine, hidden, parseForm, readForm, render } from './forms.js';
import { escapeHtml } from './layout.js';
import {
  allowRedirectTo,
  base,
  clientLine,
  clientOfInteraction,
  type ClientView,
  csrf,
  denyForm,
  emailForm,
  finish,
  type InteractionDetails,
  notYou,
  type OAuthPagesDeps,
  oauthPage,
  type Proof,
  proofKey,
} from './oauth-interaction.js';

const TITLE = 'Approve the agent';

export const consentForm = (ctx: AppContext, c: ClientView, proof: Proof, message?: string) => `${clientLine(c)}
${errorLine(message)}
<p>Approving creates an API key with every scope for your organization (as <strong>${escapeHtml(proof.email)}</strong>), named <strong>${escapeHtml(oauthKeyName(c.name))}</strong>. The agent acts as that key, limited to the scopes it asked for; you see and revoke it in your keys. Set what it may spend:</p>
<form method="post" action="${base(ctx)}/consent">
  ${hidden('csrf', csrf(ctx))}
  ${capsFieldset('consent', DEFAULT_OAUTH_CAPS)}
  <button type="submit" name="decision" value="approve">Approve</button>
  <button type="submit" name="decision" value="deny">Deny</button>
</form>
${notYou(ctx, `Not you? Use another email than ${proof.email}`)}`;

/**
 * Each approval mints its own key, and the key is the authorization server's account. A browser that approved a
 * client before still holds that session (another account), and oidc-provider would answer this approval with its
 * sign-out step (`/session/end/confirm`, which we do not serve): the second approval in one browser dead-ended
 * (issue 22). The email was just proven again, so this approval needs nothing of the old session: the interaction
 * forgets it and the browser drops its cookie, and the resume starts a new session for this key.
 */
async function startFreshSession(deps: OAuthPagesDeps, ctx: AppContext, details: InteractionDetails): Promise<void> {
  if (!details.session) return;
  delete details.session;
  await details.save(Math.max(1, (details.exp ?? 0) - Math.floor(Date.now() / 1000)));
  const name = deps.provider.cookieName('session');
  for (const cookie of [name, `${name}.sig`, `${name}.legacy`, `${name}.legacy.sig`]) {
    ctx.cookies.set(cookie, null, { path: '/', overwrite: true });
  }
}

/**
 * The grant for the new key: what the client asked for (the login prompt comes first, so its details do not list the
 * scopes yet), and no more: the tokens act as the key with only these scopes (core/oauth/access-tokens.ts intersects
 * them).
 */
async function grantScopes(deps: OAuthPagesDeps, details: InteractionDetails, clientId: string, keyId: string) {
  const grant = new deps.provider.Grant({ accountId: keyId, clientId });
  const requested = String((details.params as { scope?: string }).scope ?? '').split(' ');
  const known = new Set<string>(['openid', 'offline_access', ...SCOPES]);
  const scopes = requested.filter((s) => known.has(s));
  if (scopes.length) grant.addOIDCScope(scopes.join(' '));
  const resourceScopes = scopes.filter((s) => (SCOPES as readonly string[]).includes(s));
  if (resourceScopes.length) grant.addResourceScope(mcpResource(deps.services.config), resourceScopes.join(' '));
  return grant.save();
}

/** Approval: the key with the person's caps, the grant, a fresh session, and back to the client. */
async function approve(
  deps: OAuthPagesDeps,
  ctx: AppContext,
  at: { details: InteractionDetails; client: ClientView; proof: Proof; caps: OAuthKeyCaps },
): Promise<void> {
  const { services } = deps;
  const { keyId } = await mintOAuthKey(
    { orm: services.orm, keys: services.keys },
    { orgId: at.proof.orgId, clientName: at.client.name, caps: at.caps },
  );
  await services.counters.del(proofKey(at.details.uid));
  const grantId = await grantScopes(deps, at.details, at.client.clientId, keyId);
  services.logger.info({ key_id: keyId, client_id: at.client.clientId }, 'oauth client approved');
  await startFreshSession(deps, ctx, at.details);
  await finish(deps, ctx, { login: { accountId: keyId }, consent: { grantId } });
}

/** The caps the form sent (dollars; the legacy cent names too), or undefined after the form again with the error. */
function capsOrForm(ctx: AppContext, client: ClientView, proof: Proof, form: Record<string, string>) {
  try {
    return parseForm(OAuthKeyCaps, capsFromForm(form));
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    render(ctx, 400, TITLE, consentForm(ctx, client, proof, err.message));
    allowRedirectTo(ctx, client);
    return undefined;
  }
}

async function consent(deps: OAuthPagesDeps, ctx: AppContext): Promise<void> {
  const { counters } = deps.services;
  const form = await readForm(ctx);
  const { details, client } = await clientOfInteraction(deps, ctx);
  if (form.decision !== 'approve') {
    await counters.del(proofKey(details.uid));
    await finish(deps, ctx, { error: 'access_denied', error_description: 'The person denied access.' });
    return;
  }
  const stored = await counters.get(proofKey(details.uid));
  if (!stored) {
    render(ctx, 400, 'Authorize an agent', emailForm(ctx, client, 'Prove your email address first.'));
    return;
  }
  const proof = JSON.parse(stored) as Proof;
  const caps = capsOrForm(ctx, client, proof, form);
  if (!caps) return;
  // One approval per interaction, even when the form is sent twice at once.
  if (!(await counters.setIfAbsent(`${proofKey(details.uid)}:approved`, '1', INTERACTION_TTL_S * 1000))) {
    render(ctx, 409, TITLE, errorLine('This request was already approved; go back to the application.'));
    return;
  }
  await approve(deps, ctx, { details, client, proof, caps });
}

/** The consent step of the OAuth authorize pages. */
export function oauthConsentPage(router: Router<AppState>, deps: OAuthPagesDeps): void {
  router.post(
    `${OAUTH_PATHS.interaction}/:uid/consent`,
    oauthPage(
      TITLE,
      (ctx) => consent(deps, ctx),
      async (ctx, err) => {
        const { client } = await clientOfInteraction(deps, ctx);
        render(ctx, err.status, TITLE, errorLine(err.message) + denyForm(ctx));
        allowRedirectTo(ctx, client);
      },
    ),
  );
}
