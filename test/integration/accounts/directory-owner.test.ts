// Issue 21 item 3: the imported directory belongs to the org flagged `directory`, never to whoever holds the profile
// slug `public-apis`; that slug and the platform's own words are reserved for every user-facing profile update.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { CONSUMER_SCOPES, VERIFIED_EXTRA_SCOPES } from '../../../core/auth/scopes.js';
import { newId } from '../../../core/ids.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { Org } from '../../../db/entities/index.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, serve, describe as show } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

const ENTRIES = [
  { name: 'Cat Facts', url: 'https://catfact.example', description: 'Daily cat facts', category: 'Animals' },
  { name: 'Tide Tables', url: 'https://tides.example', description: 'Harbour tides', category: 'Weather' },
];

describe('who owns the imported directory', () => {
  let stack: TestStack;
  let server: RunningHttpServer;
  let base: string;
  let squatter: { orgId: string; key: string };

  beforeAll(async () => {
    stack = await createTestStack();
    server = await serve(createApiApp(stack.services).callback());
    base = server.url;
    const em = stack.services.orm.em.fork();
    const org = em.create(Org, { id: newId('org'), kind: 'standard' });
    const { plaintext } = stack.services.keys.create(em, {
      orgId: org.id,
      name: 'provider',
      scopes: [...CONSUMER_SCOPES, ...VERIFIED_EXTRA_SCOPES],
      source: 'signup',
    });
    await em.flush();
    squatter = { orgId: org.id, key: plaintext };
  });
  afterAll(async () => {
    await server.close();
    await stack.close();
  });

  it('refuses the reserved slugs in a profile update with a 400 naming the rule', async () => {
    for (const slug of ['public-apis', 'admin', 'mcp', 'oauth', 'gateway', 'svc', 'platform', 'directory', 'docs']) {
      const res = await http(base, 'PATCH', '/v1/me/profile', { token: squatter.key, body: { slug } });
      expectFailure(res, 400, 'validation_failed');
      expect(res.body.error.message, show(res)).toMatch(/slug: is reserved/);
    }
    const fine = await http(base, 'PATCH', '/v1/me/profile', {
      token: squatter.key,
      body: { slug: 'public-apis-fan' },
    });
    expect(fine.status, show(fine)).toBe(200);
  });

  it('a provider who took public-apis first does not get the directory listings', async () => {
    // Taken before the slug was reserved (the API refuses it now).
    await sql(stack.db.url, `update profiles set slug = 'public-apis' where org_id = $1`, [squatter.orgId]);
    const report = await stack.services.directoryImport.importEntries(ENTRIES);
    expect(report.inserted).toBe(2);
    expect(report.org_id).not.toBe(squatter.orgId);
    const owners = await sql<{ org_id: string; directory: boolean }>(
      stack.db.url,
      `select a.org_id, o.directory from apis a join orgs o on o.id = a.org_id where a.source = 'directory'`,
    );
    expect(owners).toHaveLength(2);
    for (const o of owners) expect(o).toEqual({ org_id: report.org_id, directory: true });
    // The squatter sees none of them as its own, and keeps only its own profile.
    const mine = await http(base, 'GET', '/v1/provider/apis', { token: squatter.key });
    expect(mine.status, show(mine)).toBe(200);
    expect(mine.body.data).toEqual([]);
    const [profile] = await sql<{ slug: string | null }>(stack.db.url, 'select slug from profiles where org_id = $1', [
      report.org_id,
    ]);
    expect(profile?.slug).toBeNull(); // the slug stays with its holder; the directory's profile goes without it

    // Re-running finds the same org by its flag; exactly one org is flagged.
    const again = await stack.services.directoryImport.importEntries(ENTRIES);
    expect(again.org_id).toBe(report.org_id);
    expect(again.unchanged).toBe(2);
    const flagged = await sql(stack.db.url, 'select id from orgs where directory');
    expect(flagged).toEqual([{ id: report.org_id }]);
    await expect(sql(stack.db.url, 'update orgs set directory = true where id = $1', [squatter.orgId])).rejects.toThrow(
      /orgs_directory_uniq/,
    );
  });
});
