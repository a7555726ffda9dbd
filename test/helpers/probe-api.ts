/** A listing drafted through the control plane's API, as a provider makes one, for tests that then publish it. */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { describe as show, http } from './http.js';

/**
 * Drafts `name` (slug `traced-…`) over `upstreamUrl` with one 1-cent `GET /probe`, as the person with `session`, at
 * the control plane `apiUrl`; expects 201 and returns the draft's api_id.
 */
export async function draftProbeApi(
  apiUrl: string,
  session: string,
  listing: { name: string; summary: string; upstreamUrl: string },
): Promise<string> {
  const draft = await http(apiUrl, 'POST', '/v1/provider/apis', {
    token: session,
    body: {
      name: listing.name,
      slug: `traced-${randomBytes(3).toString('hex')}`,
      summary: listing.summary,
      base_url: listing.upstreamUrl,
      endpoints: [{ method: 'GET', path: '/probe', price_cents: 1 }],
    },
  });
  expect(draft.status, show(draft)).toBe(201);
  return draft.body.data.api_id as string;
}
