/**
 * `/terms/{slug}`: where a person reads a live API's terms in force and accepts them for their org (the
 * `approval_url` the gateway returns with 428). Signing in is one click away and returns here. Also the two pages
 * Stripe sends a provider back to after Connect onboarding.
 */
import type Router from '@koa/router';
import { ValidationError } from '../../core/errors.js';
import type { Services } from '../../platform/services.js';
import type { AppContext, AppState } from '../context.js';
import { escapeHtml } from './layout.js';
import { csrfToken, errorLine, hidden, pageHandler, paramOf, render, signedIn, signedInPost } from './forms.js';
import { pageAndForm, pageOperation } from '../openapi/operation.js';
import { pageRouter } from './page-router.js';

type Terms = Awaited<ReturnType<Services['listings']['terms']>>;
type SignedIn = Awaited<ReturnType<typeof signedIn>>;

/** Each document in force: title, kind, version, hash, whether the org accepted it, and its text. */
async function termsDocuments(services: Services, terms: Terms): Promise<string> {
  const texts = await Promise.all(terms.documents.map((d) => services.documents.snapshot(d.document_id)));
  return terms.documents
    .map(
      (d, i) => `<section>
<h2>${escapeHtml(d.title ?? d.kind)} <span class="muted">(${escapeHtml(d.kind)}, version ${escapeHtml(d.version)}, ${escapeHtml(d.acceptance_mode)})</span></h2>
<p class="muted">SHA-256 ${escapeHtml(d.content_hash)} · <a href="/v1/documents/${escapeHtml(d.document_id)}/snapshot">plain text</a>${d.accepted ? ' · <strong class="ok">accepted</strong>' : ''}</p>
<pre style="white-space: pre-wrap; background: #f6f6f8; padding: .8rem; max-height: 20rem; overflow: auto">${escapeHtml(texts[i]!.body)}</pre>
</section>`,
    )
    .join('\n');
}

/** Under the documents: nothing to accept, sign in first, already accepted, or the accept form. */
function acceptAction(ctx: AppContext, slug: string, terms: Terms, person: SignedIn): string {
  const pending = terms.documents.filter((d) => !d.accepted);
  if (!terms.documents.length) return '<p>This API has no terms to accept.</p>';
  if (!person) {
    return `<p><a href="/login?next=${encodeURIComponent(`/terms/${slug}`)}">Sign in</a> as an owner or admin of your organization to accept.</p>`;
  }
  if (!pending.length) return '<p class="ok" role="status">Your organization has accepted these terms.</p>';
  return `<form method="post" action="/terms/${escapeHtml(slug)}">
  ${hidden('csrf', csrfToken(ctx))}
  ${pending.map((d) => hidden('document', `${d.document_id}:${d.content_hash}`)).join('\n  ')}
  <button type="submit">Accept for my organization</button>
</form>`;
}

/** The way back to the listing's page (the terms page has no site header). */
const backToListing = (api: { slug: string; name: string }) =>
  `<p><a href="/apis/${encodeURIComponent(api.slug)}">← ${escapeHtml(api.name)}</a></p>`;

/** `GET /terms/:slug`: the terms in force and what the person can do about them. */
function termsPage(router: Router<AppState>, services: Services): void {
  router.get(
    '/terms/:slug',
    pageHandler(
      async (ctx) => {
        const slug = paramOf(ctx, 'slug');
        const person = await signedIn(ctx, services);
        const [terms, detail] = await Promise.all([
          services.listings.terms(slug, person),
          services.listings.detail(slug),
        ]);
        const docs = await termsDocuments(services, terms);
        render(
          ctx,
          200,
          `Terms of ${detail.name}`,
          `${backToListing(detail)}\n${docs}\n${acceptAction(ctx, slug, terms, person)}`,
        );
      },
      (ctx, err) => render(ctx, err.status, 'Terms', errorLine(err.message)),
    ),
  );
}

/** `POST /terms/:slug`: accept the listed documents (by id and hash) for the person's org. */
function acceptTerms(router: Router<AppState>, services: Services): void {
  const page = {
    title: 'Terms',
    back: (ctx: AppContext) => `/terms/${paramOf(ctx, 'slug')}`,
    backText: 'Back to the terms',
  };
  router.post(
    '/terms/:slug',
    signedInPost(services, page, async (ctx, person, form) => {
      const slug = paramOf(ctx, 'slug');
      const pairs = form.getAll('document');
      if (!pairs.length) throw new ValidationError('Nothing to accept.');
      for (const pair of pairs) {
        const [document_id, content_hash] = pair.split(':');
        await services.documents.acceptForListing(person, slug, {
          document_id: document_id ?? '',
          content_hash: content_hash ?? '',
        });
      }
      render(
        ctx,
        200,
        'Terms accepted',
        `<p class="ok" role="status">Accepted for your organization. Calls to <strong>${escapeHtml(slug)}</strong> can go through now.</p>
${backToListing(await services.listings.detail(slug))}`,
      );
    }),
  );
}

const BILLING_RETURN: Record<string, [string, string]> = {
  success: [
    'Payment received',
    'Thanks. Your credits are added as soon as the payment is confirmed (usually within seconds).',
  ],
  card_added: ['Card saved', 'Your card is saved. Paid calls can now be billed to it once your credits run out.'],
  portal: ['Billing updated', 'You can close this tab.'],
  cancel: ['Checkout cancelled', 'Nothing was charged. You can start again whenever you like.'],
};

/** Where Stripe sends people back: after Checkout or the card portal, and after Connect onboarding. */
function stripeReturnPages(router: Router<AppState>): void {
  router.get('/billing/return', (ctx) => {
    const status = typeof ctx.query.status === 'string' ? ctx.query.status : '';
    const [title, text] = BILLING_RETURN[status] ?? ['Billing', 'You can close this tab.'];
    // The embedded payments' pages come back here in the same tab: the way back to the console.
    render(
      ctx,
      200,
      title,
      `<p role="status">${escapeHtml(text)}</p>\n<p><a href="/console/billing">Back to Billing</a></p>`,
    );
  });

  router.get('/connect/return', (ctx) => {
    render(
      ctx,
      200,
      'Payouts',
      '<p class="ok" role="status">Thanks. Stripe will confirm your details; payouts start once it does.</p>',
    );
  });
  router.get('/connect/refresh', (ctx) => {
    render(
      ctx,
      200,
      'Payouts',
      '<p>That onboarding link expired. Ask for a new one (POST /v1/provider/connect/onboard) and try again.</p>',
    );
  });
}

export const termsPages = (services: Services) => pageRouter(services, termsPage, acceptTerms, stripeReturnPages);

/** The documented operations of this file's routes (api/openapi/operations.ts gathers them). */
export const TERMS_PAGE_OPERATIONS = [
  ...pageAndForm('/terms/{slug}', 'Terms', "A listing's terms", "Accept a listing's terms"),
  pageOperation('get', '/billing/return', 'getBillingReturnPage', 'Back from checkout'),
  pageOperation('get', '/connect/return', 'getConnectReturnPage', 'Back from Connect onboarding'),
  pageOperation('get', '/connect/refresh', 'getConnectRefreshPage', 'Connect onboarding link expired'),
];
