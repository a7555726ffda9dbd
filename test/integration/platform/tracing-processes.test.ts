// Traces across real processes: the control plane, the Temporal worker and the gateway each run alone
// (scripts/start.ts, one role each) with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a loopback OTLP/HTTP receiver in this
// test, which keeps what they export in memory. A paid call and a publish, each sent with the caller's traceparent,
// come back as one trace each, with spans from every process they crossed, in the right parent order. Without the
// variable nothing is exported and nothing is added upstream (the other tests run that way).
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { REQUEST_ID_ATTRIBUTE } from '../../../core/tracing.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { describe as show, http, serve } from '../../helpers/http.js';
import { sharedRoleEnv, startProcess, type RunningProcess } from '../../helpers/processes.js';
import { seedPaidListing, type SeededListing } from '../../helpers/seed.js';
import { startTemporal } from '../../helpers/temporal.js';
import { draftProbeApi } from '../../helpers/probe-api.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { checkBooks, type CallAnswer } from '../../helpers/books.js';

interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
const valueOf = (v: AnyValue) =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
const attributesOf = (list: { key: string; value: AnyValue }[] = []) =>
  Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));
/** OTLP/JSON ids: hex in the JavaScript exporter; base64 per the protobuf JSON mapping. Normalised to hex. */
const id = (value: string | undefined, hexLength: number) =>
  !value ? undefined : value.length === hexLength ? value : Buffer.from(value, 'base64').toString('hex');

