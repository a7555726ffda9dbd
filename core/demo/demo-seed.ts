/**
 * `npm start -- --demo` (issue 31 item 7): the demo provider and its sample APIs (core/demo/demo-apis.ts), published
 * and callable, with terms in force and a few days of history (core/demo/demo-history.ts). Run by scripts/start.ts
 * once the control plane listens (the listings are imported from the demo upstream's OpenAPI documents over HTTP,
 * through the SSRF guard, like any provider's). Idempotent: each piece is looked up before it is made, so a second
 * start adds nothing (a listing's base URL follows API_PORT when that changed).
 *
 * Each listing goes through the ordinary provider paths: ProvidersService.create with `import_from` (the OpenAPI
 * import; the prices overlay the imported operations), the terms through DocumentsService, and publication by the
 * two steps the verify-and-publish workflow runs (the smoke test, then the status flip), called in process so the
 * demo is live before the start banner prints, with no wait on Temporal.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Api, Org, Profile, User } from '../../db/entities/index.js';
import { SCOPES, type Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { ProviderLifecycleService } from '../providers/lifecycle.service.js';
import { CreateApiBody } from '../providers/providers.schemas.js';
import type { ProvidersService } from '../providers/providers.service.js';
import { isReservedSlug } from '../profiles/reserved-slugs.js';
import type { GatewayEvents } from '../spend/gateway-events.js';
import type { DocumentsService } from '../terms/documents.service.js';
import { DEMO_APIS, type DemoApi } from './demo-apis.js';
import { seedHistory, type HistoryDeps, type HistoryReport } from './demo-history.js';
import { demoBaseUrl } from './demo-upstream.js';

/** The demo provider's owner: a person a newcomer can sign in as (the code is mailed to the terminal). */
export const DEMO_PROVIDER_EMAIL = 'demo-provider@example.com';
const DEMO_PROFILE = {
  slug: 'sample-apis',
  displayName: 'Sample APIs (demo)',
  bio:
    'Sample APIs served by this marketplace itself (`npm start -- --demo`): callable offline, with free endpoints, ' +
    'prices, terms and a few days of history.',
};

const TERMS = `# Terms of use of the sample APIs

These APIs are samples served by the marketplace you are running (npm start -- --demo). They answer from data
bundled with the software, never reach the network, and come with no warranty.

1. Calls are metered and billed like any listing's: free endpoints cost nothing, paid ones their listed price.
2. Do not rely on the answers for anything that matters: they exist to show how the marketplace works.
3. The demo provider may change or retire these APIs at any time.
`;

export interface DemoDeps extends HistoryDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  logger: Logger;
  providers: Pick<ProvidersService, 'create'>;
  providerLifecycle: Pick<ProviderLifecycleService, 'smokeTest' | 'setStatus'>;
  documents: Pick<DocumentsService, 'create' | 'activate' | 'list'>;
  gatewayEvents: Pick<GatewayEvents, 'listingChanged'>;
}

export interface DemoReport {
  provider_org_id: string;
  /** Listings made by this run (each published unless its smoke test failed). */
  created: string[];
  /** Listings published by this run. */
  published: string[];
  /** Listings whose base URL followed a changed API_PORT. */
  moved: string[];
  /** The sample history written by this run, or null (already there, or nothing live). */
  history: HistoryReport | null;
}

export async function seedDemo(deps: DemoDeps): Promise<DemoReport> {
  const provider = await ensureProvider(deps);
  await ensureTerms(deps, provider);
  const report: DemoReport = { provider_org_id: provider.orgId, created: [], published: [], moved: [], history: null };
  for (const api of DEMO_APIS) await ensureApi(deps, provider, api, report);
  report.history = await seedHistory(deps, provider.orgId);
  return report;
}

