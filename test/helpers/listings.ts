/** Live listings written straight to the database (the publish workflow has its own tests). */
import { Api, Endpoint, Org } from '../../db/entities/index.js';
import type { Services } from '../../platform/services.js';
import { newId } from '../../core/ids.js';

export interface LiveApi {
  apiId: string;
  slug: string;
  endpoints: Record<string, string>;
}

let counter = 0;

export async function createLiveApi(
  services: Pick<Services, 'orm' | 'secrets'>,
  input: {
    providerOrgId: string;
    baseUrl: string;
    endpoints: { method: string; path: string; priceCents: number }[];
    credential?: { secret: string; injection: 'bearer' | 'header' | 'query' | 'basic'; name?: string };
    slug?: string;
  },
): Promise<LiveApi> {
  const em = services.orm.em.fork();
  const slug = input.slug ?? `api-${Date.now().toString(36)}-${++counter}`;
  const api = em.create(Api, {
    id: newId('api'),
    org: em.getReference(Org, input.providerOrgId),
    name: slug,
    slug,
    summary: 'test listing',
    baseUrl: input.baseUrl,
    status: 'live',
    publishedAt: new Date(),
    ...(input.credential
      ? {
          credentialCiphertext: services.secrets.seal(input.credential.secret),
          injection: input.credential.injection,
          injectionName: input.credential.name ?? null,
          credentialUpdatedAt: new Date(),
        }
      : {}),
  });
  const endpoints: Record<string, string> = {};
  input.endpoints.forEach((e, position) => {
    const id = newId('endpoint');
    endpoints[`${e.method} ${e.path}`] = id;
    em.create(Endpoint, { id, api, method: e.method as 'GET', path: e.path, priceCents: e.priceCents, position });
  });
  await em.flush();
  return { apiId: api.id, slug, endpoints };
}
