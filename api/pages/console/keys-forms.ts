/**
 * Console · Keys, its forms (issue 31, section 6): the create form, which pre-selects the least privilege that can
 * call APIs (`catalog:read`, `proxy:call`, `usage:read`) and leaves the money and provider scopes opt-in, each saying
 * what it allows; the one-time secret after Post/Redirect/Get (kept server-side, sealed, for one read by the session
 * that created the key, and reached through an httpOnly cookie: never in a URL); and the revoke confirmation step.
 * The REST API's default for a key created without `scopes` stays the creator's scopes (docs/decisions.md).
 */
import type { Scope } from '../../../core/auth/scopes.js';
import { randomString } from '../../../core/crypto.js';
import { escapeHtml } from '../../../core/html.js';
import type { CreatedKey, KeySummary } from '../../../core/keys/key-admin.service.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext } from '../../context.js';
import { capsFieldset, capsFields } from '../caps-fieldset.js';
import { fieldMessage, type FormFields, type FormProblems, invalidAttrs, problemSummary } from '../form-errors.js';
import { hidden } from '../forms.js';
import { banner } from './shell.js';

/** Pre-selected on the console's create form: enough to find, call and watch APIs, nothing that moves money. */
export const LEAST_PRIVILEGE: readonly Scope[] = ['catalog:read', 'proxy:call', 'usage:read'];

/** What each scope lets a key do (the create form's checkboxes). */
export const SCOPE_HINTS: Record<Scope, string> = {
  'catalog:read': 'search and read the catalog, quote prices',
  'proxy:call': 'call APIs through the gateway (within the caps below)',
  'usage:read': 'read usage and spend',
  'keys:write': 'create, change and revoke keys, and raise their caps',
  'billing:write': 'spend money: buy credits, save or replace the card, set auto-reload',
  'provider:write': 'publish and change your APIs and their prices, start payouts onboarding',
};

/** The create form's fields by the key route's schema (form-errors.ts). */
export const CREATE_KEY_FIELDS: FormFields = {
  name: { id: 'new-name', label: 'Name' },
  scopes: { id: 'new-scopes', label: 'Scopes' },
  ...capsFields('new'),
};

/** What a refused create form sent back: its fields as typed. */
export interface TypedKey {
  name: string;
  scopes: readonly string[];
  caps: Record<string, string>;
  /** Where to offer the way back to once the key exists (the form's `next`). */
  next?: string;
}

/** Where the person came to Keys from (a listing's "Create a key" link: `?next=`), for the way back. */
export interface KeyReturn {
  href: string;
  label: string;
}

function scopeBox(scope: Scope, checked: boolean): string {
  return `<label class="inline-label"><input type="checkbox" name="scope" value="${scope}"${checked ? ' checked' : ''}> <code>${scope}</code> <span class="muted">${escapeHtml(SCOPE_HINTS[scope])}</span></label>`;
}

/** The scope boxes: the calling scopes first (ticked), then the opt-in ones, each with what it allows. */
function scopeFieldset(person: SessionPrincipal, typed: TypedKey | undefined, p: FormProblems | undefined): string {
  const ticked = (s: Scope) => (typed ? typed.scopes.includes(s) : LEAST_PRIVILEGE.includes(s));
  const calling = person.scopes.filter((s) => LEAST_PRIVILEGE.includes(s));
  const optIn = person.scopes.filter((s) => !LEAST_PRIVILEGE.includes(s));
  const group = (list: readonly Scope[]) => list.map((s) => scopeBox(s, ticked(s))).join('<br>');
  return `<fieldset class="scopes" id="new-scopes"${invalidAttrs(p, 'new-scopes', 'scopes-help')}><legend>Scopes</legend>
<p id="scopes-help" class="muted">A key gets no more than yours. Ticked: what calling APIs needs. The others are opt-in: tick one only for a key that must do that.</p>
${group(calling)}${optIn.length ? `<p class="muted"><strong>Opt-in: money and provider scopes</strong></p>${group(optIn)}` : ''}
${fieldMessage(p, 'new-scopes')}</fieldset>`;
}

/** The create form, filled from a refused submission (values kept, messages beside their fields). */
export function createForm(
  csrf: string,
  person: SessionPrincipal,
  typed?: TypedKey,
  p?: FormProblems,
  next?: string,
): string {
  const caps = capsFieldset('new', undefined, { typed: typed?.caps, problems: p });
  return `${problemSummary(p)}<form method="post" action="/console/keys" class="panel">
${hidden('csrf', csrf)}${next ? hidden('next', next) : ''}
<label for="new-name">Name</label>
<input id="new-name" name="name" required maxlength="100" autocomplete="off" value="${escapeHtml(typed?.name ?? '')}"${invalidAttrs(p, 'new-name')}>${fieldMessage(p, 'new-name')}
${caps}
${hidden('scopes_listed', '1')}${scopeFieldset(person, typed, p)}
<button type="submit">Create key</button>
</form>`;
}

