// Callable first (issue 22 item 6). After the directory import (the real 1,706 entries), a provider publishes a
// callable weather API: searching "weather forecast" puts it in the first 3, and a callable API that says "weather
// forecast" only in an endpoint summary in the first 10; a callable listing about something else is not lifted.
// Totals are real: a query matching more listings than the old candidate depth (200 per list) reports every match,
// paging through the results yields exactly `total` distinct listings, and REST, both MCP search tools, the console
// and the CLI show the same number, flagged exact (below the 10,000 window: search-totals.test.ts has above it).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createMcpApp, type McpSurface } from '../../../mcp/app.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { http, serve, describe as show } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { runSvc, shownRun } from '../../helpers/svc-cli.js';
import { closeAll } from '../../helpers/fixtures.js';

interface Item {
  slug: string;
  callable: boolean;
  source: string;
}

describe('callable first: ranking and real totals', () => {
  let stack: TestStack;
  let api: RunningHttpServer;
  let mcp: McpSurface;
  let mcpServer: RunningHttpServer;
  let provider: Person;
  let consumer: Person;
  let home: string;

  beforeAll(async () => {
    stack = await createTestStack();
    api = await serve(createApiApp(stack.services).callback());
    mcp = createMcpApp(stack.services);
    mcpServer = await serve(mcp.app.callback());
    provider = await createPerson(stack.services);
    consumer = await createPerson(stack.services);
    home = await mkdtemp(path.join(os.tmpdir(), 'svc-search-callable-'));
    const report = await stack.services.directoryImport.importFile();
    expect(report).toMatchObject({ entries: 1706, inserted: 1706 });
  }, 120_000);
  afterAll(async () => {
    await closeAll(mcp, mcpServer, api, stack);
    if (home) await rm(home, { recursive: true, force: true });
  });

  const get = (p: string) => http(api.url, 'GET', p);
  const search = async (q: string, extra = '') => {
    const res = await get(`/v1/search?q=${encodeURIComponent(q)}${extra}`);
    expect(res.status, show(res)).toBe(200);
    return res;
  };
  const rankOf = (items: Item[], slug: string) => items.findIndex((i) => i.slug === slug) + 1 || null;

  /** Creates a listing as its provider does (POST /v1/provider/apis) and publishes it through the lifecycle's step. */
  async function publish(body: Record<string, unknown>): Promise<void> {
    const created = await http(api.url, 'POST', '/v1/provider/apis', {
      token: provider.session,
      body: { base_url: 'http://127.0.0.1:9/v1', ...body },
    });
    expect(created.status, show(created)).toBe(201);
    // What the publish workflow's activity does: index the listing, then flip it live.
    await stack.services.providerLifecycle.setStatus(created.body.data.api_id as string, 'live');
  }

  it('puts a callable weather forecast API in the first 3 for "weather forecast", one saying it only in an endpoint in the first 10', async () => {
    await publish({
      name: 'Cirrus Weather',
      slug: 'cirrus-weather',
      summary: 'Weather forecasts for any city, updated every hour',
      category: 'weather',
      endpoints: [
        { method: 'GET', path: '/forecast/daily/{city}', summary: 'Daily weather forecast for a city', price_cents: 1 },
        { method: 'GET', path: '/forecast/hourly/{city}', summary: 'Hourly forecast for the next two days' },
      ],
    });
    // Neither its name, its summary nor a category says weather or forecast: only its endpoint does.
    await publish({
      name: 'Stratus Labs',
      slug: 'stratus-labs',
      summary: 'Hyperlocal data for your app, place by place',
      endpoints: [{ method: 'GET', path: '/v2/places/{id}/daily', summary: 'Daily weather forecast for a city' }],
    });
    // Callable too, and about something else: being callable does not lift it.
    await publish({
      name: 'Invoice Lens',
      slug: 'invoice-lens',
      summary: 'Extract totals, dates and line items from invoice images',
      category: 'documents-and-productivity',
      endpoints: [{ method: 'POST', path: '/extract', summary: 'Read an invoice photo and return its fields' }],
    });
    await stack.services.search.sync(true);

    const res = await search('weather forecast', '&limit=50');
    const items = res.body.data as Item[];
    expect(rankOf(items, 'cirrus-weather'), show(res)).not.toBeNull();
    expect(rankOf(items, 'cirrus-weather')!, show(res)).toBeLessThanOrEqual(3);
    expect(rankOf(items, 'stratus-labs'), show(res)).not.toBeNull();
    expect(rankOf(items, 'stratus-labs')!, show(res)).toBeLessThanOrEqual(10);
    expect(rankOf(items, 'invoice-lens'), show(res)).toBeNull();
    expect(items.find((i) => i.slug === 'cirrus-weather')).toMatchObject({ callable: true, source: 'provider' });
    // Directory entries still fill the rest of the first page: the prior doubles a score, it does not sort by source.
    expect(items.slice(0, 10).filter((i) => i.source === 'directory').length, show(res)).toBeGreaterThanOrEqual(7);
    // The endpoint's words find the listing on their own, first among everything, by keyword and by meaning.
    const hourly = await search('hourly forecast for the next two days', '&limit=5');
    expect((hourly.body.data as Item[])[0]?.slug, show(hourly)).toBe('cirrus-weather');
  });

  it('counts every match: total is not capped by a candidate depth, and paging yields exactly total listings', async () => {
    // "api" is in hundreds of listings' text: more than the 200 candidates a list used to contribute.
    const [fts] = await sql<{ n: string }>(
      stack.db.url,
      `select count(*) as n from api_search s join apis a on a.id = s.api_id
        where a.status = 'live' and s.document @@ to_tsquery('english', 'api')`,
    );
    const keywordMatches = Number(fts!.n);
    expect(keywordMatches).toBeGreaterThan(200);

    const first = await search('api', '&limit=500');
    const total = first.body.meta.total as number;
    expect(total, show(first)).toBeGreaterThanOrEqual(keywordMatches);
    const slugs: string[] = [];
    for (let offset = 0; offset < total + 500; offset += 500) {
      const page = await search('api', `&limit=500&offset=${offset}`);
      expect(page.body.meta.total, `offset ${offset}`).toBe(total);
      slugs.push(...(page.body.data as Item[]).map((i) => i.slug));
    }
    expect(slugs.length).toBe(total);
    expect(new Set(slugs).size).toBe(total);
    // Every keyword match is among them.
    const matching = await sql<{ slug: string }>(
      stack.db.url,
      `select a.slug from api_search s join apis a on a.id = s.api_id
        where a.status = 'live' and s.document @@ to_tsquery('english', 'api')`,
    );
    const found = new Set(slugs);
    expect(matching.filter((m) => !found.has(m.slug)).map((m) => m.slug)).toEqual([]);
    // A match by meaning alone is one close to the best: a name in six listings' text does not report hundreds (word
    // vectors put most of the catalog above the cosine floor; "pokemon" counted 510 of 1,706 that way).
    const pokemon = await search('pokemon');
    expect(pokemon.body.meta.total, show(pokemon)).toBeLessThan(50);
    // Six directory entries are about Pokémon, several with equal scores (their order among themselves follows ids,
    // random per import): the name's own API is among them.
    expect((pokemon.body.data as Item[]).slice(0, 6).map((i) => i.slug)).toContain('pokeapi');
    // Filters count the same way: callable listings only.
    const callable = await search('weather forecast', '&callable=true');
    expect(callable.body.meta.total, show(callable)).toBe(
      (callable.body.data as Item[]).filter((i) => i.callable).length,
    );
    expect((callable.body.data as Item[]).map((i) => i.slug)).toEqual(
      expect.arrayContaining(['cirrus-weather', 'stratus-labs']),
    );
  });

  it('shows the same real total on REST, both MCP search tools, the console and the CLI', async () => {
    const rest = await search('api', '&limit=10');
    const total = rest.body.meta.total as number;
    expect(total, show(rest)).toBeGreaterThan(200);
    expect(rest.body.meta.total_exact).toBe(true);

    const client = new Client({ name: 'search-callable-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${mcpServer.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${consumer.apiKey}` } },
      }),
    );
    try {
      await client.listTools();
      const tool = async (name: string, args: Record<string, unknown>) => {
        const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
        expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
        return r.structuredContent as { total: number; total_exact: boolean; items: Item[] };
      };
      const discovered = await tool('discover_tools', { query: 'api' });
      expect(discovered).toMatchObject({ total, total_exact: true });
      const searched = await tool('search_apis', { query: 'api', limit: 10 });
      expect(searched).toMatchObject({ total, total_exact: true });
      // The agent's compact search ranks as the REST one does.
      const weather = await tool('discover_tools', { query: 'weather forecast' });
      expect(weather.items.slice(0, 3).map((i) => i.slug)).toContain('cirrus-weather');
    } finally {
      await client.close();
    }

    const page = await fetch(`${api.url}/console/catalog?q=api`, {
      headers: { cookie: `svc_session=${consumer.session}` },
    });
    const html = await page.text();
    expect(page.status, html.slice(0, 500)).toBe(200);
    expect(html).toContain(`${total.toLocaleString('en-US')} APIs · showing 1–25`);

    const cli = await runSvc(['search', 'api', '--limit', '10'], {
      HOME: home,
      SVC_CONFIG: path.join(home, 'config.json'),
      SVC_BASE_URL: api.url,
      SVC_API_KEY: consumer.apiKey,
    });
    expect(cli.code, shownRun(cli)).toBe(0);
    expect(cli.stdout, shownRun(cli)).toMatch(new RegExp(`^10 of ${total}$`, 'm'));
  });
});
