// OpenTelemetry traces (platform/tracing.ts), recorded by an in-memory exporter in this process: the control
// plane, the gateway and a Temporal worker run here on real Postgres, Redis and the Temporal dev server, with a
// recording loopback upstream. A paid call continues its caller's trace through the gateway to the upstream; a publish
// goes from the control plane's request through Temporal (client interceptor → workflow → activities, carried in
// Temporal's headers across the server) to the upstream the verification probes. Server spans carry the request id.
// tracing-processes.test.ts checks the same across real processes exporting over OTLP.
import { randomBytes } from 'node:crypto';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { bundleWorkflows, startWorker, type RunningWorker } from '../../../activities/worker.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { REQUEST_ID_ATTRIBUTE } from '../../../core/tracing.js';
import { startTracing, type Tracing } from '../../../platform/tracing.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { describe as show, http, serve } from '../../helpers/http.js';
import { createLiveApi } from '../../helpers/listings.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startTemporal } from '../../helpers/temporal.js';
import { draftProbeApi } from '../../helpers/probe-api.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { createConsumer, closeAll } from '../../helpers/fixtures.js';

const exporter = new InMemorySpanExporter();
const hex = (bytes: number) => randomBytes(bytes).toString('hex');
/** A caller's W3C trace context. */
const callerContext = () => ({ traceId: hex(16), spanId: hex(8) });
const traceparent = (c: { traceId: string; spanId: string }) => `00-${c.traceId}-${c.spanId}-01`;

const spansOf = (traceId: string) => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
const parentOf = (span: ReadableSpan) => span.parentSpanId;

