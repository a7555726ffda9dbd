/**
 * Calling APIs: call_api and run_probe go through the gateway's one enforcement path (its request handler, in
 * process: gateway/in-process.ts), so scope, terms, idempotency, rate limit, spend governance, metering and refunds
 * are the HTTP gateway's to the letter; quote_call is GET /v1/apis/{slug}/quote for the calling key.
 *
 * Requests: `endpoint` is the path after `/v1/proxy/{slug}` and may carry a query string; characters outside visible
 * ASCII are percent-encoded as an HTTP client would. `input` is the JSON body for POST, PUT, PATCH, DELETE and
 * OPTIONS, and for GET and HEAD (no body) a flat object of query parameters appended to the endpoint's query.
 * Results: `{ status, body, billing, request_id }` (body = the gateway's `data`, billing = its `meta`); a refusal or an
 * upstream failure is an isError result with the gateway's code and details (plus `next_step` for a person's step).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { AdmissionView, QuoteView } from '../../core/catalog/listings/listings.schemas.js';
import { QuoteQuery } from '../../core/catalog/listings/quote.js';
import { InternalError, ValidationError } from '../../core/errors.js';
import type { Services } from '../../platform/services.js';
import { ENDPOINT_METHODS } from '../../db/entities/index.js';
import type { ToolContext, ToolRuntime } from '../tool-context.js';
import { SlugArg } from './catalog.tools.js';
import { BillingMetaOut } from './consumer-schemas.js';
import { gatewayCaller, keyPrincipal, scopedKey } from './keys.tools.js';
import { nextStep } from './next-steps.js';
import { checkArgs, parseArgs, runTool, toolError, toolFailure, toolOk } from './tool-result.js';
import { dataOrError } from './tool-schemas.js';
import { moneyMeta } from '../tool-listing.js';
import { withPersonSteps } from '../elicitation.js';
import { callSteps } from '../person-steps.js';

type Method = (typeof ENDPOINT_METHODS)[number];
const QUERY_METHODS: ReadonlySet<Method> = new Set(['GET', 'HEAD']);

const EndpointPath = z
  .string()
  .min(1)
  .max(2000)
  .regex(/^\//, 'must start with /')
  .refine((e) => !e.includes('#'), 'must not contain # (a fragment is never sent)');
const EndpointArg = EndpointPath.describe(
  'Path after the API\'s base, params filled in, optional query: "/forecast/paris?days=3".',
);

const InputArg = z.unknown().optional().describe('JSON body; for GET/HEAD a flat object of query parameters.');

const CallOut = z.object({
  status: z.number().int(),
  body: z.unknown().describe('Upstream JSON, else text; null on a replay.'),
  billing: BillingMetaOut,
  request_id: z.string(),
});

/** The quote's data, its admission described for a tool (a tool's caller always has a credential). */
const QuoteOut = QuoteView.extend({
  admission: AdmissionView.extend({ details: z.record(z.string(), z.unknown()).optional() })
    .optional()
    .describe('What the gateway would decide now.'),
});

/** Spends credits at the endpoint's price and reaches a third-party API; a DELETE/PUT may change data there. */
const CALL = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true } as const;

export interface CallArgs {
  slug: string;
  endpoint: string;
  method: Method;
  input?: unknown;
  idempotency_key?: string;
}

type Scalar = string | number | boolean | null;

export function queryOf(input: unknown): URLSearchParams {
  const params = new URLSearchParams();
  if (input === undefined || input === null) return params;
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw new ValidationError('For GET, `input` must be an object of query parameters (or omitted).', {
      details: { field: 'input' },
    });
  }
  const isScalar = (v: unknown): v is Scalar => v === null || ['string', 'number', 'boolean'].includes(typeof v);
  for (const [name, value] of Object.entries(input as Record<string, unknown>)) {
    const values = Array.isArray(value) ? (value as unknown[]) : [value];
    for (const v of values) {
      if (!isScalar(v)) {
        throw new ValidationError(`Query parameter "${name}" must be a string, number, boolean or a list of them.`, {
          details: { field: `input.${name}` },
        });
      }
      params.append(name, v === null ? '' : String(v));
    }
  }
  return params;
}

/** The request line's target and body for a call (see the file header for the `input` rule). */
export function gatewayRequest(args: CallArgs): { target: string; headers: Record<string, string>; body?: Buffer } {
  // As an HTTP client would: anything that may not appear raw on a request line is percent-encoded. (The input rule
  // already refused lone surrogates, which have no encoding.)
  const endpoint = args.endpoint.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
  let target = `/v1/proxy/${encodeURIComponent(args.slug)}${endpoint}`;
  const headers: Record<string, string> = {};
  if (args.idempotency_key !== undefined) headers['idempotency-key'] = args.idempotency_key;
  if (QUERY_METHODS.has(args.method)) {
    const query = queryOf(args.input).toString();
    const separator = !target.includes('?') ? '?' : /[?&]$/.test(target) ? '' : '&';
    if (query) target += `${separator}${query}`;
    return { target, headers };
  }
  if (args.input === undefined) return { target, headers };
  headers['content-type'] = 'application/json';
  return { target, headers, body: Buffer.from(JSON.stringify(args.input), 'utf8') };
}