/** A loopback OTLP/HTTP traces receiver (JSON encoding), keeping every span it is sent. */
async function startCollector(): Promise<{ server: RunningHttpServer; spans: ReceivedSpan[] }> {
  const spans: ReceivedSpan[] = [];
  const server = await serve((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: {
          resource: { attributes: { key: string; value: AnyValue }[] };
          scopeSpans: {
            spans: {
              traceId: string;
              spanId: string;
              parentSpanId?: string;
              name: string;
              kind: number;
              attributes?: { key: string; value: AnyValue }[];
            }[];
          }[];
        }[];
      };
      for (const rs of body.resourceSpans) {
        const service = String(attributesOf(rs.resource.attributes)['service.name']);
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            spans.push({
              service,
              traceId: id(s.traceId, 32)!,
              spanId: id(s.spanId, 16)!,
              parentSpanId: id(s.parentSpanId, 16),
              name: s.name,
              kind: s.kind,
              attributes: attributesOf(s.attributes),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return { server, spans };
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

describe('traces across real processes, exported over OTLP', () => {
  let db: TestDatabase;
  let temporal: Awaited<ReturnType<typeof startTemporal>>;
  let upstream: Upstream;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  const procs: RunningProcess[] = [];
  let api: RunningProcess;
  let gateway: RunningProcess;
  let seeded: SeededListing;
  const answers: CallAnswer[] = [];

  beforeAll(async () => {
    [db, temporal, upstream, collector] = await Promise.all([
      createTestDatabase(),
      startTemporal(),
      startUpstream(),
      startCollector(),
    ]);
    seeded = await seedPaidListing(db.url, { baseUrl: upstream.url, priceCents: 3, credit: 100 });
    const env = {
      ...sharedRoleEnv(db.url, temporal.address),
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.server.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    [api, gateway] = await Promise.all([
      startProcess({ roles: ['api'], env }),
      startProcess({ roles: ['gateway'], env }),
    ]);
    procs.push(api, gateway, await startProcess({ roles: ['worker'], env }));
  }, 240_000);

  afterAll(async () => {
    // Every paid answer booked exactly once, nothing else charged, the ledger balanced.
    if (db) expect((await checkBooks(db.url, answers)).ok).toBe(true);
    for (const p of procs) await p.stop().catch(() => undefined);
    await upstream?.close();
    await collector?.server.close();
    await temporal?.env.teardown().catch(() => undefined);
    await db?.drop();
  }, 60_000);

  const trace = (traceId: string) => collector.spans.filter((s) => s.traceId === traceId);

  it('a paid call: the gateway process continues the caller’s trace and hands it to the upstream', async () => {
    const caller = { traceId: hex(16), spanId: hex(8) };
    const res = await http(gateway.urls.gateway, 'GET', `/v1/proxy/${seeded.slug}/paid`, {
      token: seeded.consumer.apiKey,
      headers: { traceparent: `00-${caller.traceId}-${caller.spanId}-01` },
    });
    expect(res.status, show(res)).toBe(200);
    answers.push({ status: res.status, requestId: res.body.meta.request_id, costCents: res.body.meta.cost_cents });
    await expect.poll(() => trace(caller.traceId).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    const spans = trace(caller.traceId);
    const server = spans.find((s) => s.name === 'GET /v1/proxy/:slug/*');
    const client = spans.find((s) => s.name === 'GET upstream');
    expect(server).toMatchObject({ service: 'svc-marketplace-gateway', parentSpanId: caller.spanId });
    expect(server!.attributes[REQUEST_ID_ATTRIBUTE]).toBe(res.body.meta.request_id);
    expect(client).toMatchObject({ service: 'svc-marketplace-gateway', parentSpanId: server!.spanId });
    expect(upstream.seen.at(-1)!.headers.traceparent).toBe(`00-${caller.traceId}-${client!.spanId}-01`);
  });

  it('a publish: spans from the control plane and the worker in one trace, down to the probe of the upstream', async () => {
    const apiId = await draftProbeApi(api.urls.api, seeded.provider.session, {
      name: 'Traced across processes',
      summary: 'Published to see a trace cross processes',
      upstreamUrl: upstream.url,
    });
    const caller = { traceId: hex(16), spanId: hex(8) };
    const published = await http(api.urls.api, 'POST', `/v1/provider/apis/${apiId}/publish`, {
      token: seeded.provider.session,
      body: { accept_terms: true },
      headers: { traceparent: `00-${caller.traceId}-${caller.spanId}-01` },
    });
    expect(published.status, show(published)).toBe(200);
    // Each process exports in its own batches: wait for the last of them.
    const expected = [
      /^POST \/v1\/provider\/apis\/:api_id\/publish$/,
      /^StartWorkflow:/,
      /^RunWorkflow:/,
      /^GET upstream$/,
    ];
    await expect
      .poll(() => expected.every((re) => trace(caller.traceId).some((s) => re.test(s.name))), { timeout: 15_000 })
      .toBe(true);
    const spans = trace(caller.traceId);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const summary = spans.map((s) => `${s.service}: ${s.name}`).join('\n');

    const server = spans.find((s) => s.name === 'POST /v1/provider/apis/:api_id/publish');
    expect(server, summary).toMatchObject({ service: 'svc-marketplace-api', parentSpanId: caller.spanId });
    expect(server!.attributes[REQUEST_ID_ATTRIBUTE]).toBe(published.headers.get('x-request-id'));
    const start = spans.find((s) => s.name.startsWith('StartWorkflow:verifyAndPublish'));
    expect(start, summary).toMatchObject({ service: 'svc-marketplace-api', parentSpanId: server!.spanId });
    const run = spans.find((s) => s.name.startsWith('RunWorkflow:verifyAndPublish'));
    expect(run, summary).toMatchObject({ service: 'svc-marketplace-worker', parentSpanId: start!.spanId });
    const probe = spans.find((s) => s.name === 'GET upstream');
    expect(probe?.service).toBe('svc-marketplace-worker');
    // The probe's chain up to the workflow: client span → RunActivity → StartActivity → … → RunWorkflow.
    const chain: string[] = [];
    for (let s = probe; s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined) chain.push(s.name);
    expect(chain[1], chain.join(' ← ')).toMatch(/^RunActivity:/);
    expect(chain, chain.join(' ← ')).toContain(run!.name);
    expect(chain.at(-1)).toBe(server!.name);
  });
});
