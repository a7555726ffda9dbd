/**
 * Console · Keys: the org's keys with their caps and spend against them (bars), a form to create a key with caps
 * (Post/Redirect/Get: its secret is shown once, on the page the 303 leads to; keys-forms.ts), per-key forms to edit
 * caps, a revoke step that asks to confirm, and the approval-mode keys with Approve buttons. A refused form comes
 * back as typed with each message beside its field. Every change goes through `services.keyAdmin` with the signed-in person, exactly as
 * `/v1/keys` does, so the same scope, role and governance rules apply (a member cannot loosen caps or approve).
 */
import type Router from '@koa/router';
import { requireScope } from '../../../core/auth/scopes.js';
import { type AppError, ValidationError } from '../../../core/errors.js';
import { escapeHtml } from '../../../core/html.js';
import type { KeySummary } from '../../../core/keys/key-admin.service.js';
import { ApproveSpendBody, CreateKeyBody, PatchKeyBody } from '../../../core/keys/keys.schemas.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext, AppState } from '../../context.js';
import { capBar } from '../charts.js';
import { csrfToken, hidden, paramOf, readFormParams, safeNext } from '../forms.js';
import { capsFieldset, capsFields, capsFromForm } from '../caps-fieldset.js';
import { fieldError, fieldMessage, fixable, type FormProblems, invalidAttrs, problemSummary } from '../form-errors.js';
import {
  CREATE_KEY_FIELDS,
  createdBox,
  createForm,
  type KeyReturn,
  revokeConfirmation,
  SHOWN_ONCE,
  stashSecret,
  takeSecret,
  type TypedKey,
} from './keys-forms.js';
import { centsFromDollars } from '../dollars.js';
import { accountBanners } from './consumer-common.js';
import { flash, parseForm, seeOther, when } from './forms.js';
import { consoleForm, consolePage, emptyState, money, type ConsoleView } from './shell.js';

const DONE = {
  caps: 'Caps saved.',
  approved: 'Spend approved.',
  revoked: 'Key revoked. Calls with it (and with the keys it minted) are refused from now on.',
};

const mayApprove = (person: SessionPrincipal) =>
  (person.role === 'owner' || person.role === 'admin') && person.emailVerified;

/** A refused form of the page, shown again with what was typed and each message beside its field. */
type KeysFormState =
  | { kind: 'create'; typed: TypedKey; problems: FormProblems }
  | { kind: 'caps' | 'approve'; keyId: string; typed: Record<string, string>; problems: FormProblems };

/** Under the key's name: the key that minted it (a child's spend counts in its parent's figures too). */
function parentLine(key: KeySummary, names: ReadonlyMap<string, string>): string {
  if (!key.parent_key_id) return '';
  const parent = names.get(key.parent_key_id) ?? key.parent_key_id;
  return `<div class="muted">child key of ${escapeHtml(parent)}</div>`;
}

function keyRow(key: KeySummary, csrf: string, names: ReadonlyMap<string, string>, state?: KeysFormState): string {
  const id = escapeHtml(key.id);
  const name = escapeHtml(key.name);
  const refused = state?.kind === 'caps' && state.keyId === key.id ? state : undefined;
  const actions = key.revoked_at
    ? `<span class="muted">revoked ${when(key.revoked_at)}</span>`
    : `<details${refused ? ' open' : ''}><summary>Edit caps<span class="visually-hidden"> of ${name}</span></summary>
${problemSummary(refused?.problems)}<form method="post" action="/console/keys/${id}/caps">${hidden('csrf', csrf)}${capsFieldset(`k-${key.id}`, key, refused ?? {})}
<button type="submit">Save caps<span class="visually-hidden"> of ${name}</span></button></form></details>
<a class="button" href="/console/keys/${encodeURIComponent(key.id)}/revoke">Revoke<span class="visually-hidden"> ${name}</span></a>`;
  const perCall = key.per_call_max_cents == null ? '<span class="muted">none</span>' : money(key.per_call_max_cents);
  const approval = key.approval_mode
    ? `on · ${money(key.remaining_approval_cents ?? 0)} approved left`
    : '<span class="muted">off</span>';
  return `<tr data-key="${id}"><th scope="row">${name}<div class="muted"><code>${escapeHtml(key.keyPrefix)}…</code></div>${parentLine(key, names)}</th>
<td>${capBar(key.spent_cents, key.budget_cents, money)}</td>
<td>${capBar(key.spent_today_cents, key.daily_cap_cents, money)}</td>
<td>${perCall}</td><td>${approval}</td><td>${when(key.last_used_at)}</td><td>${actions}</td></tr>`;
}

/** One rule for both spend figures (docs/decisions.md): a key's own calls and its child keys', as its caps count them. */
export const SPEND_RULE =
  'Spent and Today (UTC day) count each key’s own calls and those of the keys it minted (its child keys, down the ' +
  'chain): that total is what its budget and its daily cap limit.';