describe('traces across the control plane, Temporal, the gateway and the upstream', () => {
  let tracing: Tracing;
  let temporal: Awaited<ReturnType<typeof startTemporal>>;
  let stack: TestStack;
  let worker: RunningWorker;
  let gateway: GatewayHandler;
  let gatewayServer: RunningHttpServer;
  let apiServer: RunningHttpServer;
  let upstream: Upstream;
  let provider: Person;
  let consumer: Person;
  let slug: string;

  beforeAll(async () => {
    // Before the services: their Temporal client takes the tracing interceptor only when tracing is on.
    tracing = startTracing({ serviceName: 'svc-test', processor: new SimpleSpanProcessor(exporter) });
    [temporal, upstream] = await Promise.all([startTemporal(), startUpstream()]);
    stack = await createTestStack({ temporalAddress: temporal.address });
    worker = await startWorker(stack.services, {
      workflowBundle: await bundleWorkflows({ tracing: true }),
      tracing,
      reloadTrigger: false,
    });
    gateway = createGatewayHandler(stack.services);
    gatewayServer = await serve(gateway);
    apiServer = await serve(createApiApp(stack.services).callback());
    provider = await createPerson(stack.services);
    consumer = await createConsumer(stack.services, 100);
    const live = await createLiveApi(stack.services, {
      providerOrgId: provider.orgId,
      baseUrl: `${upstream.url}/base`,
      credential: { secret: 'traced-secret', injection: 'query', name: 'api_key' },
      endpoints: [{ method: 'GET', path: '/paid', priceCents: 2 }],
    });
    slug = live.slug;
  }, 120_000);

  afterAll(async () => {
    // The books after the traced calls: every cached balance equals its ledger, every call's debit its earning.
    if (gateway && stack) {
      await gateway.drain.flush();
      await stack.services.earnings.foldAll();
      const report = await stack.services.reconciliation.run();
      expect(report.ok, JSON.stringify(report)).toBe(true);
    }
    await closeAll(apiServer, gatewayServer, gateway);
    await worker?.shutdown();
    await stack?.close();
    await temporal?.env.teardown().catch(() => undefined);
    await upstream?.close();
    await tracing?.shutdown();
  }, 60_000);

  it('a paid call: caller → gateway server span → upstream client span, the traceparent sent upstream', async () => {
    const caller = callerContext();
    const res = await http(gatewayServer.url, 'GET', `/v1/proxy/${slug}/paid`, {
      token: consumer.apiKey,
      headers: { traceparent: traceparent(caller) },
    });
    expect(res.status, show(res)).toBe(200);
    const requestId = res.headers.get('x-request-id');
    expect(requestId).toBe(res.body.meta.request_id);

    const spans = spansOf(caller.traceId);
    const server = spans.find((s) => s.kind === SpanKind.SERVER);
    expect(server, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
    expect(server!.name).toBe('GET /v1/proxy/:slug/*');
    expect(parentOf(server!)).toBe(caller.spanId);
    expect(server!.attributes[REQUEST_ID_ATTRIBUTE]).toBe(requestId);
    expect(server!.attributes['http.response.status_code']).toBe(200);

    const client = spans.find((s) => s.kind === SpanKind.CLIENT && s.name === 'GET upstream');
    expect(client).toBeDefined();
    expect(parentOf(client!)).toBe(server!.spanContext().spanId);
    expect(client!.attributes).toMatchObject({
      'svc.api_slug': slug,
      [REQUEST_ID_ATTRIBUTE]: requestId,
      'http.response.status_code': 200,
    });
    // The URL is never recorded: its query holds the provider's credential here.
    expect(JSON.stringify(client!.attributes)).not.toContain('traced-secret');

    const seen = upstream.seen.at(-1)!;
    expect(seen.url).toContain('api_key=traced-secret');
    expect(seen.headers.traceparent).toBe(`00-${caller.traceId}-${client!.spanContext().spanId}-01`);
  });

  it('a refused call is traced too, and a call without a traceparent starts its own trace', async () => {
    const caller = callerContext();
    const refused = await http(gatewayServer.url, 'GET', `/v1/proxy/${slug}/nowhere`, {
      token: consumer.apiKey,
      headers: { traceparent: traceparent(caller) },
    });
    expect(refused.status).toBe(404);
    const [server] = spansOf(caller.traceId);
    expect(server?.attributes['http.response.status_code']).toBe(404);
    expect(server?.attributes[REQUEST_ID_ATTRIBUTE]).toBe(refused.headers.get('x-request-id'));

    const before = upstream.seen.length;
    const fresh = await http(gatewayServer.url, 'GET', `/v1/proxy/${slug}/paid`, { token: consumer.apiKey });
    expect(fresh.status).toBe(200);
    const own = exporter
      .getFinishedSpans()
      .find((s) => s.kind === SpanKind.SERVER && s.attributes[REQUEST_ID_ATTRIBUTE] === fresh.body.meta.request_id);
    expect(own).toBeDefined();
    expect(parentOf(own!)).toBeUndefined();
    expect(upstream.seen[before]!.headers.traceparent).toContain(own!.spanContext().traceId);
  });

  it('a publish: control-plane request → workflow start → workflow → activities → the verification probe', async () => {
    const caller = callerContext();
    const headers = { traceparent: traceparent(caller) };
    const apiId = await draftProbeApi(apiServer.url, provider.session, {
      name: 'Traced probe',
      summary: 'Published to see its trace',
      upstreamUrl: upstream.url,
    });
    const seenBefore = upstream.seen.length;
    const published = await http(apiServer.url, 'POST', `/v1/provider/apis/${apiId}/publish`, {
      token: provider.session,
      body: { accept_terms: true },
      headers,
    });
    expect(published.status, show(published)).toBe(200);

    // Workflow spans arrive through the worker's sink once their workflow task completes.
    await expect
      .poll(() => spansOf(caller.traceId).some((s) => s.name.startsWith('RunActivity')), { timeout: 10_000 })
      .toBe(true);
    const spans = spansOf(caller.traceId);
    const names = spans.map((s) => s.name);
    const server = spans.find((s) => s.kind === SpanKind.SERVER);
    expect(server?.name).toBe('POST /v1/provider/apis/:api_id/publish');
    expect(parentOf(server!)).toBe(caller.spanId);
    expect(server!.attributes[REQUEST_ID_ATTRIBUTE]).toBe(published.headers.get('x-request-id'));

    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const start = spans.find((s) => /^StartWorkflow:verifyAndPublish/.test(s.name));
    expect(start, names.join(', ')).toBeDefined();
    expect(parentOf(start!)).toBe(server!.spanContext().spanId);
    const run = spans.find((s) => /^RunWorkflow:verifyAndPublish/.test(s.name));
    expect(run, names.join(', ')).toBeDefined();
    expect(parentOf(run!)).toBe(start!.spanContext().spanId);
    const activities = spans.filter((s) => s.name.startsWith('RunActivity:'));
    expect(activities.length).toBeGreaterThan(0);

    // The probe of the upstream: a client span under an activity, its traceparent received by the upstream.
    const probe = spans.find((s) => s.kind === SpanKind.CLIENT && s.name === 'GET upstream');
    expect(probe, names.join(', ')).toBeDefined();
    expect(byId.get(parentOf(probe!)!)?.name).toMatch(/^RunActivity:/);
    const probed = upstream.seen.slice(seenBefore).find((r) => r.url.startsWith('/probe'));
    expect(probed?.headers.traceparent).toBe(`00-${caller.traceId}-${probe!.spanContext().spanId}-01`);
  });

  it('the control plane: a span per request named by its route, carrying the request id', async () => {
    const caller = callerContext();
    const res = await http(apiServer.url, 'GET', '/v1/keys', {
      token: consumer.apiKey,
      headers: { traceparent: traceparent(caller) },
    });
    expect(res.status).toBe(200);
    const [span] = spansOf(caller.traceId);
    expect(span?.name).toBe('GET /v1/keys');
    expect(span?.attributes).toMatchObject({
      'http.route': '/v1/keys',
      'http.response.status_code': 200,
      [REQUEST_ID_ATTRIBUTE]: res.headers.get('x-request-id'),
    });
  });
});
