/**
 * The steps only a person can take, asked for as URL-mode elicitations (issue 25, item 2; docs/agent-tools.md,
 * "Steps a person takes"). A tool whose result asks a person to open a page (an approval or terms URL in a refusal,
 * a checkout URL) is wrapped by `withPersonSteps`; when the client declared `elicitation: { url: {} }`:
 *
 * - 2025-11-25 (a v1 session): the tool sends `elicitation/create` in URL mode (with an `elicitationId`) on the
 *   call's own stream; on `accept` it waits (up to `MCP_PERSON_WAIT_MS`) for the books to show the person finished,
 *   sends `notifications/elicitation/complete` and answers the original call with its completed result.
 * - 2026-07-28 (a v2 request): the tool answers `input_required` with the URL elicitation and a `requestState`
 *   sealed by SECRETS_KEY (core/secrets: AES-256-GCM, so the client can neither read nor change it) and bound to the
 *   key, the tool and its arguments (opened by the v2 server's `requestState.verify`: an altered state, or one another
 *   key echoes, is the SDK's `-32602`). The client's retry carries the person's answer: on `accept` the tool waits a
 *   round (at most ROUND_MS, or a quarter of the wait) for the person, and answers with the completed result, or with `input_required`
 *   carrying only a new `requestState` (the client retries again) until the wait is over.
 *
 * Declined, cancelled, unanswered, or not finished in time: the result is today's (the URL and next steps), the same
 * a client without the capability gets. Completing reruns nothing that could spend twice: call_api reruns the
 * same request, and only once the quote admits it, under the agent's idempotency_key or, without one, a key made of
 * the flow's id (so a retried last round replays instead of spending again).
 */
import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ElicitResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { sha256Hex } from '../core/crypto.js';
import type { Services } from '../platform/services.js';
import type { ToolContext } from './tool-context.js';

/** What a person is asked to do, found in a tool's result. */
export interface PersonStep {
  kind: 'spend_approval' | 'terms' | 'checkout' | 'card_setup' | 'connect_onboarding';
  url: string;
  message: string;
  /** What the step is about (a checkout session id; the card saved before a card setup), when the URL does not say. */
  ref?: string;
}

/** How one tool's results name a person's step, and how to tell when the person has finished it. */
export interface StepSource<A> {
  find(result: CallToolResult, args: A): PersonStep | undefined;
  /** Whether the books show the step done (reads only; never waits). */
  done(step: PersonStep, args: A): Promise<boolean>;
  /** The call's result once the step is done; without it, the call runs again. */
  complete?(first: CallToolResult, step: PersonStep): CallToolResult;
  /**
   * The arguments the call runs again with, given the flow's id: call_api adds an idempotency key when the agent
   * gave none, so a 2026-07-28 client that retries the last round again cannot spend twice.
   */
  again?<T extends A>(args: T, flowId: string): T;
}

/** The key of the embedded elicitation in a 2026-07-28 `inputRequests`. */
export const PERSON_INPUT = 'person';
/**
 * The longest a 2026-07-28 round waits for the person before answering with a fresh `requestState` (and at most a
 * quarter of MCP_PERSON_WAIT_MS), so no single request is held for long.
 */
export const ROUND_MS = 15_000;
const POLL_MS = 250;

type Run<A> = (args: A) => Promise<CallToolResult>;

interface Flow<A> {
  tool: string;
  services: Services;
  ctx: ToolContext;
  source: StepSource<A>;
  run: Run<A>;
}

/** What a 2026-07-28 round carries from the first answer to the retries (sealed; see the file header). */
interface SealedState {
  tool: string;
  key: string;
  args: string;
  step: PersonStep;
  first: CallToolResult;
  /** The person accepted to open the page (later rounds only wait). */
  accepted: boolean;
  /** Epoch ms after which the tool stops waiting and answers `first`. */
  until: number;
  /** This flow's id (what a rerun's idempotency key is made of). */
  id: string;
}

/**
 * A tool callback that asks for the person's step by URL elicitation when the client can show one (see the file
 * header), for tools registered on either era's server (`server` is the v1 McpServer, or the v2 facade).
 */
export function withPersonSteps<A>(
  server: McpServer,
  tool: string,
  services: Services,
  ctx: ToolContext,
  source: StepSource<NoInfer<A>>,
  run: Run<A>,
): (args: A, extra: unknown) => Promise<CallToolResult> {
  const flow: Flow<A> = { tool, services, ctx, source, run };
  return async (args, extra) => {
    if (isModern(extra)) return (await modernCall(flow, args, extra)) as CallToolResult;
    const first = await run(args);
    const step = source.find(first, args);
    const legacy = (server as Partial<McpServer>).server;
    if (!step || !legacy?.getClientCapabilities()?.elicitation?.url) return first;
    return legacyCall(flow, args, first, step, extra as LegacyExtra);
  };
}

function isModern(extra: unknown): extra is ServerContext {
  return !!extra && typeof extra === 'object' && 'mcpReq' in extra;
}

/** The v1 handler extra's request and notification senders (bound to the tool call's stream). */
interface LegacyExtra {
  signal: AbortSignal;
  sendRequest: (
    request: { method: 'elicitation/create'; params: Record<string, unknown> },
    schema: typeof ElicitResultSchema,
    options?: { timeout?: number; signal?: AbortSignal },
  ) => Promise<{ action: string }>;
  sendNotification: (notification: {
    method: 'notifications/elicitation/complete';
    params: { elicitationId: string };
  }) => Promise<void>;
}

