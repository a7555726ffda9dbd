/**
 * Spans, for the code that serves and calls (docs/operations.md, "Traces"): the request and upstream spans and the
 * `traceparent` they carry, through the OpenTelemetry API only. Nothing here registers an SDK: platform/tracing.ts
 * does, per process, and hands its tracer in with `useTracer`; until then (tracing off) `tracingOn()` is false and
 * callers skip tracing work on hot paths.
 */
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';

/** The attribute naming our request id on server spans. */
export const REQUEST_ID_ATTRIBUTE = 'svc.request_id';

export const TRACER_NAME = 'svc-marketplace';

let enabled = false;
let tracer: Tracer = trace.getTracer(TRACER_NAME);

/** Whether this process records spans (checked before any tracing work on hot paths). */
export function tracingOn(): boolean {
  return enabled;
}

/** Called by platform/tracing.ts: a tracer when it registers the process's provider, undefined when it shuts down. */
export function useTracer(next: Tracer | undefined): void {
  enabled = next !== undefined;
  tracer = next ?? trace.getTracer(TRACER_NAME);
}

/** The context a request arrived with (its `traceparent`), or the root context. */
function incomingContext(headers: IncomingHttpHeaders): Context {
  return propagation.extract(ROOT_CONTEXT, headers);
}

/**
 * A server span for an incoming request, child of the caller's `traceparent` when there is one, else of the active
 * span (the agent-tool server's span when it calls the gateway in process), else a new trace.
 */
export function startServerSpan(name: string, headers: IncomingHttpHeaders, attributes: Attributes): Span {
  const parent = headers.traceparent ? incomingContext(headers) : context.active();
  return tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
}

/** A client span under the active context; its context is written into `headers` (W3C `traceparent`). */
export function startClientSpan(name: string, headers: Record<string, string>, attributes: Attributes): Span {
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, context.active());
  propagation.inject(trace.setSpan(context.active(), span), headers);
  return span;
}

/** Run `fn` with `span` as the active span. */
export function withSpan<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** End a span with an HTTP status: 5xx (server) or any status ≥ 400 from an upstream (client) marks an error. */
export function endHttpSpan(span: Span, status: number, kind: 'server' | 'client', err?: unknown): void {
  span.setAttribute('http.response.status_code', status);
  if (err !== undefined || (kind === 'server' ? status >= 500 : status >= 400 || status === 0)) {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      ...(err instanceof Error ? { message: err.message } : {}),
    });
  }
  span.end();
}

/** The active trace id (for log lines), or undefined. */
export function activeTraceId(): string | undefined {
  if (!enabled) return undefined;
  const span = trace.getSpan(context.active());
  return span?.spanContext().traceId;
}
