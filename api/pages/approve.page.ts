/**
 * `/approve/{keyId}`: where an owner or admin approves spend for an approval-mode key (the `approval_url` of the
 * gateway's 402). Signing in is one click away and returns here; the form is CSRF-protected like every page form.
 */
import type Router from '@koa/router';
import { ApproveSpendBody } from '../../core/keys/keys.schemas.js';
import type { Services } from '../../platform/services.js';
import { ValidationError } from '../../core/errors.js';
import type { AppContext, AppState } from '../context.js';
import { usd as dollars } from './dollars.js';
import { escapeHtml } from './layout.js';
import { csrfToken, errorLine, hidden, pageHandler, paramOf, render, signedIn, signedInPost } from './forms.js';
import { pageAndForm } from '../openapi/operation.js';
import { pageRouter } from './page-router.js';

type KeyView = Awaited<ReturnType<Services['keyAdmin']['get']>>;

/** The key's approval state and the form to approve more. */
const approveForm = (ctx: AppContext, keyId: string, key: KeyView) =>
  `<p>Key <strong>${escapeHtml(key.name)}</strong> (${escapeHtml(key.keyPrefix)}…) is in approval mode: its paid calls wait for a person.</p>
<p>Spent ${dollars(key.spent_cents)} of ${dollars(key.approved_cents)} approved; ${dollars(key.remaining_approval_cents ?? 0)} left.</p>
<form method="post" action="/approve/${escapeHtml(keyId)}">
  ${hidden('csrf', csrfToken(ctx))}
  <label>Approve more, in cents <input name="amount_cents" inputmode="numeric" pattern="[0-9]+" required value="500"></label>
  <button type="submit">Approve</button>
</form>`;

/** `GET /approve/:keyId`: sign in first, else the key's approval state and the form. */
function approvePage(router: Router<AppState>, services: Services): void {
  router.get(
    '/approve/:keyId',
    pageHandler(
      async (ctx) => {
        const keyId = paramOf(ctx, 'keyId');
        const person = await signedIn(ctx, services);
        if (!person) {
          render(
            ctx,
            200,
            'Approve spend',
            `<p><a href="/login?next=${encodeURIComponent(`/approve/${keyId}`)}">Sign in</a> as an owner or admin of the key's organization to approve its spend.</p>`,
          );
          return;
        }
        const key = await services.keyAdmin.get(person, keyId);
        render(ctx, 200, `Approve spend for ${key.name}`, approveForm(ctx, keyId, key));
      },
      (ctx, err) => render(ctx, err.status, 'Approve spend', errorLine(err.message)),
    ),
  );
}

/** `POST /approve/:keyId`: approve more spend (as `POST /v1/keys/:id/approve`). */
function approvePost(router: Router<AppState>, services: Services): void {
  const page = {
    title: 'Approve spend',
    back: (ctx: AppContext) => `/approve/${paramOf(ctx, 'keyId')}`,
    backText: 'Back',
  };
  router.post(
    '/approve/:keyId',
    signedInPost(services, page, async (ctx, person, form) => {
      const amount = Number(form.get('amount_cents'));
      const body = ApproveSpendBody.safeParse({ amount_cents: amount });
      if (!body.success) throw new ValidationError('Enter a whole number of cents between 1 and 10,000,000.');
      const key = await services.keyAdmin.approve(person, paramOf(ctx, 'keyId'), body.data);
      render(
        ctx,
        200,
        'Spend approved',
        `<p class="ok" role="status">Approved. Key <strong>${escapeHtml(key.name)}</strong> may spend ${dollars(key.remaining_approval_cents ?? 0)} more.</p>`,
      );
    }),
  );
}

export const approvalPages = (services: Services) => pageRouter(services, approvePage, approvePost);

/** The documented operations of this file's routes (api/openapi/operations.ts gathers them). */
export const APPROVE_PAGE_OPERATIONS = pageAndForm(
  '/approve/{keyId}',
  'Approve',
  'Approve spend for a key',
  'Approve spend for a key',
);
