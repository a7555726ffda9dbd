// route() (api/openapi/route.ts): one declaration registers the handler and is its OpenAPI operation. The path's
// `{param}` reaches the handler as `params`, the body and query are parsed from the declared schemas before the
// handler runs (a bad one never reaches it), the status is the lowest declared success unless the handler sets one,
// and `withMeta` adds meta fields to the envelope.
import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AppState } from '../../api/context.js';
import { env, koaPath } from '../../api/openapi/operation.js';
import { mountRoutes, route, withMeta } from '../../api/openapi/route.js';

const calls: unknown[] = [];
const CREATE = route<
  'none',
  z.ZodObject<{ n: z.ZodNumber }>,
  z.ZodObject<{ tag: z.ZodOptional<z.ZodString> }>,
  object,
  '/things/{id}'
>(
  {
    method: 'post',
    path: '/things/{id}',
    operationId: 'createThing',
    summary: 'Create a thing',
    tag: 'Catalog',
    auth: 'none',
    body: z.object({ n: z.number().int() }).strict(),
    query: z.object({ tag: z.string().optional() }),
    success: { 201: env(z.object({ id: z.string(), n: z.number() }), 'Created.'), 202: env(z.object({}), 'Queued.') },
  },
  (ctx, { params, body, query }) => {
    calls.push({ params, body, query });
    if (body.n === 0) ctx.status = 202;
    return withMeta({ id: params.id, n: body.n }, { tag: query.tag ?? null });
  },
);

describe('route()', () => {
  let url = '';
  let server: ReturnType<Koa['listen']>;
  beforeAll(async () => {
    const app = new Koa<AppState>();
    app.use(async (ctx, next) => {
      ctx.state.requestId = 'req_test';
      try {
        await next();
      } catch (err) {
        ctx.status = (err as { status?: number }).status ?? 500;
        ctx.body = { error: (err as Error).message };
      }
    });
    app.use(bodyParser({ enableTypes: ['json'] }));
    app.use(mountRoutes({}, [CREATE]).routes());
    server = app.listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const post = (path: string, body: unknown) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('is its own OpenAPI operation, with the Koa path derived from it', () => {
    expect(CREATE.operation).toMatchObject({ method: 'post', path: '/things/{id}', operationId: 'createThing' });
    expect(CREATE.operation.surface).toBe('control-plane');
    expect(koaPath('/v1/provider/apis/{api_id}/endpoints/{endpoint_id}')).toBe(
      '/v1/provider/apis/:api_id/endpoints/:endpoint_id',
    );
  });

  it('hands the handler its params, parsed body and query; answers the lowest success status in the envelope', async () => {
    const res = await post('/things/t1?tag=x', { n: 3 });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({
      ok: true,
      data: { id: 't1', n: 3 },
      meta: { request_id: 'req_test', tag: 'x' },
    });
    expect(calls.at(-1)).toEqual({ params: { id: 't1' }, body: { n: 3 }, query: { tag: 'x' } });
  });

  it('keeps a status the handler set', async () => {
    expect((await post('/things/t2', { n: 0 })).status).toBe(202);
  });

  it('refuses a body that fails the declared schema before the handler runs', async () => {
    const before = calls.length;
    const res = await post('/things/t3', { n: 'three', extra: true });
    expect(res.status).toBe(400);
    expect(calls.length).toBe(before);
  });
});
