/**
 * The `<api>` argument of `svc provider …` commands: an API id (`api_…`), or the slug of one of the caller's own
 * APIs, found in `GET /v1/provider/apis` (so a script can name the API it just created by the slug it chose).
 */
import { localFailure } from './client.js';
import type { Cli } from './context.js';
import { OPERATIONS } from './operations.js';

const PAGE = 200;

export async function apiIdOf(cli: Cli, ref: string): Promise<string> {
  if (ref.startsWith('api_')) return ref;
  for (let offset = 0; ; offset += PAGE) {
    const res = await cli.send(OPERATIONS.listProviderApis, { query: { limit: PAGE, offset } });
    const found = res.data.find((a) => a.slug === ref);
    if (found) return found.api_id;
    const page = res.meta.pagination as { has_more?: boolean } | undefined;
    if (!page?.has_more) break;
  }
  throw localFailure('not_found', `None of your APIs has the slug ${ref} (svc provider apis lists them).`);
}
