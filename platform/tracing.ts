/**
 * OpenTelemetry traces (docs/operations.md, "Traces"). Off by default: nothing is registered, no span object is made
 * and no header is added unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, or a
 * test hands in its own span processor. When on, one tracer provider per process exports over OTLP/HTTP (JSON) in
 * batches; the W3C `traceparent` header carries a trace into the gateway, from the gateway to the upstream, and from
 * the control plane's activities to the upstreams they probe; Temporal's interceptors carry it from the control plane
 * through workflows into activities (activities/worker.ts, core/temporal/temporal.service.ts).
 *
 * Every server span carries the request id (`svc.request_id`), the same id as the `X-Request-Id` answer header, the
 * envelope's `meta.request_id` and the structured logs' `request_id`, so a trace, a log line and a support ticket meet.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { TRACER_NAME, useTracer } from '../core/tracing.js';

export interface TracingOptions {
  /** `service.name` of this process's spans, e.g. `svc-marketplace-gateway`. */
  serviceName: string;
  /** OTLP/HTTP traces endpoint (`…/v1/traces`). */
  endpoint?: string;
  /** Instead of the OTLP exporter (tests: a SimpleSpanProcessor over an InMemorySpanExporter). */
  processor?: SpanProcessor;
  serviceVersion?: string;
}

export interface Tracing {
  readonly enabled: boolean;
  /** The processor spans end in (the worker hands it to Temporal's workflow span sink). */
  readonly processor?: SpanProcessor;
  readonly resource?: Resource;
  /** Export what is buffered and stop. */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { enabled: false, shutdown: () => Promise.resolve() };
let current: Tracing = OFF;

/** The OTLP traces URL from the standard variables, or undefined (tracing off). */
export function otlpTracesEndpoint(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (/^(1|true)$/i.test(env.OTEL_SDK_DISABLED ?? '')) return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}

/**
 * Register this process's tracer provider (once; a second call returns the first setup). Without an endpoint or a
 * processor, tracing stays off and this returns a setup that does nothing.
 */
export function startTracing(options: TracingOptions): Tracing {
  if (current.enabled) return current;
  if (!options.endpoint && !options.processor) return OFF;
  const resource = new Resource({
    'service.name': options.serviceName,
    ...(options.serviceVersion ? { 'service.version': options.serviceVersion } : {}),
    'process.pid': process.pid,
  });
  // The OTLP exporter reads OTEL_EXPORTER_OTLP_HEADERS / _TIMEOUT / _COMPRESSION itself; the sampler honours
  // OTEL_TRACES_SAMPLER(_ARG) (default: parent-based, always on).
  const processor = options.processor ?? new BatchSpanProcessor(new OTLPTraceExporter({ url: options.endpoint }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  // W3C trace context and baggage propagators, AsyncLocalStorage context manager.
  provider.register();
  useTracer(trace.getTracer(TRACER_NAME, options.serviceVersion));
  current = {
    enabled: true,
    processor,
    resource,
    async shutdown() {
      useTracer(undefined);
      current = OFF;
      await provider.shutdown();
      // Unregister the globals, so a later startTracing in this process (tests) can register again.
      trace.disable();
      context.disable();
      propagation.disable();
      // Again, now that the globals are gone: the tracer left behind is the API's no-op one.
      useTracer(undefined);
    },
  };
  return current;
}
