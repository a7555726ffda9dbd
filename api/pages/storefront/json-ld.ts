/**
 * schema.org descriptions of the storefront's pages (issue 31): a listing is a `WebAPI` with one `Offer` per endpoint
 * (its price now, in US dollars from integer cents: 5 → "0.05"; a free endpoint offers at "0.00"), a provider an
 * `Organization`. The frame puts each in a `<script type="application/ld+json">` allowed by its CSP hash.
 */
import type { ListingDetail } from '../../../core/catalog/listings/listings.schemas.js';
import type { ProviderDetail } from '../../../core/profiles/profiles.schemas.js';
import { providerPath, webUrl } from './site.js';

/** Integer cents as a schema.org price: a decimal string in dollars, two places. */
export function usdPrice(cents: number): string {
  const abs = Math.abs(cents);
  return `${cents < 0 ? '-' : ''}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

export function webApiJsonLd(
  detail: ListingDetail,
  urls: { publicBase: string; page: string },
): Record<string, unknown> {
  const url = `${urls.publicBase}${urls.page}`;
  const provider = detail.provider.name ?? detail.provider.slug;
  return {
    '@context': 'https://schema.org',
    '@type': 'WebAPI',
    '@id': url,
    name: detail.name,
    description: detail.description ?? detail.summary,
    url,
    ...(detail.category ? { category: detail.category.name } : {}),
    ...(detail.tags.length ? { keywords: detail.tags.join(', ') } : {}),
    ...(detail.published_at ? { datePublished: detail.published_at } : {}),
    documentation: detail.callable
      ? `${urls.publicBase}/v1/apis/${encodeURIComponent(detail.slug)}/openapi`
      : (webUrl(detail.docs_url) ?? url),
    ...(provider
      ? {
          provider: {
            '@type': 'Organization',
            name: provider,
            ...(detail.provider.slug ? { url: `${urls.publicBase}${providerPath(detail.provider.slug)}` } : {}),
          },
        }
      : {}),
    ...(detail.callable
      ? {
          offers: detail.endpoints.map((e) => ({
            '@type': 'Offer',
            name: `${e.method} ${e.path}`,
            ...(e.summary ? { description: e.summary } : {}),
            price: usdPrice(e.price_cents_effective),
            priceCurrency: 'USD',
            url: `${url}#endpoint-${e.endpoint_id}`,
            availability: 'https://schema.org/InStock',
            ...(e.price_increase ? { priceValidUntil: e.price_increase.effective_at.slice(0, 10) } : {}),
          })),
        }
      : {}),
  };
}

export function organizationJsonLd(
  p: ProviderDetail,
  urls: { publicBase: string; page: string },
): Record<string, unknown> {
  const url = `${urls.publicBase}${urls.page}`;
  return {
    '@context': 'https://schema.org',
    '@type': 'Organization',
    '@id': url,
    name: p.display_name ?? p.slug,
    url,
    ...(p.bio ? { description: p.bio } : {}),
    ...(p.website ? { sameAs: [p.website] } : {}),
    ...(p.avatar_url ? { logo: new URL(p.avatar_url, urls.publicBase).toString() } : {}),
    makesOffer: p.apis.map((a) => ({
      '@type': 'Offer',
      itemOffered: {
        '@type': 'WebAPI',
        name: a.name,
        description: a.summary,
        url: `${urls.publicBase}/apis/${encodeURIComponent(a.slug)}`,
      },
    })),
  };
}
