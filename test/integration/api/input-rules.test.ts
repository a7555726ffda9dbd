// Bad input never hangs or 500s (issue 10): the input rule of core/input.ts on the control plane and the gateway,
// the Postgres backstop for text that reaches the database anyway, and a JSON body sent to the raw avatar upload.
import Router from '@koa/router';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKoaApp } from '../../../api/app.js';
import type { AppState } from '../../../api/context.js';
import { ok } from '../../../core/envelope.js';
import { toAppError } from '../../../core/errors.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, serve, describe as show, type HttpResult } from '../../helpers/http.js';
import type { LiveApi } from '../../helpers/listings.js';
import { expectNoDrift } from '../../helpers/books.js';
import { createPaidApi, startServedStack, type ServedStack } from '../../helpers/fixtures.js';

const RULE = /must not contain NUL characters or unpaired UTF-16 surrogates/;

function expectBadText(res: HttpResult): void {
  expectFailure(res, 400, 'validation_failed');
  expect(res.body.error.message, show(res)).toMatch(RULE);
}

describe('input rules', () => {
  let served: ServedStack;
  let consumer: Person;
  let listing: LiveApi & { provider: Person };

  beforeAll(async () => {
    served = await startServedStack();
    listing = await createPaidApi(served.stack.services, {
      baseUrl: served.upstream.url,
      endpoints: [{ method: 'GET', path: '/items/{id}', priceCents: 0 }],
    });
    consumer = await createPerson(served.stack.services);
  });
  afterAll(async () => {
    await expectNoDrift(served?.gateway, served?.stack.services);
    await served?.close();
  });

  it('refuses NUL in a public path, query or JSON string with 400 (these reached Postgres and answered 500)', async () => {
    expectBadText(await http(served.api.url, 'GET', '/v1/apis/%00'));
    expectBadText(await http(served.api.url, 'GET', '/v1/providers?q=%00'));
    const keysBefore = await sql(served.stack.db.url, 'select count(*)::int as n from api_keys');
    expectBadText(
      await http(served.api.url, 'POST', '/v1/keys', { token: consumer.session, body: { name: 'a\u0000' } }),
    );
    expectBadText(
      await http(served.api.url, 'POST', '/v1/keys', {
        token: consumer.session,
        rawBody: '{"name":"a\\ud800"}', // a lone surrogate would be stored as U+FFFD
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(await sql(served.stack.db.url, 'select count(*)::int as n from api_keys')).toEqual(keysBefore);
    // The same texts, well formed, are fine.
    expectFailure(await http(served.api.url, 'GET', '/v1/apis/%F0%9F%98%80'), 404, 'not_found');
    const created = await http(served.api.url, 'POST', '/v1/keys', {
      token: consumer.session,
      body: { name: 'a\uD83D\uDE00' },
    });
    expect(created.status, show(created)).toBe(201);
    expect(created.body.data.name).toBe('a\uD83D\uDE00');
  });

  it('answers a JSON-typed avatar upload promptly with a 4xx (it used to wait forever)', async () => {
    const send = (rawBody: string) =>
      fetch(`${served.api.url}/v1/me/avatar`, {
        method: 'POST',
        headers: { authorization: `Bearer ${listing.provider.session}`, 'content-type': 'application/json' },
        body: rawBody,
        signal: AbortSignal.timeout(5_000),
      });
    const parsed = await send('{"image":"iVBORw0KGgo="}');
    const body = (await parsed.json()) as { ok: boolean; error: { code: string; message: string } };
    expect([parsed.status, body.ok, body.error.code], JSON.stringify(body)).toEqual([
      415,
      false,
      'unsupported_media_type',
    ]);
    expect(body.error.message).toMatch(/raw bytes/);
    const notJson = await send('\x89PNG\r\n\x1a\n');
    expect(notJson.status, await notJson.text()).toBe(400);
  });

  it('maps Postgres refusing the text (08P01, 22021, 22P05) to 400 validation_failed, never 500', async () => {
    const em = () => served.stack.services.orm.em.fork();
    // Three ways text with NUL fails in Postgres: inlined into the statement by MikroORM (08P01), as a bound text
    // parameter (22021), as an escape in jsonb (22P05).
    const queries: Record<string, () => Promise<unknown>> = {
      inlined: () => em().execute('select ?::text as t', ['a\u0000']),
      bound: () => sql(served.stack.db.url, 'select $1::text as t', ['a\u0000']),
      jsonb: () => em().execute('select ?::jsonb as j', ['"a\\u0000"']),
    };
    const codes: Record<string, unknown> = {};
    for (const [name, run] of Object.entries(queries)) {
      const err = await run().then(
        () => expect.fail(`${name}: the query should fail`),
        (e: unknown) => e,
      );
      codes[name] = (err as { code?: string }).code;
      const appError = toAppError(err); // what the gateway and MCP do with a thrown error
      expect([name, appError.status, appError.code, appError.message]).toEqual([
        name,
        400,
        'validation_failed',
        expect.stringMatching(RULE),
      ]);
    }
    expect(codes).toEqual({ inlined: '08P01', bound: '22021', jsonb: '22P05' });
    // Another statement error is still a masked 500.
    const other = await em()
      .execute('select 1/0')
      .catch((e: unknown) => e);
    expect(toAppError(other).status).toBe(500);

    // The control plane's error envelope: routes whose own text (not the request's) carries the NUL.
    const router = new Router<AppState>();
    router.get('/v1/test/:query', async (ctx) => {
      ctx.body = ok(await queries[ctx.params.query!]!(), ctx.state.requestId);
    });
    const server = await serve(createKoaApp(served.stack.services, [router]).callback());
    try {
      for (const name of Object.keys(queries)) {
        const res = await http(server.url, 'GET', `/v1/test/${name}`);
        expectFailure(res, 400, 'validation_failed');
        expect(res.body.error.message, show(res)).toMatch(RULE);
      }
    } finally {
      await server.close();
    }
  });

  describe('gateway', () => {
    const call = (path: string) => http(served.gw.url, 'GET', path, { token: consumer.apiKey });

    it('serves a well-formed call (the baseline)', async () => {
      const res = await call(`/v1/proxy/${listing.slug}/items/%F0%9F%98%80?q=%C3%A9`);
      expect(res.status, show(res)).toBe(200);
    });

    it('refuses NUL in the slug, the path or the query with 400, before any lookup or upstream call', async () => {
      const seen = served.upstream.seen.length;
      await served.gateway.drain.flush(); // the baseline call is in Postgres before counting
      const events = await sql(served.stack.db.url, 'select count(*)::int as n from usage_events');
      for (const path of [
        '/v1/proxy/%00/x', // the slug reached Postgres: 500
        '/v1/proxy/a%00b/items/1',
        `/v1/proxy/${listing.slug}/items/a%00`, // matched the template and went upstream
        `/v1/proxy/${listing.slug}/items/1?q=%00`,
        `/v1/proxy/${listing.slug}/items/1?ok=1&%00=1`,
      ]) {
        const res = await call(path);
        expectBadText(res);
        expect(res.body.meta.request_id).toMatch(/^req_/);
      }
      expect(served.upstream.seen.length).toBe(seen);
      expect(await sql(served.stack.db.url, 'select count(*)::int as n from usage_events')).toEqual(events);
    });
  });
});
