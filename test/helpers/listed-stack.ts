/**
 * A test stack with a paid listing behind a loopback upstream: what the gateway tests share, whether the gateway runs
 * in this process (gateway-stack.ts) or as real processes (processes.ts's `stackRoleEnv`).
 */
import type { Person } from './accounts.js';
import { createPaidApi } from './fixtures.js';
import type { LiveApi } from './listings.js';
import { createTestStack, type TestStack } from './services.js';
import { startUpstream, type Upstream, type UpstreamHandler } from './upstream.js';

export type ListedStackOptions = Parameters<typeof createTestStack>[0] &
  Omit<Parameters<typeof createPaidApi>[1], 'baseUrl' | 'provider'> & {
    /** Appended to the upstream's address to make the listing's base URL. */
    basePath?: string;
    /** The upstream's handler (default: 200 `{"ok":true}`). */
    handler?: UpstreamHandler;
  };

export interface ListedStack {
  stack: TestStack;
  upstream: Upstream;
  provider: Person;
  api: LiveApi & { provider: Person };
  /** Closes the stack, then the upstream. */
  close: () => Promise<void>;
}

/** A test stack with a loopback upstream and a paid listing of a new provider org behind it. */
export async function startListedStack(options: ListedStackOptions): Promise<ListedStack> {
  const { basePath = '', endpoints, credential, slug, handler, ...stackOptions } = options;
  const upstream = await startUpstream(handler);
  const stack = await createTestStack(stackOptions);
  const api = await createPaidApi(stack.services, {
    baseUrl: `${upstream.url}${basePath}`,
    endpoints,
    credential,
    slug,
  });
  return {
    stack,
    upstream,
    provider: api.provider,
    api,
    close: async () => {
      await stack.close();
      await upstream.close();
    },
  };
}
