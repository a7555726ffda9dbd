/**
 * What the OAuth authorize pages share (spec, Authentication rule 7; the steps are in oauth-signin.page.ts and
 * oauth-consent.page.ts, the protocol endpoints in api/oauth/oauth.routes.ts): the interaction's client as the pages
 * name it, the email proven so far (kept per interaction in the counter store, never in the browser), the first step's
 * form, the "Not you?" and "Deny" links every step carries, the CSP that lets the last form redirect to the client,
 * the error pages, and handing the result back to oidc-provider.
 */
import type Provider from 'oidc-provider';
import { sha256Hex } from '../../core/crypto.js';
import { AppError, ValidationError } from '../../core/errors.js';
import { OAUTH_PATHS } from '../../core/oauth/oauth-provider.js';
import type { Services } from '../../platform/services.js';
import type { AppContext } from '../context.js';
import { csrfToken, emailStep, errorLine, hidden, paramOf, render } from './forms.js';
import { escapeHtml, PAGE_CSP } from './layout.js';

/** What the pages need: the app's services and the authorization server whose interaction they are. */
export interface OAuthPagesDeps {
  services: Services;
  provider: Provider;
}

export type InteractionDetails = Awaited<ReturnType<Provider['interactionDetails']>>;

/** Where a verified email waits for the consent step: per interaction, never in the browser. */
export const proofKey = (uid: string) => `oauth:proof:${sha256Hex(uid)}`;

export interface Proof {
  orgId: string;
  email: string;
}

export interface ClientView {
  clientId: string;
  name: string;
  redirectUri: string;
  redirectOrigin: string;
  /** For a client known by its metadata document: the host that published it (and so chose its name). */
  publishedBy?: string;
}

/** One CSRF token per response (the pages' helper would set a second cookie when called twice in one request). */
const csrfOfResponse = new WeakMap<AppContext, string>();
export function csrf(ctx: AppContext): string {
  let token = csrfOfResponse.get(ctx);
  if (!token) csrfOfResponse.set(ctx, (token = csrfToken(ctx)));
  return token;
}

/** This interaction's page address: the steps post to `<base>/email`, `<base>/code`, `<base>/consent`. */
export const base = (ctx: AppContext) => `${OAUTH_PATHS.interaction}/${encodeURIComponent(paramOf(ctx, 'uid'))}`;

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

/** The interaction of this request and the client it is for (an unknown client is a 400 page). */
export async function clientOfInteraction(deps: OAuthPagesDeps, ctx: AppContext) {
  const details = await deps.provider.interactionDetails(ctx.req, ctx.res);
  const params = details.params as Record<string, string | undefined>;
  const client = await deps.provider.Client.find(String(params.client_id));
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

export const clientLine = (c: ClientView) =>
  `<p><strong>${escapeHtml(c.name)}</strong>${c.publishedBy ? ` (the name published at <strong>${escapeHtml(c.publishedBy)}</strong>)` : ''} wants to use the API marketplace's agent tools as you. It will be sent back to <strong>${escapeHtml(URL.parse(c.redirectUri)?.host || c.redirectUri)}</strong>.</p>`;

/** Back to the email step of this same request (the step's GET forgets the address proven so far). */
export const notYou = (ctx: AppContext, text: string) =>
  `<p class="muted"><a href="${base(ctx)}">${escapeHtml(text)}</a></p>`;

export const denyForm = (ctx: AppContext) =>
  `<form method="post" action="${base(ctx)}/consent">${hidden('csrf', csrf(ctx))}<button type="submit" name="decision" value="deny">Deny access</button></form>`;

/** The first step: the email address to prove. */
export const emailForm = (ctx: AppContext, c: ClientView, message?: string) => `${clientLine(c)}
${emailStep({
  action: `${base(ctx)}/email`,
  csrf: csrf(ctx),
  message,
  intro:
    '<p>First, prove your email address: we send it a 6-digit code. Without an account, one is created for it.</p>',
  after: denyForm(ctx),
})}`;

/** The consent form's submission leads to a redirect to the client: its origin joins form-action. */
export function allowRedirectTo(ctx: AppContext, c: ClientView): void {
  if (c.redirectOrigin) {
    ctx.set(
      'Content-Security-Policy',
      PAGE_CSP.replace("form-action 'self'", `form-action 'self' ${c.redirectOrigin}`),
    );
  }
}

/** A failure as the plain error page, when it is a 4xx (the library's own, an expired interaction, included). */
function renderClientError(ctx: AppContext, title: string, err: unknown): boolean {
  const status = (err as { statusCode?: number; status?: number }).statusCode ?? (err as AppError).status;
  if (typeof status !== 'number' || status < 400 || status >= 500) return false;
  const message =
    err instanceof AppError
      ? err.message
      : 'This authorization request has expired or is not yours. Start again from the application.';
  render(ctx, status, title, errorLine(message));
  return true;
}

/**
 * A step's handler with its error pages: a domain 4xx is the step's own page with the message (`onError`), unless the
 * interaction itself is gone; then, and for the library's 4xx, the plain error page. Anything else propagates.
 */
export const oauthPage =
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
      if (!renderClientError(ctx, title, err)) throw err;
    }
  };

/** Hand the outcome to oidc-provider and send the browser on to the resume URL (then the client). */
export async function finish(
  deps: OAuthPagesDeps,
  ctx: AppContext,
  result: Parameters<Provider['interactionFinished']>[2],
): Promise<void> {
  const returnTo = await deps.provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
  ctx.status = 303;
  ctx.redirect(returnTo);
}