function keysTable(keys: KeySummary[], csrf: string, state?: KeysFormState): string {
  if (keys.length === 0) {
    return emptyState('No keys yet. Create one above: give it a budget and a daily cap to bound what it can spend.');
  }
  const names = new Map(keys.map((k) => [k.id, k.name]));
  return `<table aria-describedby="spend-rule"><caption class="visually-hidden">Keys, with spend against their caps</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Spent / budget<div class="muted">incl. child keys</div></th>
<th scope="col">Today (UTC) / daily cap<div class="muted">incl. child keys</div></th>
<th scope="col">Per-call max</th><th scope="col">Approval mode</th><th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
<tbody>${keys.map((k) => keyRow(k, csrf, names, state)).join('\n')}</tbody></table>
<p id="spend-rule" class="muted">${SPEND_RULE}</p>`;
}

/** Approval-mode keys, the ones with nothing approved left first (their paid calls get 402 approval_required). */
function approvals(keys: KeySummary[], person: SessionPrincipal, csrf: string, state?: KeysFormState): string {
  const pending = keys
    .filter((k) => k.approval_mode && !k.revoked_at)
    .sort((a, b) => (a.remaining_approval_cents ?? 0) - (b.remaining_approval_cents ?? 0));
  if (pending.length === 0) return emptyState('No key is in approval mode, so nothing waits for approval.');
  const note = mayApprove(person)
    ? ''
    : '<p class="muted">Only an owner or admin with a verified email can approve spend; ask one of them.</p>';
  const rows = pending.map((k) => {
    const id = escapeHtml(k.id);
    const name = escapeHtml(k.name);
    const left = k.remaining_approval_cents ?? 0;
    const status = left === 0 ? '<strong>Waiting for approval</strong>' : `${money(left)} left`;
    const refused = state?.kind === 'approve' && state.keyId === k.id ? state : undefined;
    const field = `approve-${k.id}`;
    const form = mayApprove(person)
      ? `<form method="post" action="/console/keys/${id}/approve" class="inline">${hidden('csrf', csrf)}
<label for="approve-${id}" class="inline-label">Amount (USD)<span class="visually-hidden"> for ${name}</span></label>
<input id="approve-${id}" name="amount" inputmode="decimal" size="7" value="${escapeHtml(refused?.typed.amount ?? '5.00')}" required${invalidAttrs(refused?.problems, field)}>
<button type="submit">Approve<span class="visually-hidden"> spend for ${name}</span></button>${fieldMessage(refused?.problems, field)}</form>`
      : '';
    return `<tr data-key="${id}"><th scope="row">${name}</th><td class="num">${money(k.approved_cents)}</td>
<td class="num">${money(k.spent_cents)}</td><td>${status}</td><td>${form}</td></tr>`;
  });
  return `${note}<table><caption class="visually-hidden">Keys in approval mode</caption>
<thead><tr><th scope="col">Key</th><th scope="col" class="num">Approved</th><th scope="col" class="num">Spent (incl. child keys)</th>
<th scope="col">Status</th><th scope="col">Approve more</th></tr></thead><tbody>${rows.join('\n')}</tbody></table>`;
}

async function keysView(
  ctx: AppContext,
  services: Services,
  person: SessionPrincipal,
  extra: { banners?: string[]; status?: number; form?: KeysFormState } = {},
): Promise<ConsoleView> {
  const includeRevoked = ctx.query.revoked === '1';
  const [page, account] = await Promise.all([
    services.keyAdmin.list(person, { limit: 200, offset: 0, include_revoked: includeRevoked }),
    services.billing.account(person),
  ]);
  const csrf = csrfToken(ctx);
  const toggle = includeRevoked
    ? '<a href="/console/keys">Hide revoked keys</a>'
    : '<a href="/console/keys?revoked=1">Show revoked keys</a>';
  const refused = extra.form?.kind === 'create' ? extra.form : undefined;
  const body = `<h2>Create a key</h2>
${createForm(csrf, person, refused?.typed, refused?.problems, refused ? refused.typed.next : safeNext(ctx.query.next))}
<h2>Your keys</h2>
<p class="muted">${page.pagination.total} key${page.pagination.total === 1 ? '' : 's'} · ${toggle}</p>
${keysTable(page.items, csrf, extra.form)}
<h2>Pending approvals</h2>
${approvals(page.items, person, csrf, extra.form)}`;
  return {
    section: 'keys',
    title: 'Keys',
    status: extra.status,
    banners: [...accountBanners(account), ...(extra.banners ?? [])],
    body,
  };
}

/** The way back to where the person came to Keys from: named after the listing when `next` is one. */
async function keyReturn(services: Services, next: string | undefined): Promise<KeyReturn | undefined> {
  if (!next) return undefined;
  const slug = /^\/(?:console\/catalog\/)?apis\/([a-z0-9-]+)$/.exec(next)?.[1];
  if (!slug) return { href: next, label: 'where you were' };
  const name = await services.listings.detail(slug).then(
    (d) => d.name,
    () => undefined,
  );
  return { href: next, label: name ?? 'the API' };
}

