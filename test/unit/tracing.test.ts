// The tracing module's switches and helpers (platform/tracing.ts): off unless an OTLP endpoint or a processor is
// given; when on, server spans continue a caller's traceparent, client spans write theirs into the outgoing headers,
// and HTTP statuses map to span status as documented (5xx for servers, any failure for clients).
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { endHttpSpan, startClientSpan, startServerSpan, tracingOn, withSpan } from '../../core/tracing.js';
import { otlpTracesEndpoint, startTracing, type Tracing } from '../../platform/tracing.js';

describe('tracing', () => {
  let tracing: Tracing | undefined;
  afterEach(async () => {
    await tracing?.shutdown();
    tracing = undefined;
  });

  it('reads the endpoint from the standard OTLP variables, and is off without one', () => {
    expect(otlpTracesEndpoint({})).toBeUndefined();
    expect(otlpTracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toBe(
      'http://collector:4318/v1/traces',
    );
    expect(
      otlpTracesEndpoint({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://other:4318/custom',
      }),
    ).toBe('http://other:4318/custom');
    expect(
      otlpTracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBeUndefined();
    tracing = startTracing({ serviceName: 'svc-unit' });
    expect(tracing.enabled).toBe(false);
    expect(tracingOn()).toBe(false);
  });

  it('continues a caller’s traceparent, passes its own on, and marks failures', () => {
    const exporter = new InMemorySpanExporter();
    tracing = startTracing({ serviceName: 'svc-unit', processor: new SimpleSpanProcessor(exporter) });
    expect(tracingOn()).toBe(true);
    const traceId = 'a'.repeat(32);
    const server = startServerSpan('GET x', { traceparent: `00-${traceId}-${'b'.repeat(16)}-01` }, { k: 'v' });
    const headers: Record<string, string> = {};
    const client = withSpan(server, () => startClientSpan('GET upstream', headers, {}));
    expect(headers.traceparent).toBe(`00-${traceId}-${client.spanContext().spanId}-01`);
    endHttpSpan(client, 404, 'client');
    endHttpSpan(server, 404, 'server');
    const [c, s] = exporter.getFinishedSpans();
    expect(c!.kind).toBe(SpanKind.CLIENT);
    expect(c!.parentSpanId).toBe(server.spanContext().spanId);
    expect(c!.status.code).toBe(SpanStatusCode.ERROR);
    expect(s!.parentSpanId).toBe('b'.repeat(16));
    expect(s!.status.code).toBe(SpanStatusCode.UNSET);
    expect(s!.attributes).toMatchObject({ k: 'v', 'http.response.status_code': 404 });

    const failing = startServerSpan('GET y', {}, {});
    endHttpSpan(failing, 503, 'server');
    expect(exporter.getFinishedSpans().at(-1)!.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('stops recording after shutdown', async () => {
    tracing = startTracing({ serviceName: 'svc-unit', processor: new SimpleSpanProcessor(new InMemorySpanExporter()) });
    await tracing.shutdown();
    expect(tracingOn()).toBe(false);
    // …and a later start records again (the globals were released).
    const exporter = new InMemorySpanExporter();
    tracing = startTracing({ serviceName: 'svc-unit', processor: new SimpleSpanProcessor(exporter) });
    endHttpSpan(startServerSpan('GET z', {}, {}), 200, 'server');
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['GET z']);
  });
});
