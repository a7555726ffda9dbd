/**
 * Key and usage tools: set_budget (PATCH /v1/keys/{id}, `keys:write`, under the key-governance rules of
 * core/keys/key-governance.ts: a key may tighten its own caps, never loosen them), get_usage (GET /v1/usage,
 * `usage:read`) and provision_access, the agent's "may I call this?" in one answer (its key, balance and missing
 * scopes, and for an API: terms and the gateway's admission at its cheapest and dearest endpoint, from the quote).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { SCOPES, type Principal, type Scope, requireScope } from '../../core/auth/scopes.js';
import { AdmissionView, type QuoteView } from '../../core/catalog/listings/listings.schemas.js';
import { QuoteQuery } from '../../core/catalog/listings/quote.js';
import { UnauthenticatedError } from '../../core/errors.js';
import { PatchKeyBody } from '../../core/keys/keys.schemas.js';
import type { Services } from '../../platform/services.js';
import { UsageQuery } from '../../core/usage/usage.service.js';
import { UsageEvent, UsageMeta } from '../../core/usage/usage.schemas.js';
import type { ToolContext } from '../tool-context.js';
import { BalanceOut, KeySummaryOut } from './consumer-schemas.js';
import { checkArgs, parseArgs, runTool } from './tool-result.js';
import { SlugArg } from './catalog.tools.js';
import { nextStep } from './next-steps.js';
import { dataOrError } from './tool-schemas.js';

type KeyPrincipal = Extract<Principal, { type: 'api_key' }>;

/** The agent-tool server authenticates keys only (an OAuth token acts as its key), so this holds for every caller. */
export function keyPrincipal(ctx: ToolContext): KeyPrincipal {
  if (ctx.principal.type !== 'api_key') throw new UnauthenticatedError('The agent-tool server accepts API keys.');
  return ctx.principal;
}

/** The calling key, which must hold `scope` (403 `forbidden` otherwise). */
export function scopedKey(ctx: ToolContext, scope: Scope): KeyPrincipal {
  const principal = keyPrincipal(ctx);
  requireScope(principal, scope);
  return principal;
}

/**
 * The calling key as the gateway knows it (caps, ancestors; read fresh, since the session may hold an OAuth token
 * rather than the key), acting with the session's scopes: an OAuth token's are those it was granted, never more than
 * the key holds (core/oauth/access-tokens.ts), so a token granted only `catalog:read` cannot call through the gateway.
 */
export async function gatewayCaller(
  services: Services,
  principal: KeyPrincipal,
): Promise<Awaited<ReturnType<Services['keys']['authenticateKeyId']>>> {
  const caller = await services.keys.authenticateKeyId(principal.keyId);
  const scopes = caller.principal.scopes.filter((s) => principal.scopes.includes(s));
  return { ...caller, principal: { ...caller.principal, scopes } as typeof caller.principal };
}

const CapArg = (what?: string) =>
  what ? PatchKeyBody.shape.budget_cents.describe(what) : PatchKeyBody.shape.budget_cents;

