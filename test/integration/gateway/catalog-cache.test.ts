// The gateway's catalog cache (gateway/catalog-cache.ts, issue 32's scale row): listings past half their lifetime are
// refreshed together, in one background read whatever their number, while every call is answered from the copy it
// has; what the refresh reads (a price changed without an announcement, the upstream credential, the required
// documents of the org and of the listing, an archival) is what the next call sees.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, Document, Endpoint, Org } from '../../../db/entities/index.js';
import { newId } from '../../../core/ids.js';
import { CatalogCache, type CachedApi } from '../../../gateway/catalog-cache.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

const LISTINGS = 20;
/** Long enough that a loaded machine's late timer still lands between one lifetime and two. */
const TTL_MS = 1_000;

describe('the catalog cache', () => {
  let stack: TestStack;
  const slugs: string[] = [];
  const endpointIds: string[] = [];

  beforeAll(async () => {
    stack = await createTestStack();
    const em = stack.services.orm.em.fork();
    const provider = em.create(Org, { id: newId('org'), kind: 'standard', name: 'Cache provider' });
    for (let i = 0; i < LISTINGS; i++) {
      const slug = `cache-${i}-${newId('api').slice(-6).toLowerCase()}`;
      const api = em.create(Api, {
        id: newId('api'),
        org: provider,
        name: `Cache ${i}`,
        slug,
        summary: 'catalog cache test',
        baseUrl: 'http://127.0.0.1:9/base/',
        status: 'live',
        publishedAt: new Date(),
        ...(i === 3
          ? {
              injection: 'header' as const,
              injectionName: 'X-Upstream-Key',
              credentialCiphertext: stack.services.secrets.seal('s3cret'),
            }
          : {}),
      });
      const endpoint = em.create(Endpoint, {
        id: newId('endpoint'),
        api,
        method: 'GET',
        path: '/v1/items/{id}',
        priceCents: 5,
      });
      slugs.push(slug);
      endpointIds.push(endpoint.id);
      if (i === 5) {
        em.create(Document, {
          id: newId('document'),
          org: provider,
          api,
          kind: 'sla',
          version: '1',
          body: 'listing terms',
          contentHash: createHash('sha256').update('listing terms').digest('hex'),
          acceptanceMode: 'required',
          status: 'active',
          activatedAt: new Date(),
        });
      }
    }
    // The org's own terms: required on every listing of the provider.
    em.create(Document, {
      id: newId('document'),
      org: provider,
      kind: 'terms',
      version: '1',
      body: 'org terms',
      contentHash: createHash('sha256').update('org terms').digest('hex'),
      acceptanceMode: 'required',
      status: 'active',
      activatedAt: new Date(),
    });
    await em.flush();
  }, 60_000);
  afterAll(async () => stack?.close());

  it('refreshes every stale listing in one read and serves the copy it has meanwhile', async () => {
    const cache = new CatalogCache(stack.services, { ttlMs: TTL_MS });
    const first: CachedApi[] = [];
    for (const slug of slugs) first.push((await cache.get(slug))!);
    expect(cache.loads).toBe(LISTINGS); // a miss waits for its own read
    expect(first[3]!.credential).toEqual({ secret: 's3cret', injection: 'header', injectionName: 'X-Upstream-Key' });
    expect(first[0]!.credential).toBeNull();
    expect(first[0]!.basePath).toBe('/base');
    expect(first[0]!.endpoints.map((e) => [e.method, e.template, e.priced.priceCents])).toEqual([
      ['GET', '/v1/items/{id}', 5],
    ]);
    expect(first[0]!.requiredDocuments).toHaveLength(1); // the org's terms
    expect(first[5]!.requiredDocuments).toHaveLength(2); // and the listing's own

    // Changed behind the cache's back (no announcement): a new price, an archival.
    const db = stack.services.orm.em.fork();
    await db.execute('update endpoints set price_cents = 9 where id = ?', [endpointIds[7]]);
    await db.execute(`update apis set status = 'archived', archived_at = now() where slug = ?`, [slugs[11]]);

    await new Promise((r) => setTimeout(r, TTL_MS + 100));
    // Past their lifetime (within twice it): every call is answered at once from the copy, none waits.
    for (const [i, slug] of slugs.entries()) {
      const got = cache.get(slug);
      expect(got instanceof Promise, slug).toBe(false);
      expect(got).toBe(first[i]);
    }
    await expect.poll(() => cache.loads, { timeout: 5_000 }).toBe(LISTINGS + 1); // one refresh for all twenty
    await new Promise((r) => setTimeout(r, 50));
    expect(cache.loads).toBe(LISTINGS + 1);

    const now = Date.now();
    const seven = cache.get(slugs[7]!, now) as CachedApi;
    expect(seven).not.toBe(first[7]);
    expect(seven.endpoints[0]!.priced.priceCents).toBe(9);
    const archived = cache.get(slugs[11]!, now) as CachedApi;
    expect(archived.archivedAt).toBeInstanceOf(Date);
    expect(archived.endpoints).toEqual([]);
    expect((cache.get(slugs[3]!, now) as CachedApi).credential?.secret).toBe('s3cret');
    expect((cache.get(slugs[5]!, now) as CachedApi).requiredDocuments).toHaveLength(2);
    expect(cache.loads).toBe(LISTINGS + 1);
  });

  it('waits for Postgres on a listing older than twice its lifetime, and forgets on an announced change', async () => {
    const cache = new CatalogCache(stack.services, { ttlMs: 100 });
    await cache.get(slugs[0]!);
    await new Promise((r) => setTimeout(r, 250));
    expect(cache.get(slugs[0]!)).toBeInstanceOf(Promise);
    await cache.get(slugs[0]!);
    cache.invalidate(slugs[0]);
    expect(cache.get(slugs[0]!)).toBeInstanceOf(Promise);
    expect(await cache.get('no-such-listing')).toBeNull();
  });
});
