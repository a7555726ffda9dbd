/**
 * Where the tools' results name a step only a person can take, and how the books show it done (the URL elicitation
 * around them is mcp/elicitation.ts):
 *
 * - call_api / run_probe: a refusal carrying `approval_url`: the owner approves spend for an approval-mode key
 *   (`payment_required`, reason `approval_required`: api/pages/approve.page.ts) or accepts required terms
 *   (`terms_acceptance_required`: api/pages/terms.page.ts). Done when the quote for the same request admits it (free,
 *   nothing reserved); the call then runs again, under an idempotency key of the flow when the agent gave none.
 * - create_checkout: the checkout page. Done when the checkout's payment is booked (the Stripe webhook or the return
 *   page); the result is the checkout's, with `completed: true`.
 * - provider_connect_onboard: Stripe's onboarding page. Done when the onboarding workflow has recorded the account
 *   enabled (Stripe's `account.updated`); the result is the onboarding's, with `status: "enabled"`.
 * - billing_setup: the card-setup page. Done when the org's saved card is another than the one it had when the call
 *   began (`setup_intent.succeeded` records it); the result is the setup's, with `completed: true`.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { QuoteQuery } from '../core/catalog/listings/quote.js';
import type { Services } from '../platform/services.js';
import type { PersonStep, StepSource } from './elicitation.js';
import type { ToolContext } from './tool-context.js';
import { gatewayCaller, keyPrincipal } from './tools/keys.tools.js';
import { toolOk } from './tools/tool-result.js';

interface RefusalBody {
  code?: string;
  details?: { approval_url?: unknown; reason?: unknown };
}

/** The arguments of call_api (run_probe's are the same with method GET). */
interface CallArgs {
  slug: string;
  endpoint: string;
  idempotency_key?: string;
  /** run_probe's arguments have none: GET. */
  method?: string;
}

function structured(result: CallToolResult): Record<string, unknown> {
  return result.structuredContent ?? {};
}

/** The person's step a gateway refusal names, if any. */
export function refusalStep(result: CallToolResult): PersonStep | undefined {
  if (!result.isError) return undefined;
  const error = structured(result).error as RefusalBody | undefined;
  const url = error?.details?.approval_url;
  if (typeof url !== 'string') return undefined;
  if (error?.code === 'terms_acceptance_required') {
    return { kind: 'terms', url, message: "Read and accept the API provider's terms so the call can go through." };
  }
  if (error?.code === 'payment_required' && error.details?.reason === 'approval_required') {
    return {
      kind: 'spend_approval',
      url,
      message: 'Approve spend for this agent key so the paid call can go through.',
    };
  }
  return undefined;
}

/** call_api and run_probe: done when the quote for the same request is admitted (or refused for another reason). */
export function callSteps(services: Services, ctx: ToolContext): StepSource<CallArgs> {
  return {
    find: (result) => refusalStep(result),
    again: <T extends CallArgs>(args: T, flowId: string): T =>
      args.idempotency_key ? args : { ...args, idempotency_key: `person-step:${flowId}` },
    async done(step, args) {
      const caller = await gatewayCaller(services, keyPrincipal(ctx));
      const path = args.endpoint.split('?')[0] ?? args.endpoint;
      const query = QuoteQuery.parse({ method: args.method ?? 'GET', path });
      const quote = await services.listings.quoteAs(args.slug, query, { type: 'api_key', ...caller });
      const admission = quote.admission;
      if (!admission || admission.allowed) return true;
      const again = refusalStep({
        isError: true,
        content: [],
        structuredContent: { error: { code: admission.error_code, details: admission.details } },
      });
      return again?.kind !== step.kind;
    },
  };
}

/** create_checkout: done when the person has paid the checkout. */
export function checkoutSteps(services: Services, ctx: ToolContext): StepSource<unknown> {
  return {
    find(result) {
      const data = structured(result);
      if (result.isError || typeof data.checkout_url !== 'string' || typeof data.checkout_session_id !== 'string') {
        return undefined;
      }
      const message = `Pay for the credits (${String(data.credit_cents)} cents) on the checkout page.`;
      return { kind: 'checkout', url: data.checkout_url, message, ref: data.checkout_session_id };
    },
    done: (step) => services.billing.checkoutPaid(ctx.principal.orgId, step.ref ?? ''),
    complete: (first) => toolOk({ ...structured(first), completed: true }),
  };
}

/**
 * billing_setup: done when the org's saved card changed since the call began. `run` wraps the setup call so the card
 * saved before it is known (kept with the result, then sealed in the step's `ref` for a 2026-07-28 retry).
 */
export function cardSetupSteps(services: Services, ctx: ToolContext) {
  const before = new WeakMap<CallToolResult, string>();
  const savedCard = async () => (await services.billing.savedCardOf(ctx.principal.orgId)) ?? '';
  const source: StepSource<unknown> = {
    find(result) {
      const data = structured(result);
      if (result.isError || typeof data.url !== 'string' || typeof data.setup_intent_id !== 'string') return undefined;
      const message = 'Add a card on this page; calls beyond your credits are then billed to it.';
      return { kind: 'card_setup', url: data.url, message, ref: before.get(result) ?? '' };
    },
    done: async (step) => (await savedCard()) !== (step.ref ?? ''),
    complete: (first) => toolOk({ ...structured(first), completed: true }),
  };
  const run = (setup: () => Promise<CallToolResult>) => async (): Promise<CallToolResult> => {
    const prior = await savedCard();
    const result = await setup();
    before.set(result, prior);
    return result;
  };
  return { source, run };
}

/** provider_connect_onboard: done when the org's Connect account is enabled (the onboarding workflow records it). */
export function connectSteps(services: Services, ctx: ToolContext): StepSource<unknown> {
  return {
    find(result) {
      const data = structured(result);
      if (result.isError || typeof data.url !== 'string' || data.status === 'enabled') return undefined;
      const message = 'Verify your identity with Stripe on this page so your earnings can be paid out.';
      return { kind: 'connect_onboarding', url: data.url, message };
    },
    done: async () => (await services.connect.statusOf(ctx.principal.orgId)) === 'enabled',
    complete: (first) => toolOk({ ...structured(first), status: 'enabled' }),
  };
}
