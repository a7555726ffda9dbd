/**
 * Whether this marketplace's address policy refuses a listing's upstream (issue 31): the gateway then answers its
 * consumers 503 `upstream_not_allowed` (never the provider's fault, never "up"), and the provider is told here what is
 * wrong and how to fix it (provider analytics' `upstream_problem`, and a banner on the API's console page). The same
 * check as the gateway's (the SSRF guard's policy, the demo's named upstream included); read at request time, so it
 * is current whatever the setting was when the listing was made.
 */
import { UpstreamRequestError, type UpstreamGuard } from './upstream-guard.js';
import type { UpstreamProblem } from './upstream.schemas.js';
export type { UpstreamProblem } from './upstream.schemas.js';

/** The problem with `baseUrl` under `guard`'s policy, or null (allowed, or a failure that is not the policy's). */
export async function upstreamProblem(guard: UpstreamGuard, baseUrl: string): Promise<UpstreamProblem | null> {
  try {
    await guard.checkUrl(baseUrl);
    return null;
  } catch (err) {
    // Only a refused address is what the gateway refuses too; a DNS failure or a plain-http public host is not.
    if (!(err instanceof UpstreamRequestError) || err.reason !== 'blocked_address') return null;
    const host = new URL(baseUrl).host;
    return {
      code: 'upstream_not_allowed',
      message:
        `The gateway cannot reach this API's upstream (${host}) under this marketplace's address policy: it is a ` +
        'loopback, private or otherwise non-public address. Consumers are answered 503 upstream_not_allowed and ' +
        'nothing is charged.',
      hint:
        'Serve the upstream at a public https address and set it as the base URL (Details on the API page, or ' +
        'PATCH /v1/provider/apis/{id} with base_url). For local development only, the operator can restart the ' +
        'marketplace with UPSTREAM_ALLOW_PRIVATE=true.',
    };
  }
}
