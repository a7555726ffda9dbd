// Search totals and the result window (issue 33) on every surface, both sides of the threshold, over one catalog:
// three directory entries of one category (a small catalog: exact totals), plus 10,050 live directory listings
// written by SQL in two statements (each saying "zephyr"; a zero vector, so no match by meaning) in another. Above
// 10,000 results `total` is 10,000 with `total_exact: false` on REST, both search tools, the storefront and console
// pages and the CLI; paging stops at the window: REST and the tools answer `offset + limit` beyond it with a
// validation error carrying the hint to refine the query, the pages link no further and refuse a hand-made page past
// it with a 400 that says what to do.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { createEmbedder } from '../../../core/catalog/search/embedder.js';
import { SEARCH_WINDOW } from '../../../core/catalog/search/search.schemas.js';
import { createMcpApp, type McpSurface } from '../../../mcp/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { closeAll } from '../../helpers/fixtures.js';
import { expectFailure, http, serve, describe as show } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { runSvc, shownRun } from '../../helpers/svc-cli.js';

/** Listings beyond the window: 50 more than it holds. */
const BULK = SEARCH_WINDOW + 50;
/** The schema's hint (core/catalog/search/search.schemas.ts), as an issue's message and in the error's message. */
const ISSUE = /^must leave offset \+ limit at most 10000: .*refine the query/;
const HINT = /offset: must leave offset \+ limit at most 10000: .*refine the query/;
const ABOVE = { total: SEARCH_WINDOW, total_exact: false };

type Data = Record<string, any>;

