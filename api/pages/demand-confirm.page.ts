/**
 * `/api-requests/confirm`: the page the demand board's confirmation mail links to (issue 31, double opt-in;
 * core/demand/email-confirmation.ts). GET shows the request and the address with a button and changes nothing (mail
 * scanners follow links); the button's POST, with the CSRF token, confirms that the address may be told once when a
 * matching API is published.
 */
import type Router from '@koa/router';
import type { ConfirmationFacts } from '../../core/demand/demand.schemas.js';
import { ValidationError, type AppError } from '../../core/errors.js';
import type { Services } from '../../platform/services.js';
import type { AppContext, AppState } from '../context.js';
import { pageAndForm } from '../openapi/operation.js';
import { csrfToken, errorLine, hidden, pageHandler, readForm, render } from './forms.js';
import { escapeHtml } from './layout.js';
import { pageRouter } from './page-router.js';

const PATH = '/api-requests/confirm';
const TITLE = 'Confirm your email';

const day = (d: Date) => d.toISOString().slice(0, 10);

/** The request as the public board shows it: its words, its votes, and the listing that fulfilled it, if any. */
function requestBlock(f: ConfirmationFacts): string {
  const fulfilled = f.fulfilledBy
    ? `<p>It is already answered: <a href="/apis/${encodeURIComponent(f.fulfilledBy.slug)}">${escapeHtml(f.fulfilledBy.name)}</a> is live.</p>`
    : '';
  return `<blockquote><p>${escapeHtml(f.query)}</p></blockquote>
<p class="muted">${f.votes} organization${f.votes === 1 ? '' : 's'} asked for it.</p>${fulfilled}`;
}

function confirmForm(ctx: AppContext, f: ConfirmationFacts, token: string): string {
  return `<p>Someone asked for this API and left <strong>${escapeHtml(f.email)}</strong> to be told when it is published:</p>
${requestBlock(f)}
<p>Confirm only if you want that one message. If it was not you, close this page: the address is forgotten on
${day(f.expiresAt)} and we send nothing else.</p>
<form method="post" action="${PATH}">
  ${hidden('csrf', csrfToken(ctx))}
  ${hidden('token', token)}
  <button type="submit">Confirm</button>
</form>`;
}

function confirmedPage(f: ConfirmationFacts): string {
  const what = f.fulfilledBy
    ? 'Nothing more will be mailed for it: the API is already live (above).'
    : 'We will mail it once when a matching API is published, and nothing else.';
  return `<p class="ok" role="status"><strong>${escapeHtml(f.email)}</strong> is confirmed for this request.</p>
${requestBlock(f)}
<p>${what}</p>`;
}

const failed = (ctx: AppContext, err: AppError) =>
  render(ctx, err.status, TITLE, `${errorLine(err.message)}<p><a href="/">Home</a></p>`);

function tokenOf(value: unknown): string {
  const token = typeof value === 'string' ? value : '';
  if (!/^[0-9A-Za-z]{43}$/.test(token)) {
    throw new ValidationError('This link is missing its token or it is damaged. Open the link from the email again.');
  }
  return token;
}

function confirmPages(router: Router<AppState>, services: Services): void {
  router.get(
    PATH,
    pageHandler(async (ctx) => {
      const token = tokenOf(ctx.query.token);
      // Read only: the button's POST, with the CSRF token, is what confirms (mail scanners follow links).
      const facts = await services.demand.describeConfirmation(token);
      render(ctx, 200, TITLE, facts.confirmedAt ? confirmedPage(facts) : confirmForm(ctx, facts, token));
    }, failed),
  );

  router.post(
    PATH,
    pageHandler(async (ctx) => {
      const form = await readForm(ctx);
      const facts = await services.demand.confirmEmail(tokenOf(form.token));
      render(ctx, 200, 'Email confirmed', confirmedPage(facts));
    }, failed),
  );
}

export const demandConfirmPages = (services: Services) => pageRouter(services, confirmPages);

/** The documented operations of this file's routes (api/openapi/operations.ts gathers them). */
export const DEMAND_CONFIRM_PAGE_OPERATIONS = pageAndForm(
  PATH,
  'ConfirmApiRequestEmail',
  'Demand board: the confirmation link (shows the request; changes nothing)',
  'Demand board: confirm the address',
);
