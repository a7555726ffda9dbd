/**
 * The storefront (issue 31): the catalog's public pages, no sign-in needed. `/apis` (search and browse),
 * `/apis/{slug}` (a listing) and its quote page, `/providers/{slug}`, `/categories/{slug}`, `/leaderboards` (and one
 * board), `/market`; and for machines `/sitemap.xml`, `/robots.txt`, `/llms.txt`. Every request counts against the
 * per-address limit of public reads (api/middleware/public-reads.ts); anonymous answers are cacheable with an ETag,
 * a signed-in person's are private (frame.ts). The console's catalog renders the same views (console/catalog.page.ts).
 */
import type Router from '@koa/router';
import { escapeHtml } from '../../../core/html.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext, AppState } from '../../context.js';
import { countPublicRead } from '../../middleware/public-reads.js';
import { documented, empty, media, type Operation } from '../../openapi/operation.js';
import { formQuery } from '../console/provider-forms.js';
import { pageError, paramOf, signedIn } from '../forms.js';
import { pageRouter } from '../page-router.js';
import { leaderboardPage, leaderboardsPage } from './boards-view.js';
import { sendPublic, sendStorefront, type StorefrontView, type Viewer } from './frame.js';
import { webApiJsonLd } from './json-ld.js';
import { listingBody, loadListing, quotePage } from './listing-view.js';
import { llmsTxt, robotsTxt, sitemapXml } from './machine-files.js';
import { marketView } from './market-view.js';
import { providerView } from './provider-view.js';
import { categoryPage, searchPage } from './search-view.js';
import { STOREFRONT } from './site.js';

const ERROR_TITLES: Record<number, string> = {
  400: 'Check the request',
  404: 'Not found',
  410: 'Gone',
  429: 'Too many requests',
};

/** A failure as a page: what happened and where to go on. */
function errorView(status: number, message: string): StorefrontView {
  return {
    title: ERROR_TITLES[status] ?? (status >= 500 ? 'Something went wrong' : 'Refused'),
    status,
    body: `<p class="error" role="alert">${escapeHtml(message)}</p>
<p><a href="/apis">Browse all APIs</a> · <a href="/">Home</a></p>`,
  };
}

/** A storefront page: the per-address limit, who is looking, the view, sent in the frame; a failure as a page. */
function storefrontPage(services: Services, fn: (ctx: AppContext, viewer: Viewer) => Promise<StorefrontView>) {
  return async (ctx: AppContext) => {
    const viewer: Viewer = {};
    try {
      await countPublicRead(services, ctx);
      viewer.person = await signedIn(ctx, services);
      sendStorefront(ctx, await fn(ctx, viewer), viewer, services.config.urls.publicBase);
    } catch (err) {
      const appError = pageError(ctx, err);
      for (const [k, v] of Object.entries(appError.headers ?? {})) ctx.set(k, v);
      sendStorefront(ctx, errorView(appError.status, appError.message), viewer, services.config.urls.publicBase);
    }
  };
}

/** A machine-readable file: the same limit and caching, no frame; a refusal is the JSON envelope (for a program). */
function storefrontFile(services: Services, type: string, fn: () => Promise<string> | string) {
  return async (ctx: AppContext) => {
    await countPublicRead(services, ctx);
    sendPublic(ctx, await fn(), { type, signedIn: false });
  };
}

function catalogPages(router: Router<AppState>, services: Services): void {
  // `/catalog` too, where people look for a catalog first (issue 31 found it a JSON 404): the same page, whose
  // canonical URL is /apis (a redirect-only operation would be the document's one operation without a 2xx answer).
  router.get(
    ['/apis', '/catalog'],
    storefrontPage(services, async (ctx) => {
      const query = formQuery(ctx);
      const page = await searchPage(services, STOREFRONT, query);
      return {
        title: query.q ? `APIs matching “${query.q.slice(0, 80)}”` : 'APIs',
        status: page.status,
        head: {
          description: 'Search and browse every API of this marketplace: prices, stats and how to call each.',
          canonical: '/apis',
        },
        body: `${page.body}
<p class="muted">Missing an API? <a href="/console/catalog#request-h">Request it</a> (signed in) and providers see it.</p>`,
      };
    }),
  );
  router.get(
    '/categories/:category',
    storefrontPage(services, async (ctx) => {
      const page = await categoryPage(services, STOREFRONT, paramOf(ctx, 'category'), formQuery(ctx));
      const description = `${page.category.name} APIs: prices, stats and how to call each.`;
      return { ...page, head: { description, canonical: STOREFRONT.category(page.category.slug) } };
    }),
  );
  router.get(
    '/leaderboards',
    storefrontPage(services, async (ctx) => {
      const query = formQuery(ctx);
      const page = await leaderboardsPage(services, STOREFRONT, query);
      return {
        ...page,
        head: { description: 'The six leaderboards of this marketplace.', canonical: '/leaderboards' },
      };
    }),
  );
  router.get(
    '/leaderboards/:board',
    storefrontPage(services, async (ctx) => {
      const page = await leaderboardPage(services, STOREFRONT, paramOf(ctx, 'board'), formQuery(ctx));
      return { ...page, head: { canonical: STOREFRONT.leaderboard(page.board) } };
    }),
  );
  router.get(
    '/market',
    storefrontPage(services, (_ctx, viewer) => marketView(services, viewer)),
  );
  router.get(
    '/providers/:slug',
    storefrontPage(services, (ctx) => providerView(services, paramOf(ctx, 'slug'))),
  );
}