// ---- the one-time secret ---------------------------------------------------------------------------------------

const ONCE_COOKIE = 'svc_key_once';
const ONCE_TTL_MS = 10 * 60_000;
const onceKey = (token: string) => `console:key-once:${token}`;

interface OnceSecret {
  session: string;
  id: string;
  name: string;
  api_key: string;
}

/** Keep a new key's secret for the page the 303 leads to: sealed, server-side, for this session, one read. */
export async function stashSecret(
  ctx: AppContext,
  services: Services,
  person: SessionPrincipal,
  created: CreatedKey,
): Promise<void> {
  const token = randomString(32);
  const value: OnceSecret = { session: person.sessionId, id: created.id, name: created.name, api_key: created.api_key };
  await services.counters.set(onceKey(token), services.secrets.seal(JSON.stringify(value)), ONCE_TTL_MS);
  const options = { httpOnly: true, sameSite: 'strict' as const, secure: ctx.secure, path: '/console/keys' };
  ctx.cookies.set(ONCE_COOKIE, token, { ...options, maxAge: ONCE_TTL_MS });
}

/** The secret stashed for this session, once: the first read claims and deletes it; a reload finds nothing. */
export async function takeSecret(
  ctx: AppContext,
  services: Services,
  person: SessionPrincipal,
): Promise<OnceSecret | undefined> {
  const token = ctx.cookies.get(ONCE_COOKIE);
  if (!token) return undefined;
  ctx.cookies.set(ONCE_COOKIE, '', { httpOnly: true, sameSite: 'strict', path: '/console/keys', maxAge: 0 });
  if (!/^[0-9A-Za-z]{32}$/.test(token)) return undefined;
  const sealed = await services.counters.get(onceKey(token));
  if (!sealed) return undefined;
  const value = JSON.parse(services.secrets.open(sealed)) as OnceSecret;
  // Only the session that created the key reads it (a copied cookie shows nothing, and burns nothing).
  if (value.session !== person.sessionId) return undefined;
  // Two reads racing (a double reload): only the one that claims the token shows the secret.
  if (!(await services.counters.setIfAbsent(`${onceKey(token)}:read`, '1', ONCE_TTL_MS))) return undefined;
  await services.counters.del(onceKey(token));
  return value;
}

/** The new key's secret, once, and what to do with it: back to the API the person came from, or the Catalog. */
export function createdBox(created: Pick<OnceSecret, 'name' | 'api_key'>, back?: KeyReturn): string {
  const where = back
    ? `from its page: <a href="${escapeHtml(back.href)}">Back to ${escapeHtml(back.label)}</a>`
    : `from an API's page in the <a href="/console/catalog">Catalog</a>`;
  return banner(
    'good',
    `<strong>Key “${escapeHtml(created.name)}” created.</strong> Copy its secret now: it is shown only this once.
<div><label for="secret">Secret key</label><input id="secret" readonly size="60" autocomplete="off" spellcheck="false" value="${escapeHtml(created.api_key)}"></div>
<p>To call an API with it, put it in <code>SVC_API_KEY</code> in your terminal (<code>export SVC_API_KEY=${escapeHtml(created.api_key)}</code>) and run a snippet ${where}.</p>`,
  );
}

/** After the secret was shown (a reload, another tab): the key exists, its secret is gone for good. */
export const SHOWN_ONCE = banner(
  'good',
  'Key created. Its secret was shown once, on the page right after creating it, and is not kept: if you did not ' +
    'copy it, revoke the key and create another.',
);

// ---- revoking ---------------------------------------------------------------------------------------------------

/** The confirmation step of revoking a key: what stops working, and the button that does it. */
export function revokeConfirmation(key: KeySummary, csrf: string): string {
  const id = encodeURIComponent(key.id);
  const name = escapeHtml(key.name);
  if (key.revoked_at) {
    return `<p>The key “${name}” is already revoked.</p><p><a href="/console/keys">Back to keys</a></p>`;
  }
  return `<p>Revoke the key <strong>“${name}”</strong> (<code>${escapeHtml(key.keyPrefix)}…</code>)?</p>
<p>Every call made with it is refused from then on, and so are the calls of the keys it minted (its child keys). This cannot be undone: a revoked key never works again.</p>
<form method="post" action="/console/keys/${id}/revoke">${hidden('csrf', csrf)}${hidden('confirm', 'yes')}
<button type="submit">Yes, revoke “${name}”</button> <a href="/console/keys">Cancel, keep it</a></form>`;
}
