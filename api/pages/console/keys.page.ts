/**
 * Console · Keys: the org's keys with their caps and spend against them (bars), a form to create a key with caps
 * (its secret is shown once, on the answer to that POST), per-key forms to edit caps and revoke, and the approval-mode
 * keys with Approve buttons. Every change goes through `services.keyAdmin` with the signed-in person, exactly as
 * `/v1/keys` does, so the same scope, role and governance rules apply (a member cannot loosen caps or approve).
 */
import type Router from '@koa/router';
import { requireScope, type Scope } from '../../../core/auth/scopes.js';
import { ValidationError } from '../../../core/errors.js';
import { escapeHtml } from '../../../core/html.js';
import type { CreatedKey, KeySummary } from '../../../core/keys/key-admin.service.js';
import { ApproveSpendBody, CreateKeyBody, PatchKeyBody } from '../../../core/keys/keys.schemas.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext, AppState } from '../../context.js';
import { capBar } from '../charts.js';
import { csrfToken, hidden, paramOf, readFormParams } from '../forms.js';
import { capsFieldset, capsFromForm } from '../caps-fieldset.js';
import { centsFromDollars } from '../dollars.js';
import { accountBanners } from './consumer-common.js';
import { flash, parseForm, seeOther, when } from './forms.js';
import { banner, consoleForm, consolePage, emptyState, money, type ConsoleView } from './shell.js';

const DONE = {
  caps: 'Caps saved.',
  approved: 'Spend approved.',
  revoked: 'Key revoked. Calls with it are refused from now on.',
};

const mayApprove = (person: SessionPrincipal) =>
  (person.role === 'owner' || person.role === 'admin') && person.emailVerified;

/** What each scope lets a key do (the create form's checkboxes). */
const SCOPE_HINTS: Record<Scope, string> = {
  'catalog:read': 'read the catalog',
  'proxy:call': 'call APIs through the gateway',
  'keys:write': 'create and change keys',
  'usage:read': 'read usage',
  'billing:write': 'buy credits, manage the card',
  'provider:write': 'publish and manage listings',
};

function createForm(csrf: string, person: SessionPrincipal): string {
  const scopes = person.scopes
    .map(
      (scope) =>
        `<label class="inline-label"><input type="checkbox" name="scope" value="${scope}" checked> <code>${scope}</code> <span class="muted">${SCOPE_HINTS[scope]}</span></label>`,
    )
    .join('<br>');
  return `<form method="post" action="/console/keys" class="panel">
${hidden('csrf', csrf)}
<label for="new-name">Name</label>
<input id="new-name" name="name" required maxlength="100" autocomplete="off">
${capsFieldset('new')}
${hidden('scopes_listed', '1')}<fieldset class="scopes"><legend>Scopes (a key gets no more than yours)</legend>${scopes}</fieldset>
<button type="submit">Create key</button>
</form>`;
}

/** Under the key's name: the key that minted it (a child's spend counts in its parent's figures too). */
function parentLine(key: KeySummary, names: ReadonlyMap<string, string>): string {
  if (!key.parent_key_id) return '';
  const parent = names.get(key.parent_key_id) ?? key.parent_key_id;
  return `<div class="muted">child key of ${escapeHtml(parent)}</div>`;
}

function keyRow(key: KeySummary, csrf: string, names: ReadonlyMap<string, string>): string {
  const id = escapeHtml(key.id);
  const name = escapeHtml(key.name);
  const actions = key.revoked_at
    ? `<span class="muted">revoked ${when(key.revoked_at)}</span>`
    : `<details><summary>Edit caps<span class="visually-hidden"> of ${name}</span></summary>
<form method="post" action="/console/keys/${id}/caps">${hidden('csrf', csrf)}${capsFieldset(`k-${id}`, key)}
<button type="submit">Save caps<span class="visually-hidden"> of ${name}</span></button></form></details>
<form method="post" action="/console/keys/${id}/revoke" class="inline">${hidden('csrf', csrf)}
<button type="submit">Revoke<span class="visually-hidden"> ${name}</span></button></form>`;
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

function keysTable(keys: KeySummary[], csrf: string): string {
  if (keys.length === 0) {
    return emptyState('No keys yet. Create one above: give it a budget and a daily cap to bound what it can spend.');
  }
  const names = new Map(keys.map((k) => [k.id, k.name]));
  return `<table aria-describedby="spend-rule"><caption class="visually-hidden">Keys, with spend against their caps</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Spent / budget<div class="muted">incl. child keys</div></th>
<th scope="col">Today (UTC) / daily cap<div class="muted">incl. child keys</div></th>
<th scope="col">Per-call max</th><th scope="col">Approval mode</th><th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
<tbody>${keys.map((k) => keyRow(k, csrf, names)).join('\n')}</tbody></table>
<p id="spend-rule" class="muted">${SPEND_RULE}</p>`;
}

/** Approval-mode keys, the ones with nothing approved left first (their paid calls get 402 approval_required). */
function approvals(keys: KeySummary[], person: SessionPrincipal, csrf: string): string {
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
    const form = mayApprove(person)
      ? `<form method="post" action="/console/keys/${id}/approve" class="inline">${hidden('csrf', csrf)}
<label for="approve-${id}" class="inline-label">Amount (USD)<span class="visually-hidden"> for ${name}</span></label>
<input id="approve-${id}" name="amount" inputmode="decimal" size="7" value="5.00" required>
<button type="submit">Approve<span class="visually-hidden"> spend for ${name}</span></button></form>`
      : '';
    return `<tr data-key="${id}"><th scope="row">${name}</th><td class="num">${money(k.approved_cents)}</td>
<td class="num">${money(k.spent_cents)}</td><td>${status}</td><td>${form}</td></tr>`;
  });
  return `${note}<table><caption class="visually-hidden">Keys in approval mode</caption>
<thead><tr><th scope="col">Key</th><th scope="col" class="num">Approved</th><th scope="col" class="num">Spent (incl. child keys)</th>
<th scope="col">Status</th><th scope="col">Approve more</th></tr></thead><tbody>${rows.join('\n')}</tbody></table>`;
}

