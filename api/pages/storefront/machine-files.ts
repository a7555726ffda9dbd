/**
 * The storefront for machines (issue 31): `/sitemap.xml` (every live listing and every provider with one, absolute
 * URLs from PUBLIC_BASE_URL: core/catalog/listings/sitemap.ts says what counts), `/robots.txt` (the storefront open
 * to crawlers, the console, sign-in, forms and the JSON API not, and where the sitemap is), and `/llms.txt` (how an
 * agent uses this marketplace: the MCP URL, search, quoting, keys and caps, payments), per llmstxt.org.
 */
import type { SitemapEntries } from '../../../core/catalog/listings/sitemap.js';
import type { Config } from '../../../core/config.js';

const xml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

/** The sitemaps protocol allows 50,000 URLs in one file; past that the first 50,000 are listed (docs/decisions.md). */
export const SITEMAP_MAX_URLS = 50_000;

export function sitemapXml(entries: SitemapEntries, publicBase: string): string {
  const urls = [
    ...entries.listings.map((l) => ({ loc: `${publicBase}/apis/${encodeURIComponent(l.slug)}`, at: l.updated_at })),
    ...entries.providers.map((p) => ({
      loc: `${publicBase}/providers/${encodeURIComponent(p.slug)}`,
      at: p.updated_at,
    })),
  ].slice(0, SITEMAP_MAX_URLS);
  return `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${urls.map((u) => `<url><loc>${xml(u.loc)}</loc><lastmod>${u.at}</lastmod></url>`).join('\n')}
</urlset>
`;
}

/** Paths crawlers are asked to leave alone: people's steps, forms and the JSON API (the storefront is the page). */
export const ROBOTS_DISALLOW = [
  '/console',
  '/login',
  '/logout',
  '/signup',
  '/verify-email',
  '/approve/',
  '/terms/',
  '/oauth/',
  '/billing/',
  '/connect/',
  '/embedded-payments/',
  '/v1/',
  '/apis/*/quote',
];

export function robotsTxt(publicBase: string): string {
  return `# The storefront (/, /apis, /providers, /categories, /leaderboards, /market) is open to crawlers.
User-agent: *
Allow: /
${ROBOTS_DISALLOW.map((p) => `Disallow: ${p}`).join('\n')}

Sitemap: ${publicBase}/sitemap.xml
`;
}

export function llmsTxt(urls: Config['urls']): string {
  const { publicBase: base, gateway, mcp } = urls;
  return `# API marketplace

> A marketplace of third-party APIs for people and AI agents: search the catalog, quote a call, hold a scoped API key
> with money caps, and call any listing through one metered gateway (or as MCP tools). Prices are per call, in US
> cents; free endpoints cost nothing.

## For agents: the MCP server

- Agent-tool server (MCP, Streamable HTTP): ${mcp}/mcp, with \`Authorization: Bearer <API key>\`, or OAuth 2.1 (the
  server's protected-resource metadata is at ${mcp}/.well-known/oauth-protected-resource).
- No key yet: the \`svc_register\` tool (or \`POST ${base}/v1/register\`) makes an anonymous organization and a key with
  \`catalog:read\`, \`proxy:call\`, \`keys:write\` and \`usage:read\` and 0 credits: free endpoints work at once.
- Find: \`discover_tools\` {query}, \`search_apis\` {query, category?, sort?, max_price_cents?}; read: \`get_api_details\`
  {slug}, \`get_schema\` {slug}; price: \`quote_call\`; call: \`call_api\` {slug, endpoint, method?, input?}, or
  \`add_api_tools\` {slug} to install a listing's endpoints as typed tools of your own.
- Every tool: ${base}/docs/agent-tools.md

## Search

- \`GET ${base}/v1/search?q=<words>\`: hybrid (keyword and meaning) search over live listings. Filters: \`category\`,
  \`callable=true\` (only listings callable through the gateway; directory entries are listed, not callable),
  \`pricing=free|paid\`, \`min_price_cents\` / \`max_price_cents\` (over a listing's cheapest paid endpoint), \`sort\`
  (svc_score, price, relevance, new, calls, gmv, reliability, value, momentum), \`limit\` (max 500), \`offset\`.
- A listing: \`GET ${base}/v1/apis/{slug}\` (detail and prices), \`/schema\` (input and output schemas), \`/openapi\` (its
  OpenAPI 3.0 document). Categories: \`GET ${base}/v1/categories\`; boards: \`GET ${base}/v1/leaderboards/{board}\`.
- The same catalog as pages: ${base}/apis (each listing at ${base}/apis/{slug}); every page: ${base}/sitemap.xml

## Quoting

- \`GET ${base}/v1/apis/{slug}/quote?method=GET&path=/forecast\`: what the call costs now (discounts and scheduled
  increases applied); with your key as a bearer, also whether the gateway would admit it and the exact refusal
  otherwise. Nothing is spent.

## Calling

- \`${gateway}/v1/proxy/{slug}/{path}\`, any method the endpoint has, \`Authorization: Bearer <API key>\` (the key needs
  \`proxy:call\`). The answer is an envelope: \`data\` is the upstream's body, \`meta.cost_cents\` what it cost.
- Retries: send \`Idempotency-Key\`; a repeat of a successful call is not billed again (\`meta.replayed\`).
- Some listings require accepting their terms first (428 \`terms_acceptance_required\` with an \`approval_url\` a person
  opens).

## Keys and caps

- \`POST ${base}/v1/keys\` {name, scopes?, budget_cents?} with a key holding \`keys:write\`; then \`PATCH
  ${base}/v1/keys/{id}\` to set \`budget_cents\` (lifetime), \`per_call_max_cents\`, \`daily_cap_cents\` (UTC day) and
  \`approval_mode\`. A key may tighten its own caps; loosening one needs a person. A key minted by a key never gets more
  than its parent, and its spend counts against the parent's caps.
- A call over a cap is refused before anything is spent, with a 402: \`per_call_limit_exceeded\`, \`insufficient_budget\`,
  \`daily_cap_exceeded\`, \`payment_required\`.

## Paying

- Prepaid credits (a person buys a credit pack at checkout) or a card on file; paid calls need one of them, or the
  $1.00 trial credit of a verified human signup. Steps a person completes in a browser: checkout, adding a card,
  accepting terms, approving spend of an approval-mode key.
- x402 (HTTP 402 payments by the agent itself) is not supported yet.

## More

- API reference (OpenAPI 3.1): ${base}/v1/openapi.json, browsable at ${base}/docs
- Conventions (envelope, errors, request ids): ${base}/docs/api-conventions.md
`;
}