interface Envelope {
  ok: boolean;
  data?: unknown;
  error?: { code: string; message: string; details?: Record<string, unknown> };
  meta: { request_id: string } & Record<string, unknown>;
}

export async function callThroughGateway(
  services: Services,
  runtime: ToolRuntime,
  ctx: ToolContext,
  args: CallArgs,
): Promise<CallToolResult> {
  try {
    checkArgs(args);
    const principal = keyPrincipal(ctx);
    const caller = await gatewayCaller(services, principal);
    const request = gatewayRequest(args);
    const res = await runtime.gateway.call(caller, { method: args.method, ...request });
    let envelope: Envelope;
    try {
      envelope = JSON.parse(res.body) as Envelope;
    } catch (err) {
      throw new InternalError('The gateway answered something other than its envelope.', { cause: err });
    }
    if (envelope.ok) {
      return toolOk({
        status: res.status,
        body: envelope.data ?? null,
        billing: envelope.meta,
        request_id: envelope.meta.request_id,
      });
    }
    const error = envelope.error ?? { code: 'internal_error', message: 'The gateway refused the call.' };
    const step = nextStep(error.code, error.details, caller.principal, services.config.urls.publicBase);
    if (res.status >= 500) ctx.log.warn({ request_id: envelope.meta.request_id, code: error.code }, 'call_api failed');
    return toolFailure({
      code: error.code,
      message: error.message,
      details: {
        ...error.details,
        status: res.status,
        request_id: envelope.meta.request_id,
        ...(step ? { next_step: step } : {}),
      },
    });
  } catch (err) {
    return toolError(err, ctx.log);
  }
}

/** The tool definitions (built once per process: a 2026-07-28 request builds its server per request). */
const DEFS = {
  call_api: {
    title: 'Call an API',
    description:
      "Call an API endpoint through the metered gateway. MOVES MONEY: the endpoint's price in cents (0 = free; " +
      'failed upstream calls refunded); quote_call first.',
    inputSchema: z
      .object({
        slug: SlugArg,
        endpoint: EndpointArg,
        method: z.enum(ENDPOINT_METHODS).default('GET'),
        input: InputArg,
        idempotency_key: z.string().min(1).max(200).optional(),
      })
      .strict(),
    outputSchema: dataOrError(CallOut),
    annotations: CALL,
    _meta: moneyMeta("the endpoint's price per successful call; quote_call first"),
  },
  run_probe: {
    title: 'Probe an endpoint',
    description:
      'call_api with GET, without idempotency_key. MOVES MONEY: billed at the price; quote_call first or probe ' +
      'free endpoints.',
    // call_api's arguments, described there (once in the listing).
    inputSchema: z.object({ slug: SlugArg, endpoint: EndpointPath, input: z.unknown().optional() }).strict(),
    outputSchema: dataOrError(CallOut),
    // A GET changes nothing upstream, but it is billed, so it is neither read-only nor idempotent here.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    _meta: moneyMeta("the endpoint's price per successful call; quote_call first"),
  },
  quote_call: {
    title: 'Quote a call',
    description:
      'Whether the gateway would admit a call for your key now (`admission`), and its price; reserves nothing.',
    inputSchema: z
      .object({
        slug: SlugArg,
        method: z.enum(ENDPOINT_METHODS).default('GET'),
        path: QuoteQuery.shape.path.describe("As call_api's `endpoint`."),
      })
      .strict(),
    outputSchema: dataOrError(QuoteOut),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
};

export function registerCallTools(server: McpServer, services: Services, ctx: ToolContext, runtime: ToolRuntime): void {
  // A refusal naming a person's step (approval, terms) becomes a URL elicitation when the client can show one.
  const steps = callSteps(services, ctx);
  server.registerTool(
    'call_api',
    DEFS.call_api,
    withPersonSteps(server, 'call_api', services, ctx, steps, (args) =>
      callThroughGateway(services, runtime, ctx, args),
    ),
  );

  server.registerTool(
    'run_probe',
    DEFS.run_probe,
    withPersonSteps(server, 'run_probe', services, ctx, steps, (args) =>
      callThroughGateway(services, runtime, ctx, { ...args, method: 'GET' }),
    ),
  );

  server.registerTool('quote_call', DEFS.quote_call, (args) =>
    runTool(ctx.log, async () => {
      checkArgs(args);
      const principal = scopedKey(ctx, 'catalog:read');
      const caller = await gatewayCaller(services, principal);
      const query = parseArgs(QuoteQuery, { method: args.method, path: args.path });
      const quote = await services.listings.quoteAs(args.slug, query, { type: 'api_key', ...caller });
      if (quote.admission && !quote.admission.allowed && quote.admission.error_code) {
        const step = nextStep(
          quote.admission.error_code,
          quote.admission.details,
          principal,
          services.config.urls.publicBase,
        );
        if (step) quote.admission.details = { ...quote.admission.details, next_step: step };
      }
      return { ...quote };
    }),
  );
}
