// Fuzzing from the contract (issue 15, item 3): every JSON operation of the OpenAPI document (control plane and
// gateway), driven with generated bad input derived from its own request schema — each documented property given a
// value of the wrong type, required properties missing, unknown properties, huge strings, NUL and lone surrogates,
// deep JSON, the wrong content type, an oversize body, duplicate and malformed query parameters — and with bad
// bearer formats. Every answer must arrive within 5 s, be below 500 and, when it refuses, be the envelope with a
// known error code; no balance or ledger row may change. Seeded, bounded (FUZZ_SEED, FUZZ_VARIANTS), so a failure
// replays exactly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { buildOpenApiDocument } from '../../../api/openapi/document.js';
import { ERROR_KINDS } from '../../../core/errors.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { serve } from '../../helpers/http.js';
import { documentValidator } from '../../helpers/openapi-validator.js';
import { createLiveApi } from '../../helpers/listings.js';
import { seededRandom } from '../../helpers/random.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startStripeMock, type StripeMock } from '../../helpers/stripe-mock.js';
import { startTemporal } from '../../helpers/temporal.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { expectNoDrift } from '../../helpers/books.js';
import { closeAll } from '../../helpers/fixtures.js';

type Json = Record<string, any>;
const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
const VARIANTS = Number(process.env.FUZZ_VARIANTS ?? 14);
const TIMEOUT_MS = 5_000;

interface Attempt {
  label: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

const deep = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

/** A value of another JSON type than the schema's. */
function wrongType(schema: Json | undefined, pick: (n: number) => number): unknown {
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type;
  const choices: unknown[] =
    type === 'string'
      ? [12345, true, [], {}, null]
      : type === 'integer' || type === 'number'
        ? ['12', 1.5, '1e309', true, [], 2 ** 64]
        : type === 'boolean'
          ? ['yes', 1, []]
          : type === 'array'
            ? [{}, 'x', 1]
            : ['x', 1, [], null];
  return choices[pick(choices.length)];
}

function resolve(doc: Json, schema: Json | undefined): Json | undefined {
  if (!schema) return undefined;
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').pop()!;
    return resolve(doc, doc.components?.schemas?.[name]);
  }
  return schema;
}

/** Bad bodies for one operation's JSON request schema. */
function badBodies(schema: Json | undefined, pick: (n: number) => number): { label: string; body: string }[] {
  const props = (schema?.properties ?? {}) as Record<string, Json>;
  const names = Object.keys(props);
  const out: { label: string; body: string }[] = [
    { label: 'array body', body: '[]' },
    { label: 'string body', body: '"x"' },
    { label: 'number body', body: '1e309' },
    { label: 'unknown field', body: JSON.stringify({ __fuzz__: 'x'.repeat(10) }) },
    { label: 'deep JSON', body: deep(5_000) },
    { label: 'broken JSON', body: '{"a":' },
    { label: 'empty object (required fields missing)', body: '{}' },
  ];
  for (const name of names.slice(0, 6)) {
    out.push({ label: `${name}: wrong type`, body: JSON.stringify({ [name]: wrongType(props[name], pick) }) });
    out.push({ label: `${name}: huge string`, body: JSON.stringify({ [name]: 'é'.repeat(200_000) }) });
    out.push({ label: `${name}: NUL`, body: `{"${name}":"a\\u0000b"}` });
    out.push({ label: `${name}: lone surrogate`, body: `{"${name}":"a\\ud800b"}` });
  }
  return out;
}

function concrete(path: string, pick: (n: number) => number): string {
  const odd = ['key_00000000000000000000000000', '..', '%00', 'x'.repeat(300), 'api_zzz', '%ZZ', 'é'];
  return path.replace(/\{[^}]+\}/g, () => encodeURI(odd[pick(odd.length)]!).replace(/%25ZZ/, '%ZZ'));
}