function createdBox(created: CreatedKey): string {
  return banner(
    'good',
    `<strong>Key “${escapeHtml(created.name)}” created.</strong> Copy its secret now: it is shown only this once.
<div><label for="secret">Secret key</label><input id="secret" readonly size="60" autocomplete="off" spellcheck="false" value="${escapeHtml(created.api_key)}"></div>`,
  );
}

async function keysView(
  ctx: AppContext,
  services: Services,
  person: SessionPrincipal,
  extra: { banners?: string[]; status?: number } = {},
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
  const body = `<h2>Create a key</h2>
${createForm(csrf, person)}
<h2>Your keys</h2>
<p class="muted">${page.pagination.total} key${page.pagination.total === 1 ? '' : 's'} · ${toggle}</p>
${keysTable(page.items, csrf)}
<h2>Pending approvals</h2>
${approvals(page.items, person, csrf)}`;
  return {
    section: 'keys',
    title: 'Keys',
    status: extra.status,
    banners: [...accountBanners(account), ...(extra.banners ?? [])],
    body,
  };
}

export function keysConsole(services: Services, router: Router<AppState>): void {
  router.get(
    '/console/keys',
    consolePage(services, 'keys', (ctx, person) => keysView(ctx, services, person, { banners: flash(ctx, DONE) })),
  );

  // The one answer that carries a secret: rendered directly (200), never put in a redirect URL.
  router.post(
    '/console/keys',
    consolePage(services, 'keys', async (ctx, person) => {
      const params = await readFormParams(ctx);
      requireScope(person, 'keys:write');
      const form = Object.fromEntries(params.entries());
      // The form marks that it sent its scope boxes (none ticked is an error); without them: the person's scopes.
      const body = parseForm(CreateKeyBody, {
        name: form.name ?? '',
        ...(params.has('scopes_listed') ? { scopes: params.getAll('scope') } : {}),
        ...capsFromForm(form),
      });
      const created = await services.keyAdmin.create(person, body);
      return keysView(ctx, services, person, { banners: [createdBox(created)] });
    }),
  );

  router.post(
    '/console/keys/:id/caps',
    consoleForm(services, 'keys', 'keys:write', async (ctx, person, form) => {
      await services.keyAdmin.patch(person, paramOf(ctx, 'id'), parseForm(PatchKeyBody, capsFromForm(form)));
      seeOther(ctx, '/console/keys?done=caps');
    }),
  );

  router.post(
    '/console/keys/:id/approve',
    consoleForm(services, 'keys', 'keys:write', async (ctx, person, form) => {
      const cents = centsFromDollars(form.amount, 'Amount');
      const body = ApproveSpendBody.safeParse({ amount_cents: cents });
      if (!body.success) throw new ValidationError('Amount: enter between $0.01 and $100,000.00.');
      await services.keyAdmin.approve(person, paramOf(ctx, 'id'), body.data);
      seeOther(ctx, '/console/keys?done=approved');
    }),
  );

  router.post(
    '/console/keys/:id/revoke',
    consoleForm(services, 'keys', 'keys:write', async (ctx, person) => {
      await services.keyAdmin.revoke(person, paramOf(ctx, 'id'));
      seeOther(ctx, '/console/keys?done=revoked');
    }),
  );
}
