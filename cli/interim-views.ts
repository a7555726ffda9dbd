/**
 * Response `data` shapes the CLI reads from areas whose core response schemas are still being written (listings,
 * catalog, market, billing, provider). Each names the core type it mirrors; once that is the z.infer of a schema in
 * core/<area>/<area>.schemas.ts, cli/operations.ts imports it instead (`import type`) and the shape here goes.
 */

interface Named {
  slug: string;
  name: string;
}

/** core/catalog/listings/listings.service.ts ListingDetail (GET /v1/apis/{slug}). */
export interface Listing extends Named {
  summary: string;
  description: string | null;
  category: Named | null;
  tags: string[];
  provider: { name: string | null };
  docs_url: string | null;
  callable: boolean;
  gateway_url: string | null;
  directory_entry?: { note: string; how_to_list: string };
  svc_score: number;
  verification: { status: string };
  pricing: { endpoints: number; free_endpoints: number; min_price_cents: number; max_price_cents: number };
  endpoints: {
    endpoint_id: string;
    method: string;
    path: string;
    summary: string | null;
    price_cents: number;
    price_cents_effective: number;
  }[];
  terms: { required: boolean };
}

/** core/catalog/listings/listings.service.ts `schema()` with its EndpointSchemaRow (GET /v1/apis/{slug}/schema). */
export interface ListingSchema {
  endpoints: {
    method: string;
    path: string;
    summary: string | null;
    gateway_url: string;
    input_schema: unknown;
    output_schema: unknown;
  }[];
}

/** core/catalog/rollups/market.service.ts BoardItem (GET /v1/leaderboards/{board}). */
export interface BoardItem extends Named {
  rank: number;
  category: Named | null;
  metric: { name: string; value: number };
}

/** core/catalog/listings/listings.service.ts TermsView (GET /v1/apis/{slug}/terms). */
export interface Terms {
  api: string;
  documents: {
    document_id: string;
    kind: string;
    title: string | null;
    version: string;
    acceptance_mode: string;
    content_hash: string;
    accepted: boolean | null;
  }[];
  all_required_accepted: boolean | null;
  approval_url: string;
}

/** core/billing/billing.service.ts `checkout()` (POST /v1/billing/checkout). */
export interface Checkout {
  checkout_url: string;
  amount_cents: number;
  credit_cents: number;
}