describe('fuzzing every JSON operation from the OpenAPI document', () => {
  let stack: TestStack;
  let api: RunningHttpServer;
  let gatewayServer: RunningHttpServer;
  let gateway: GatewayHandler;
  let upstream: Upstream;
  let person: Person;
  let slug: string;
  let books: () => Promise<{ credit: number; ledger: number; batched: number; untied: number }>;
  let stripe: StripeMock;
  let temporal: Awaited<ReturnType<typeof startTemporal>>;

  beforeAll(async () => {
    stripe = await startStripeMock(); // payments configured: a refusal is about the input, not a missing Stripe
    temporal = await startTemporal(); // routes that start workflows reach a real server
    stack = await createTestStack({
      temporalAddress: temporal.address,
      env: { STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_API_BASE: stripe.url },
    });
    upstream = await startUpstream();
    person = await createPerson(stack.services);
    const provider = await createPerson(stack.services);
    slug = (
      await createLiveApi(stack.services, {
        providerOrgId: provider.orgId,
        baseUrl: upstream.url,
        endpoints: [{ method: 'POST', path: '/items', priceCents: 2 }],
      })
    ).slug;
    await stack.services.ledger.post({ orgId: person.orgId, kind: 'grant', amountCents: 500 });
    api = await serve(createApiApp(stack.services).callback());
    gateway = createGatewayHandler(stack.services);
    gatewayServer = await serve(gateway);
    books = async () => {
      await gateway.drain.flush();
      // Paid calls are booked per usage batch (one debit per batch): count the calls the batches hold, the ledger rows
      // other than batch debits, and the batches without exactly one debit.
      const rows = await sql<{ credit: string; ledger: string; batched: string; untied: string }>(
        stack.db.url,
        `select (select coalesce(sum(credit_cents), 0) from orgs) as credit,
                (select count(*) from ledger_entries where kind <> 'usage') as ledger,
                (select coalesce(sum(calls), 0) from usage_batches) as batched,
                (select count(*) from usage_batches b
                  where (select count(*) from ledger_entries l
                          where l.idempotency_key = 'usage_batch:' || b.id and l.amount_cents = -b.charged_cents) <> 1)
                  as untied`,
      );
      const r = rows[0]!;
      return {
        credit: Number(r.credit),
        ledger: Number(r.ledger),
        batched: Number(r.batched),
        untied: Number(r.untied),
      };
    };
  });

  afterAll(async () => {
    await expectNoDrift(gateway, stack?.services);
    await closeAll(gatewayServer, gateway, api, upstream, stack);
    await stripe?.stop();
    await temporal?.env.teardown().catch(() => undefined);
  });

  it('answers every bad input below 500, in time, in the envelope, and moves no money', async () => {
    const doc = buildOpenApiDocument();
    const random = seededRandom(SEED);
    const before = await books();
    const attempts: Attempt[] = [];
    for (const [path, item] of Object.entries<Json>(doc.paths as Json)) {
      for (const [method, op] of Object.entries<Json>(item)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        if (op.tags?.[0] === 'Pages' || op.tags?.[0] === 'OAuth') continue; // HTML and protocol shapes: own tests
        if (path === '/v1/webhooks/stripe') continue; // signature-checked raw body: its own tests
        if (path === '/health') continue; // reports component status: its own tests
        const base = op.servers?.[0]?.url?.includes('gateway') || path.startsWith('/v1/proxy') ? 'gateway' : 'api';
        const target = base === 'gateway' ? gatewayServer.url : api.url;
        const p = path.startsWith('/v1/proxy') ? `/v1/proxy/${slug}/items` : concrete(path, random);
        const url = `${target}${p}`;
        const auth = { authorization: `Bearer ${person.apiKey}` };
        const schema = resolve(doc, op.requestBody?.content?.['application/json']?.schema);
        const variants: Attempt[] = [];
        if (op.requestBody) {
          for (const b of badBodies(schema, random)) {
            variants.push({
              label: b.label,
              method,
              url,
              headers: { ...auth, 'content-type': 'application/json' },
              body: b.body,
            });
          }
          variants.push({
            label: 'wrong content type',
            method,
            url,
            headers: { ...auth, 'content-type': 'application/xml' },
            body: '<a/>',
          });
          variants.push({
            label: 'oversize body',
            method,
            url,
            headers: { ...auth, 'content-type': 'application/json' },
            body: JSON.stringify({ a: 'x'.repeat(11 * 1024 * 1024) }),
          });
        }
        for (const q of ['limit=1&limit=2', 'limit=abc', 'limit=-1', 'offset=1e309', 'q=%00', 'from=2026-13-45']) {
          variants.push({ label: `query ${q}`, method, url: `${url}?${q}`, headers: auth });
        }
        for (const bearer of [
          'Bearer',
          'Bearer  a b',
          'Basic eDp5',
          `Bearer ${'k'.repeat(5_000)}`,
          'Bearer svc_live_é',
        ]) {
          variants.push({
            label: `authorization "${bearer.slice(0, 20)}"`,
            method,
            url,
            headers: { authorization: bearer },
          });
        }
        // Bounded and seeded: a sample of this operation's variants.
        const chosen = [...variants].sort(() => random(3) - 1).slice(0, VARIANTS);
        attempts.push(...chosen.map((a) => ({ ...a, label: `${method.toUpperCase()} ${path}: ${a.label}` })));
      }
    }
    expect(attempts.length).toBeGreaterThan(500);

    const problems: string[] = [];
    const paid: number[] = [];
    const validator = documentValidator();
    const known = new Set<string>(Object.values(ERROR_KINDS).map((k) => k.code));
    for (let i = 0; i < attempts.length; i += 8) {
      await Promise.all(
        attempts.slice(i, i + 8).map(async (a) => {
          let status: number;
          let text: string;
          try {
            const res = await fetch(a.url, {
              method: a.method.toUpperCase(),
              headers: a.headers,
              body: a.body,
              signal: AbortSignal.timeout(TIMEOUT_MS),
            });
            status = res.status;
            text = await res.text();
            // The answer is one the document lists for this operation, and its body matches the schema.
            let parsed: unknown = text;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              // not JSON: the validator says whether that is documented
            }
            const u = new URL(a.url);
            try {
              validator.validate({
                method: a.method,
                path: u.pathname + u.search,
                status,
                contentType: res.headers.get('content-type'),
                body: parsed,
              });
            } catch (err) {
              problems.push(`${a.label}: ${(err as Error).message.slice(0, 300)}`);
            }
            // A gateway call whose (opaque) body and query the upstream took is a real, paid call.
            if (status === 200 && a.url.startsWith(gatewayServer.url)) {
              const cost = (JSON.parse(text) as Json).meta?.cost_cents;
              if (typeof cost === 'number' && cost > 0) paid.push(cost);
            }
          } catch (err) {
            problems.push(`${a.label}: no answer within ${TIMEOUT_MS} ms (${(err as Error).message})`);
            return;
          }
          if (status >= 500) problems.push(`${a.label}: ${status} ${text.slice(0, 200)}`);
          if (status >= 400) {
            let body: Json | undefined;
            try {
              body = JSON.parse(text) as Json;
            } catch {
              // checked below
            }
            if (body?.ok !== false || !known.has(body?.error?.code)) {
              problems.push(
                `${a.label}: ${status} outside the envelope or with an unknown code: ${text.slice(0, 200)}`,
              );
            }
          }
        }),
      );
    }
    expect(problems.slice(0, 30), `${problems.length} problems over ${attempts.length} requests`).toEqual([]);
    // Money moved only for the gateway calls that were answered as paid: each in one usage batch, whose one debit is
    // its calls' cost.
    expect(await books()).toEqual({
      credit: before.credit - paid.reduce((a, b) => a + b, 0),
      ledger: before.ledger,
      batched: before.batched + paid.length,
      untied: 0,
    });
  }, 300_000);
});