/** 2025-11-25: `elicitation/create` (URL mode), then wait for the person, then `notifications/elicitation/complete`. */
async function legacyCall<A>(
  flow: Flow<A>,
  args: A,
  first: CallToolResult,
  step: PersonStep,
  extra: LegacyExtra,
): Promise<CallToolResult> {
  const waitMs = flow.services.config.mcp.personWaitMs;
  const elicitationId = randomUUID();
  let action: string;
  try {
    const params = { mode: 'url', elicitationId, url: step.url, message: step.message };
    const answer = await extra.sendRequest({ method: 'elicitation/create', params }, ElicitResultSchema, {
      timeout: waitMs,
      signal: extra.signal,
    });
    action = answer.action;
  } catch (err) {
    flow.ctx.log.info({ err, tool: flow.tool }, 'url elicitation unanswered; the result names the step');
    return first;
  }
  if (action !== 'accept') return first;
  const completed = await untilDone(flow, args, first, step, {
    ms: waitMs,
    flowId: elicitationId,
    signal: extra.signal,
  });
  if (!completed) return first;
  await extra
    .sendNotification({ method: 'notifications/elicitation/complete', params: { elicitationId } })
    .catch((err: unknown) => flow.ctx.log.debug({ err }, 'elicitation complete notification not sent'));
  return completed;
}

/**
 * Wait up to `waitMs` for the person: the completed result once the books show the step done and the completed
 * call no longer asks for the same step (call_api: a gateway that has not heard of an approval yet refuses again);
 * undefined when the wait ends first.
 */
async function untilDone<A>(
  flow: Flow<A>,
  args: A,
  first: CallToolResult,
  step: PersonStep,
  wait: { ms: number; flowId: string; signal?: AbortSignal },
): Promise<CallToolResult | undefined> {
  const rounds = Math.max(1, Math.ceil(wait.ms / POLL_MS));
  for (let round = 0; round < rounds && !wait.signal?.aborted; round++) {
    if (round > 0) await sleep(POLL_MS);
    if (!(await flow.source.done(step, args).catch(() => false))) continue;
    if (flow.source.complete) return flow.source.complete(first, step);
    const result = await flow.run(flow.source.again ? flow.source.again(args, wait.flowId) : args);
    if (flow.source.find(result, args)?.kind !== step.kind) return result;
  }
  return undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The key a request acts as (what a 2026-07-28 `requestState` is bound to). */
function keyOf(ctx: ToolContext): string {
  return ctx.principal.type === 'api_key' ? ctx.principal.keyId : ctx.principal.orgId;
}

function declaresUrlElicitation(extra: ServerContext): boolean {
  const envelope = extra.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: { url?: unknown } } | undefined;
  return !!capabilities?.elicitation?.url;
}

/** 2026-07-28: the first answer asks for the URL; a retry carries the person's answer (see the file header). */
async function modernCall<A>(flow: Flow<A>, args: A, extra: ServerContext): Promise<unknown> {
  const raw = extra.mcpReq.requestState();
  if (raw !== undefined) return modernRetry(flow, args, extra, stateFor(flow, args, raw));
  const first = await flow.run(args);
  const step = flow.source.find(first, args);
  if (!step || !declaresUrlElicitation(extra)) return first;
  const state: SealedState = {
    tool: flow.tool,
    key: keyOf(flow.ctx),
    args: digestOf(args),
    step,
    first,
    accepted: false,
    until: flow.services.clock.now().getTime() + flow.services.config.mcp.personWaitMs,
    id: randomUUID(),
  };
  return inputRequired({
    inputRequests: { [PERSON_INPUT]: inputRequired.elicitUrl({ url: step.url, message: step.message }) },
    requestState: seal(flow.services, state),
  });
}

async function modernRetry<A>(flow: Flow<A>, args: A, extra: ServerContext, state: SealedState): Promise<unknown> {
  if (!state.accepted) {
    const answer = extra.mcpReq.inputResponses?.[PERSON_INPUT] as { action?: unknown } | undefined;
    if (answer?.action !== 'accept') return state.first;
  }
  const left = state.until - flow.services.clock.now().getTime();
  if (left <= 0) return state.first;
  const round = Math.min(left, ROUND_MS, Math.ceil(flow.services.config.mcp.personWaitMs / 4));
  const wait = { ms: round, flowId: state.id, signal: extra.mcpReq.signal };
  const completed = await untilDone(flow, args, state.first, state.step, wait);
  if (completed) return completed;
  if (state.until <= flow.services.clock.now().getTime()) return state.first;
  return inputRequired({ requestState: seal(flow.services, { ...state, accepted: true }) });
}

function digestOf(args: unknown): string {
  return sha256Hex(JSON.stringify(args ?? null));
}

function seal(services: Services, state: SealedState): string {
  return services.secrets.seal(JSON.stringify(state));
}

/**
 * The v2 server's `requestState.verify` for one request's key: the sealed state opened, or a throw, which the SDK
 * answers with its `-32602` "Invalid or expired requestState" before any tool runs (a state altered, sealed under
 * another SECRETS_KEY, or echoed by another key).
 */
export function personStateVerifier(services: Services, ctx: ToolContext): (state: string) => SealedState {
  return (raw) => {
    const state = JSON.parse(services.secrets.open(raw)) as SealedState;
    if (state.key !== keyOf(ctx)) throw new Error('requestState of another key');
    return state;
  };
}

/** The verified state of a retry, when it was sealed for this tool and these arguments. */
function stateFor<A>(flow: Flow<A>, args: A, state: unknown): SealedState {
  const sealed = state as Partial<SealedState> | undefined;
  if (!sealed || typeof sealed !== 'object' || sealed.tool !== flow.tool || sealed.args !== digestOf(args)) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState', {
      reason: 'invalid_request_state',
    });
  }
  return sealed as SealedState;
}
