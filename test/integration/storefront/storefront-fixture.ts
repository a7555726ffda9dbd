/**
 * The storefront tests' catalog (issue 31): a provider with a public profile and three live listings (a priced one
 * with a path parameter, a query parameter and a JSON body; an all-free one; a dear one), a draft, an unpublished one,
 * a second provider's listing without endpoints (its profile is the one creating an API makes), and one directory
 * entry; created the way providers do (POST
 * /v1/provider/apis) and published through the lifecycle's step (indexed for search, then live).
 */
import { expect } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { http, serve, describe as show } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

export interface StorefrontFixture {
  stack: TestStack;
  api: RunningHttpServer;
  provider: Person;
  /** A second provider, with the profile creating its API gave it (`nameless-narwhal`). */
  secondProvider: Person;
  ids: Record<string, string>;
  directorySlug: string;
  close(): Promise<void>;
}

export const FJORD = {
  name: 'Fjord Forecasts',
  slug: 'fjord-forecasts',
  summary: 'Rain or shine for every fjord, hour by hour',
  description: 'Forecasts from the coastal stations of western Norway, updated every hour.',
  category: 'weather',
  tags: ['forecast', 'norway'],
  endpoints: [
    {
      method: 'GET',
      path: '/forecast/{city}',
      summary: 'The forecast for a city',
      price_cents: 5,
      input_schema: {
        type: 'object',
        properties: {
          path: {
            type: 'object',
            properties: { city: { type: 'string', example: 'bergen' } },
            required: ['city'],
          },
          query: {
            type: 'object',
            properties: { days: { type: 'integer', minimum: 1, example: 3 } },
            required: ['days'],
          },
        },
        required: ['path', 'query'],
      },
      output_schema: { type: 'object', properties: { city: { type: 'string' }, forecast: { type: 'string' } } },
    },
    {
      method: 'POST',
      path: '/alerts',
      summary: 'Subscribe to storm alerts',
      price_cents: 12,
      input_schema: {
        type: 'object',
        properties: {
          body: {
            type: 'object',
            properties: {
              email: { type: 'string', format: 'email' },
              fjord: { type: 'string', example: "Sogn's fjord" },
            },
            required: ['email'],
          },
        },
      },
    },
    { method: 'GET', path: '/health', summary: 'Is it up', price_cents: 0 },
  ],
};

export const FREE_FACTS = {
  name: 'Free Fjord Facts',
  slug: 'free-fjord-facts',
  summary: 'Facts about fjords, free of charge',
  category: 'open-data',
  endpoints: [{ method: 'GET', path: '/facts', price_cents: 0 }],
};

export const PRICEY = {
  name: 'Pricey Fjord Pixels',
  slug: 'pricey-fjord-pixels',
  summary: 'Fjord photographs rendered at any size',
  category: 'photography',
  endpoints: [
    { method: 'GET', path: '/render', price_cents: 50 },
    { method: 'GET', path: '/thumb', price_cents: 20 },
  ],
};

const DRAFT = { name: 'Draft Drizzle', slug: 'draft-drizzle', summary: 'Never published drizzle data' };
const UNPUBLISHED = { name: 'Gone Gale', slug: 'gone-gale', summary: 'Gale warnings, no longer listed' };
const NO_PROFILE = {
  name: 'Nameless Narwhal',
  slug: 'nameless-narwhal',
  summary: 'Narwhal sightings, no endpoints yet',
};

export async function startStorefront(
  env: Record<string, string> = {},
  temporalAddress?: string,
): Promise<StorefrontFixture> {
  const stack = await createTestStack({ env: { PUBLIC_RATE_LIMIT_PER_MIN: '100000', ...env }, temporalAddress });
  const api = await serve(createApiApp(stack.services).callback());
  const provider = await createPerson(stack.services);
  const secondProvider = await createPerson(stack.services);
  const profile = await http(api.url, 'PATCH', '/v1/me/profile', {
    token: provider.session,
    body: {
      slug: 'fjord-labs',
      display_name: 'Fjord Labs',
      bio: 'Weather and water APIs from Bergen.',
      website: 'https://fjord.example',
    },
  });
  expect(profile.status, show(profile)).toBe(200);
  const ids: Record<string, string> = {};
  const create = async (owner: Person, body: Record<string, unknown>) => {
    const res = await http(api.url, 'POST', '/v1/provider/apis', {
      token: owner.session,
      body: { base_url: 'http://127.0.0.1:9/v1', ...body },
    });
    expect(res.status, show(res)).toBe(201);
    ids[body.slug as string] = res.body.data.api_id as string;
    return res.body.data.api_id as string;
  };
  const live = (id: string) => stack.services.providerLifecycle.setStatus(id, 'live');
  for (const listing of [FJORD, FREE_FACTS, PRICEY]) await live(await create(provider, listing));
  await create(provider, DRAFT);
  const gone = await create(provider, UNPUBLISHED);
  await live(gone);
  await stack.services.providerLifecycle.setStatus(gone, 'draft');
  await live(await create(secondProvider, NO_PROFILE));
  await stack.services.directoryImport.importEntries([
    {
      name: 'Open Fjord Tides',
      url: 'https://tides.example.org/docs',
      description: 'Tide tables for Norwegian fjords',
      category: 'Open Data',
    },
  ]);
  await stack.services.search.sync(true);
  return {
    stack,
    api,
    provider,
    secondProvider,
    ids,
    directorySlug: 'open-fjord-tides',
    close: async () => {
      await api.close();
      await stack.close();
    },
  };
}