function listingPages(router: Router<AppState>, services: Services): void {
  const { urls } = services.config;
  router.get(
    '/apis/:slug',
    storefrontPage(services, async (ctx, viewer) => {
      const data = await loadListing(services, paramOf(ctx, 'slug'), viewer);
      const page = STOREFRONT.listing(data.detail.slug);
      return {
        title: data.detail.name,
        head: {
          description: data.detail.summary,
          canonical: page,
          ogType: 'product',
          jsonLd: [webApiJsonLd(data.detail, { publicBase: urls.publicBase, page })],
        },
        body: listingBody(STOREFRONT, data, viewer, urls),
      };
    }),
  );
  router.get(
    '/apis/:slug/quote',
    storefrontPage(services, async (ctx, viewer) => ({
      ...(await quotePage(services, STOREFRONT, paramOf(ctx, 'slug'), formQuery(ctx), viewer)),
      head: { canonical: STOREFRONT.listing(paramOf(ctx, 'slug')) },
    })),
  );
}

function machineFiles(router: Router<AppState>, services: Services): void {
  const { urls } = services.config;
  router.get(
    '/sitemap.xml',
    storefrontFile(services, 'application/xml; charset=utf-8', async () =>
      sitemapXml(await services.listings.sitemap(), urls.publicBase),
    ),
  );
  router.get(
    '/robots.txt',
    storefrontFile(services, 'text/plain; charset=utf-8', () => robotsTxt(urls.publicBase)),
  );
  router.get(
    '/llms.txt',
    storefrontFile(services, 'text/plain; charset=utf-8', () => llmsTxt(urls)),
  );
}

export const storefrontRoutes = (services: Services) => pageRouter(services, catalogPages, listingPages, machineFiles);

/** A storefront page's operation: HTML (or the file's type), 304 for a matching If-None-Match. */
function storefrontOperation(path: string, operationId: string, summary: string, type = 'text/html'): Operation {
  return documented({
    method: 'get',
    path,
    operationId,
    summary,
    tag: 'Pages',
    auth: 'none',
    html: true,
    success: {
      200: media(type, type === 'text/html' ? 'The page.' : 'The file.'),
      304: empty('Not modified: the If-None-Match header holds the current ETag (anonymous visitors only).'),
    },
  });
}

/** The documented operations of this file's routes (api/openapi/operations.ts gathers them). */
export const STOREFRONT_OPERATIONS = [
  storefrontOperation(
    '/catalog',
    'getCatalogPage',
    'Storefront: search and browse (the /apis page, its canonical URL)',
  ),
  storefrontOperation('/apis', 'getStorefrontSearch', 'Storefront: search and browse the catalog'),
  storefrontOperation('/apis/{slug}', 'getStorefrontListing', "Storefront: a listing's page"),
  storefrontOperation('/apis/{slug}/quote', 'getStorefrontQuote', 'Storefront: quote a call of a listing'),
  storefrontOperation('/providers/{slug}', 'getStorefrontProvider', "Storefront: a provider's profile"),
  storefrontOperation('/categories/{category}', 'getStorefrontCategory', 'Storefront: the APIs of a category'),
  storefrontOperation('/leaderboards', 'getStorefrontLeaderboards', 'Storefront: the six boards'),
  storefrontOperation('/leaderboards/{board}', 'getStorefrontLeaderboard', 'Storefront: one board'),
  storefrontOperation('/market', 'getStorefrontMarket', 'Storefront: the market overview'),
  storefrontOperation('/sitemap.xml', 'getSitemap', 'Every live listing and provider page', 'application/xml'),
  storefrontOperation('/robots.txt', 'getRobots', 'What crawlers may read', 'text/plain'),
  storefrontOperation('/llms.txt', 'getLlmsTxt', 'How an agent uses this marketplace', 'text/plain'),
];