/** The tool definitions (built once per process: a 2026-07-28 request builds its server per request). */
const DEFS = {
  set_budget: {
    title: 'Set key caps',
    description:
      "Tighten a key's spend caps in cents (default: your key); raising or removing one (null) needs a person.",
    inputSchema: z
      .object({
        key_id: z.string().trim().min(1).max(40).optional(),
        budget_cents: CapArg('Lifetime, child keys included.'),
        per_call_max_cents: CapArg(),
        daily_cap_cents: CapArg('Per UTC day, child keys included.'),
      })
      .strict(),
    outputSchema: dataOrError(KeySummaryOut),
    // Overwrites caps (not additive); the same arguments twice leave the same caps.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  get_usage: {
    title: 'Usage',
    description:
      "Your org's metered calls, newest first, with totals (calls, cost, billable cents); default: last 30 days.",
    inputSchema: z
      .object({
        from: UsageQuery.shape.from.describe('UTC date or ISO 8601 time.'),
        to: UsageQuery.shape.to.describe('Exclusive; a date includes its day. Default: now.'),
        limit: z.number().int().min(1).max(200).optional(),
        offset: z.number().int().min(0).max(1_000_000).optional(),
      })
      .strict(),
    // GET /v1/usage's data and meta in one object (usage.service.ts `list`).
    outputSchema: dataOrError(
      UsageMeta.pick({ pagination: true, range: true, summary: true }).extend({ items: z.array(UsageEvent) }),
    ),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  provision_access: {
    title: 'Check access',
    description:
      "What you lack to call APIs: your key (scopes, caps, spend), balance, missing scopes; with `slug`, that API's " +
      'terms and admission.',
    inputSchema: z.object({ slug: SlugArg.optional() }).strict(),
    outputSchema: dataOrError(
      z.object({
        key: KeySummaryOut,
        balance: BalanceOut,
        missing_scopes: z.array(z.string()),
        api: z
          .object({
            slug: z.string(),
            terms: z.looseObject({
              required: z.boolean(),
              all_required_accepted: z.boolean().nullable(),
              approval_url: z.string(),
            }),
            endpoints_checked: z.array(
              z.looseObject({
                method: z.string(),
                path: z.string(),
                price_cents_effective: z.number().int(),
                admission: AdmissionView,
              }),
            ),
            ready: z.boolean().describe('The most expensive endpoint (so every endpoint) would be admitted now.'),
            next_steps: z.array(z.string()),
          })
          .optional(),
      }),
    ),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
};

export function registerKeyTools(server: McpServer, services: Services, ctx: ToolContext): void {
  server.registerTool('set_budget', DEFS.set_budget, (args) =>
    runTool(ctx.log, async () => {
      checkArgs(args);
      const principal = scopedKey(ctx, 'keys:write');
      const { key_id, ...caps } = args;
      return {
        ...(await services.keyAdmin.patch(principal, key_id ?? principal.keyId, parseArgs(PatchKeyBody, caps))),
      };
    }),
  );

  server.registerTool('get_usage', DEFS.get_usage, (args) =>
    runTool(ctx.log, async () => {
      checkArgs(args);
      requireScope(ctx.principal, 'usage:read');
      return { ...(await services.usage.list(ctx.principal, parseArgs(UsageQuery, args))) };
    }),
  );

  server.registerTool('provision_access', DEFS.provision_access, (args) =>
    runTool(ctx.log, async () => {
      checkArgs(args);
      const principal = keyPrincipal(ctx);
      const [key, balance] = await Promise.all([
        services.keyAdmin.get(principal, principal.keyId),
        services.billing.balance(principal),
      ]);
      const missing_scopes = SCOPES.filter((s) => !principal.scopes.includes(s));
      if (!args.slug) return { key, balance, missing_scopes };
      return { key, balance, missing_scopes, api: await apiAccess(services, principal, args.slug) };
    }),
  );
}

/** Terms and admission for one API: the quote (same rules as the gateway) at its cheapest and dearest endpoint. */
async function apiAccess(services: Services, principal: KeyPrincipal, slug: string) {
  const [terms, endpoints, caller] = await Promise.all([
    services.listings.terms(slug, principal),
    services.listings.endpoints(slug),
    gatewayCaller(services, principal),
  ]);
  const byPrice = [...endpoints].sort((a, b) => a.price_cents_effective - b.price_cents_effective);
  const picks = [...new Set([byPrice[0], byPrice[byPrice.length - 1]])].filter((e) => e !== undefined);
  const quotes: QuoteView[] = [];
  for (const e of picks) {
    const query = parseArgs(QuoteQuery, { method: e.method, path: e.path });
    quotes.push(await services.listings.quoteAs(slug, query, { type: 'api_key', ...caller }));
  }
  const checked = quotes.map((q) => ({
    method: q.endpoint.method,
    path: q.endpoint.path,
    price_cents_effective: q.price_cents_effective,
    admission: q.admission!,
  }));
  const dearest = checked[checked.length - 1];
  const next_steps: string[] = [];
  if (checked.length === 0)
    next_steps.push('This API has no callable endpoints (a directory listing is not callable until claimed).');
  for (const c of checked) {
    if (c.admission.allowed) continue;
    const step = nextStep(
      c.admission.error_code ?? '',
      c.admission.details,
      principal,
      services.config.urls.publicBase,
    );
    next_steps.push(
      `${c.method} ${c.path} (${c.price_cents_effective} cents) would be refused: ${c.admission.error_code}: ` +
        `${c.admission.message}${step ? ` ${step}` : ''}`,
    );
  }
  return {
    slug: terms.api,
    terms: {
      required: terms.documents.some((d) => d.acceptance_mode === 'required'),
      all_required_accepted: terms.all_required_accepted,
      approval_url: terms.approval_url,
    },
    endpoints_checked: checked,
    ready: dearest?.admission.allowed ?? false,
    next_steps: [...new Set(next_steps)],
  };
}