/** The banner of the page a create's 303 leads to: the secret, once; after that, that it was shown once. */
async function createdBanner(ctx: AppContext, services: Services, person: SessionPrincipal): Promise<string[]> {
  if (ctx.query.done !== 'created') return flash(ctx, DONE);
  const secret = await takeSecret(ctx, services, person);
  return [secret ? createdBox(secret, await keyReturn(services, safeNext(ctx.query.next))) : SHOWN_ONCE];
}

/** A refused key form: the page again (400), its form as typed with the messages beside the fields. */
async function refusedForm(
  ctx: AppContext,
  services: Services,
  person: SessionPrincipal,
  err: unknown,
  form: (problems: FormProblems) => KeysFormState,
): Promise<ConsoleView> {
  const problems = fixable(err);
  if (!problems) throw err;
  return keysView(ctx, services, person, { status: (err as AppError).status, form: form(problems) });
}

/** POST /console/keys: create, then 303 to the keys page, which shows the secret once (Post/Redirect/Get). */
function createRoute(services: Services, router: Router<AppState>): void {
  router.post(
    '/console/keys',
    consolePage(services, 'keys', async (ctx, person) => {
      const params = await readFormParams(ctx);
      requireScope(person, 'keys:write');
      const form = Object.fromEntries(params.entries());
      const listed = params.has('scopes_listed');
      const next = safeNext(form.next);
      const typed: TypedKey = { name: form.name ?? '', scopes: params.getAll('scope'), caps: form, next };
      try {
        // The form marks that it sent its scope boxes (none ticked is an error); without them: the person's scopes.
        const body = parseForm(
          CreateKeyBody,
          { name: typed.name, ...(listed ? { scopes: typed.scopes } : {}), ...capsFromForm(form, 'new') },
          CREATE_KEY_FIELDS,
        );
        await stashSecret(ctx, services, person, await services.keyAdmin.create(person, body));
        seeOther(ctx, `/console/keys?done=created${next ? `&next=${encodeURIComponent(next)}` : ''}`);
      } catch (err) {
        return refusedForm(ctx, services, person, err, (problems) => ({ kind: 'create', typed, problems }));
      }
    }),
  );
}

/** Caps and approvals: 303 back to the page, or the page again with the refused form as typed. */
function keyEditRoutes(services: Services, router: Router<AppState>): void {
  router.post(
    '/console/keys/:id/caps',
    consoleForm(services, 'keys', 'keys:write', async (ctx, person, form) => {
      const id = paramOf(ctx, 'id');
      try {
        const caps = parseForm(PatchKeyBody, capsFromForm(form, `k-${id}`), capsFields(`k-${id}`));
        await services.keyAdmin.patch(person, id, caps);
      } catch (err) {
        return refusedForm(ctx, services, person, err, (problems) => ({
          kind: 'caps',
          keyId: id,
          typed: form,
          problems,
        }));
      }
      seeOther(ctx, '/console/keys?done=caps');
    }),
  );

  router.post(
    '/console/keys/:id/approve',
    consoleForm(services, 'keys', 'keys:write', async (ctx, person, form) => {
      const id = paramOf(ctx, 'id');
      try {
        let cents: number | null;
        try {
          cents = centsFromDollars(form.amount, 'Amount');
        } catch (err) {
          throw err instanceof ValidationError ? fieldError(`approve-${id}`, '', err.message) : err;
        }
        const body = ApproveSpendBody.safeParse({ amount_cents: cents });
        if (!body.success) throw fieldError(`approve-${id}`, 'Amount', 'enter between $0.01 and $100,000.00');
        await services.keyAdmin.approve(person, id, body.data);
      } catch (err) {
        return refusedForm(ctx, services, person, err, (problems) => ({
          kind: 'approve',
          keyId: id,
          typed: form,
          problems,
        }));
      }
      seeOther(ctx, '/console/keys?done=approved');
    }),
  );
}

/** Revoking asks first: GET shows what stops working and a confirm button; only a POST carrying it revokes. */
function revokeRoutes(services: Services, router: Router<AppState>): void {
  const confirmation = async (ctx: AppContext, person: SessionPrincipal): Promise<ConsoleView> => {
    const key = await services.keyAdmin.get(person, paramOf(ctx, 'id'));
    return { section: 'keys', title: 'Revoke a key', body: revokeConfirmation(key, csrfToken(ctx)) };
  };
  router.get(
    '/console/keys/:id/revoke',
    consolePage(services, 'keys', (ctx, person) => confirmation(ctx, person)),
  );
  router.post(
    '/console/keys/:id/revoke',
    consoleForm(services, 'keys', 'keys:write', async (ctx, person, form) => {
      if (form.confirm !== 'yes') return confirmation(ctx, person);
      await services.keyAdmin.revoke(person, paramOf(ctx, 'id'));
      seeOther(ctx, '/console/keys?done=revoked');
    }),
  );
}

export function keysConsole(services: Services, router: Router<AppState>): void {
  router.get(
    '/console/keys',
    consolePage(services, 'keys', async (ctx, person) =>
      keysView(ctx, services, person, { banners: await createdBanner(ctx, services, person) }),
    ),
  );
  createRoute(services, router);
  keyEditRoutes(services, router);
  revokeRoutes(services, router);
}