describe('search totals: exact up to 10,000, then a flagged lower bound, on every surface', () => {
  let stack: TestStack;
  let api: RunningHttpServer;
  let mcp: McpSurface;
  let mcpServer: RunningHttpServer;
  let person: Person;
  let client: Client;
  let home: string;

  beforeAll(async () => {
    stack = await createTestStack({ env: { PUBLIC_RATE_LIMIT_PER_MIN: '100000' } });
    api = await serve(createApiApp(stack.services).callback());
    mcp = createMcpApp(stack.services);
    mcpServer = await serve(mcp.app.callback());
    person = await createPerson(stack.services);
    home = await mkdtemp(path.join(os.tmpdir(), 'svc-search-totals-'));
    const small = await stack.services.directoryImport.importEntries(
      ['North', 'South', 'West'].map((coast) => ({
        name: `${coast} Tide Tables`,
        url: `https://tides.example.org/${coast.toLowerCase()}`,
        description: `Tide tables for the harbours of the ${coast.toLowerCase()} coast`,
        category: 'Tides',
      })),
    );
    expect(small).toMatchObject({ inserted: 3, indexed: 3 });
    // The filler, cheaply: live directory listings with a full-text document and a zero vector marked as this index's
    // (a current row: nothing to re-index at the first sync).
    const dims = createEmbedder(stack.config.search).dims;
    await sql(stack.db.url, `insert into categories (slug, name) values ('filler', 'Filler')`);
    await sql(
      stack.db.url,
      `insert into apis (id, org_id, name, slug, summary, category, source, base_url, status, published_at)
       select 'api_zephyr' || lpad(i::text, 6, '0'), $1, 'Zephyr ' || i, 'zephyr-' || i,
              'Zephyr filler listing ' || i, 'filler', 'directory', 'https://zephyr.example.org/' || i, 'live', now()
         from generate_series(1, $2::int) i`,
      [small.org_id, BULK],
    );
    await sql(
      stack.db.url,
      `insert into api_search (api_id, document, embedding, embedder)
       select id, to_tsvector('english', name || '. ' || summary), decode(repeat('00', $1::int * 4), 'hex'), $2
         from apis where category = 'filler'`,
      [dims, stack.services.searchIndex.marker],
    );
    await sql(
      stack.db.url,
      `insert into search_lexicon (word) select distinct w from api_search, unnest(tsvector_to_array(document)) w
        on conflict do nothing`,
    );
    await sql(stack.db.url, 'analyze apis, api_search');
    await stack.services.search.sync(true);

    client = new Client({ name: 'search-totals-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${mcpServer.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${person.apiKey}` } },
      }),
    );
    // As an agent does: listed first, so the client checks each result against the tool's output schema.
    await client.listTools();
  }, 120_000);
  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await closeAll(mcp, mcpServer, api, stack);
    if (home) await rm(home, { recursive: true, force: true });
  });

  const get = async (p: string, status = 200) => {
    const res = await http(api.url, 'GET', p);
    expect(res.status, show(res)).toBe(status);
    return res;
  };

  it('REST: exact below the window, 10,000 flagged above it (browse, a keyword, a category); paging stops at 10,000', async () => {
    const [live] = await sql<{ n: string }>(stack.db.url, `select count(*) as n from apis where status = 'live'`);
    expect(Number(live!.n)).toBe(BULK + 3);
    for (const p of ['/v1/search?limit=5', '/v1/search?q=zephyr&limit=5', '/v1/search?category=filler&limit=5']) {
      const res = await get(p);
      expect(res.body.meta, p).toMatchObject({ ...ABOVE, limit: 5, offset: 0 });
      expect(res.body.data, p).toHaveLength(5);
    }
    const small = await get('/v1/search?category=tides');
    expect(small.body.meta).toMatchObject({ total: 3, total_exact: true, sort: 'svc_score' });
    const tide = await get('/v1/search?q=tide%20tables');
    expect(tide.body.meta).toMatchObject({ total_exact: true });
    expect(tide.body.meta.total, show(tide)).toBeGreaterThanOrEqual(3);
    expect(tide.body.meta.total).toBeLessThan(SEARCH_WINDOW);

    // The window's last page answers; one result further is refused, with the hint.
    const last = await get('/v1/search?q=zephyr&offset=9950&limit=50');
    expect(last.body.meta).toMatchObject({ ...ABOVE, offset: 9950, limit: 50 });
    expect(last.body.data).toHaveLength(50);
    // Stable up to the window: its 20 pages of 500 hold 10,000 distinct listings, the last 50 those of that page.
    const slugs: string[] = [];
    for (let offset = 0; offset < SEARCH_WINDOW; offset += 500) {
      const res = await get(`/v1/search?q=zephyr&offset=${offset}&limit=500`);
      expect(res.body.meta, `offset ${offset}`).toMatchObject(ABOVE);
      slugs.push(...res.body.data.map((i: { slug: string }) => i.slug));
    }
    expect(new Set(slugs).size).toBe(SEARCH_WINDOW);
    expect(slugs.slice(-50)).toEqual(last.body.data.map((i: { slug: string }) => i.slug));
    for (const p of ['/v1/search?q=zephyr&offset=9951&limit=50', '/v1/search?offset=9990&limit=50']) {
      const res = await http(api.url, 'GET', p);
      expectFailure(res, 400, 'validation_failed');
      expect(res.body.error.message, p).toMatch(/^Invalid query: /);
      expect(res.body.error.message, p).toMatch(HINT);
      expect(res.body.error.details.issues, p).toEqual([{ path: 'offset', message: expect.stringMatching(ISSUE) }]);
    }
  });

  async function tool(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    return (await client.callTool({ name, arguments: args })) as CallToolResult;
  }
  async function ok(name: string, args: Record<string, unknown>): Promise<Data> {
    const result = await tool(name, args);
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    return result.structuredContent as Data;
  }

  it('agent tools: discover_tools and search_apis carry total and total_exact; past the window is invalid arguments', async () => {
    expect(await ok('discover_tools', { query: 'zephyr', max_results: 3 })).toMatchObject({
      query: 'zephyr',
      ...ABOVE,
    });
    expect(await ok('search_apis', { query: '', limit: 5 })).toMatchObject({ ...ABOVE, limit: 5, offset: 0 });
    const last = await ok('search_apis', { query: 'zephyr', offset: 9950, limit: 50 });
    expect(last).toMatchObject({ ...ABOVE, offset: 9950, limit: 50, sort: 'relevance' });
    expect(last.items).toHaveLength(50);
    const small = await ok('search_apis', { query: '', category: 'tides' });
    expect(small).toMatchObject({ total: 3, total_exact: true, limit: 50, offset: 0 });
    expect(await ok('discover_tools', { query: 'tide tables', category: 'tides' })).toMatchObject({
      total: 3,
      total_exact: true,
    });

    // The default limit (50) counts too: offset 9951 alone is past the window.
    for (const args of [
      { query: 'zephyr', offset: 9951, limit: 50 },
      { query: 'zephyr', offset: 9951 },
    ]) {
      const refused = await tool('search_apis', args);
      const text = refused.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      expect(refused.isError, text).toBe(true);
      expect(text.startsWith('validation_failed: Invalid arguments: ')).toBe(true);
      expect((refused.structuredContent as Data).error).toMatchObject({
        code: 'validation_failed',
        message: expect.stringMatching(HINT),
        details: { issues: [{ path: 'offset', message: expect.stringMatching(ISSUE) }] },
      });
    }
  });

  const page = async (p: string, status = 200, cookie?: string) => {
    const res = await fetch(`${api.url}${p}`, { headers: cookie ? { cookie } : {} });
    const text = await res.text();
    expect(res.status, `${p}: ${text.slice(0, 2000)}`).toBe(status);
    return text;
  };
  /** The rel="next" link's href, unescaped. */
  const nextOf = (html: string) => /<a rel="next" href="([^"]+)">/.exec(html)?.[1]?.replace(/&amp;/g, '&');

  it('storefront and console: "10,000+ APIs", no link past the window, a note at its end, a 400 that says what to do', async () => {
    const cookie = `svc_session=${person.session}`;
    for (const [base, who] of [
      ['/apis', undefined],
      ['/console/catalog', cookie],
    ] as const) {
      const first = await page(`${base}?q=zephyr`, 200, who);
      expect(first, base).toContain('10,000+ APIs · showing 1–25 · sorted by Relevance');
      expect(nextOf(first), base).toBe(`${base}?q=zephyr&offset=25`);
      expect(first).not.toContain('refine your search');

      const before = await page(`${base}?q=zephyr&offset=9950&limit=25`, 200, who);
      expect(before, base).toContain('10,000+ APIs · showing 9,951–9,975');
      expect(nextOf(before), base).toBe(`${base}?q=zephyr&offset=9975&limit=25`);
      const end = await page(`${base}?q=zephyr&offset=9975&limit=25`, 200, who);
      expect(end, base).toContain('10,000+ APIs · showing 9,976–10,000');
      expect(end, base).not.toContain('rel="next"');
      expect(end, base).toContain('Showing the first 10,000 results only: refine your search');
      expect(end, base).toContain(`<a rel="prev" href="${base}?q=zephyr&amp;offset=9950&amp;limit=25">`);
      // A page not aligned on the window's edge: the last link is cut short at it, never past it.
      const odd = await page(`${base}?offset=9940&limit=50`, 200, who);
      expect(nextOf(odd), base).toBe(`${base}?offset=9990&limit=10`);

      const past = await page(`${base}?q=zephyr&offset=9990&limit=25`, 400, who);
      expect(past, base).toContain('Only the first 10,000 results can be paged through');
      expect(past, base).toContain(`<a href="${base}?q=zephyr&amp;limit=25">Back to the first page</a>`);
      expect(past, base).not.toContain('internal_error');

      const small = await page(`${base}?category=tides`, 200, who);
      expect(small, base).toContain('3 APIs · showing 1–3');
      expect(small).not.toContain('rel="next"');
    }
    // A category's page counts the same way.
    expect(await page('/categories/filler')).toContain('10,000+ APIs · showing 1–25');
    expect(await page('/categories/tides')).toContain('3 APIs · showing 1–3');
  });

  it('CLI: "N of 10000+" and the meta unchanged with --json, exact below; past the window is the API refusal', async () => {
    const svc = (args: string[]) =>
      runSvc(args, {
        HOME: home,
        SVC_CONFIG: path.join(home, 'config.json'),
        SVC_BASE_URL: api.url,
        SVC_API_KEY: person.apiKey,
      });
    const above = await svc(['search', 'zephyr', '--limit', '5']);
    expect(above.code, shownRun(above)).toBe(0);
    expect(above.stdout, shownRun(above)).toMatch(/^5 of 10000\+ \(at least 10000; .*refine the query/m);
    const json = await svc(['--json', 'search', '--limit', '5']);
    expect(json.code, shownRun(json)).toBe(0);
    expect(JSON.parse(json.stdout).meta).toMatchObject({ ...ABOVE, limit: 5, offset: 0 });

    const below = await svc(['search', '--category', 'tides']);
    expect(below.code, shownRun(below)).toBe(0);
    expect(below.stdout, shownRun(below)).toMatch(/^3 of 3$/m);
    const belowJson = await svc(['--json', 'search', '--category', 'tides']);
    expect(JSON.parse(belowJson.stdout).meta).toMatchObject({ total: 3, total_exact: true });

    const past = await svc(['search', 'zephyr', '--offset', '9990', '--limit', '50']);
    expect(past.code, shownRun(past)).toBe(1);
    expect(past.stderr, shownRun(past)).toMatch(/^validation_failed: Invalid query: /m);
    expect(past.stderr, shownRun(past)).toMatch(HINT);
  });
});