/** The demo provider (found by its owner's email): an org, its owner (email verified) and a public profile. */
async function ensureProvider(deps: DemoDeps): Promise<Principal> {
  const em = deps.orm.em.fork();
  let user = await em.findOne(User, { email: DEMO_PROVIDER_EMAIL });
  if (!user) {
    user = await em.transactional(async (tem) => {
      const org = tem.create(Org, { id: newId('org'), kind: 'standard', name: DEMO_PROFILE.displayName });
      const slugFree = !isReservedSlug(DEMO_PROFILE.slug) && !(await tem.findOne(Profile, { slug: DEMO_PROFILE.slug }));
      tem.create(Profile, {
        org,
        displayName: DEMO_PROFILE.displayName,
        slug: slugFree ? DEMO_PROFILE.slug : null,
        bio: DEMO_PROFILE.bio,
      });
      return tem.create(User, {
        id: newId('user'),
        org,
        email: DEMO_PROVIDER_EMAIL,
        role: 'owner',
        emailVerifiedAt: deps.clock.now(),
      });
    });
    deps.logger.info({ org_id: user.org.id, email: DEMO_PROVIDER_EMAIL }, 'demo: provider created');
  }
  return {
    type: 'session',
    orgId: user.org.id,
    sessionId: 'demo-seed',
    userId: user.id,
    role: 'owner',
    emailVerified: true,
    scopes: SCOPES,
    email: DEMO_PROVIDER_EMAIL,
  };
}

/** The provider's terms (org-wide, in force, optional: a key with no person behind it can still call). */
async function ensureTerms(deps: DemoDeps, provider: Principal): Promise<void> {
  const docs = await deps.documents.list(provider, { kind: 'terms' });
  if (docs.some((d) => d.status === 'active')) return;
  const draft =
    docs.find((d) => d.status === 'draft') ??
    (await deps.documents.create(provider, {
      kind: 'terms',
      source: 'hosted',
      version: '1.0',
      title: 'Terms of use of the sample APIs',
      body: TERMS,
      api_id: null,
      acceptance_mode: 'optional',
    }));
  await deps.documents.activate(provider, draft.document_id);
}

async function ensureApi(deps: DemoDeps, provider: Principal, api: DemoApi, report: DemoReport): Promise<void> {
  const em = deps.orm.em.fork();
  const base = demoBaseUrl(deps.config, api);
  const existing = await em.findOne(Api, { slug: api.slug });
  if (existing && existing.org.id !== provider.orgId) {
    deps.logger.warn({ slug: api.slug }, 'demo: another organization holds this slug; that sample API is skipped');
    return;
  }
  let apiId = existing?.id;
  if (existing && existing.baseUrl !== base) {
    existing.baseUrl = base;
    await em.flush();
    await deps.gatewayEvents.listingChanged(existing.slug);
    report.moved.push(api.slug);
  }
  if (!apiId) {
    const created = await deps.providers.create(provider, createBody(api, base));
    apiId = created.api_id;
    report.created.push(api.slug);
  }
  // A sample API never published (a first start that stopped half-way) is published now; one its provider
  // unpublished on purpose stays a draft.
  if (existing?.publishedAt) return;
  if (existing && existing.status === 'live') return;
  const verification = await deps.providerLifecycle.smokeTest(apiId);
  if (!verification.passed) {
    deps.logger.warn({ slug: api.slug, checks: verification.checks }, 'demo: smoke test failed; left as a draft');
    return;
  }
  await deps.providerLifecycle.setStatus(apiId, 'live');
  report.published.push(api.slug);
}

function createBody(api: DemoApi, base: string): CreateApiBody {
  return CreateApiBody.parse({
    name: api.name,
    slug: api.slug,
    summary: api.summary,
    description: api.description,
    tags: api.tags,
    category: api.category,
    examples: api.examples,
    base_url: base,
    import_from: { type: 'openapi_url', url: `${base}/openapi.json` },
    endpoints: api.endpoints.map((e) => ({ method: e.method, path: e.path, price_cents: e.priceCents })),
  });
}
