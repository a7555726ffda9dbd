/**
 * The `tools/list` entry of an installed API tool (mcp/installed-tools.ts): its name, a title and a description
 * with the live price per call and what the calling key's own caps allow at that price, the input schema derived from
 * the endpoint (core/agent-tools/tool-shape.ts), annotations that match what a call does, and `_meta` with
 * `svc/moves_money`, `svc/price` and where the tool calls (`svc/api_tool`).
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { LiveInstalledTool } from '../core/agent-tools/installed-tools.service.js';
import type { KeySummary } from '../core/keys/key-admin.service.js';
import { MOVES_MONEY, PRICE } from './tool-listing.js';

/** `_meta` key: the listing, method and path an installed tool calls. */
export const API_TOOL = 'svc/api_tool';

type Caps = Pick<KeySummary, 'per_call_max_cents' | 'daily_cap_cents' | 'spent_today_cents' | 'remaining_budget_cents'>;

const cents = (n: number) => `${n} cent${n === 1 ? '' : 's'}`;

/** What the key's own caps allow at `price` (its org's credits bound spend too; quote_call says both). */
export function capsNote(key: Caps, price: number): string {
  if (price === 0) return 'Free: your caps do not limit it.';
  if (key.per_call_max_cents !== null && price > key.per_call_max_cents) {
    return `Your key's per-call max (${cents(key.per_call_max_cents)}) refuses it.`;
  }
  const left: { what: string; cents: number }[] = [];
  if (key.remaining_budget_cents !== null) left.push({ what: 'budget left', cents: key.remaining_budget_cents });
  if (key.daily_cap_cents !== null) {
    left.push({ what: 'daily cap left', cents: Math.max(0, key.daily_cap_cents - key.spent_today_cents) });
  }
  if (left.length === 0) return "Your key's caps do not limit it (your credits still do).";
  const calls = Math.min(...left.map((l) => Math.floor(l.cents / price)));
  return `Your key's caps allow ${calls} more call${calls === 1 ? '' : 's'} (${left
    .map((l) => `${l.what} ${cents(l.cents)}`)
    .join(', ')}).`;
}

/** Billed calls are never read-only or idempotent; a free GET is both. PUT, PATCH and DELETE may overwrite data. */
function annotationsOf(method: string, price: number): NonNullable<Tool['annotations']> {
  const reads = method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
  return {
    readOnlyHint: reads && price === 0,
    destructiveHint: method === 'PUT' || method === 'PATCH' || method === 'DELETE',
    idempotentHint: reads && price === 0,
    openWorldHint: true,
  };
}

export function describeInstalled(tool: LiveInstalledTool, key: Caps): Tool {
  const { api, endpoint } = tool;
  const price = tool.priceCentsEffective;
  const what = endpoint.summary ? `${endpoint.summary} ` : '';
  const repriced =
    price !== tool.installedPriceCents ? ` (was ${cents(tool.installedPriceCents)} when you installed it)` : '';
  const cost = price === 0 ? 'Free per call' : `MOVES MONEY: ${cents(price)} per successful call${repriced}`;
  return {
    name: tool.name,
    title: `${api.name}: ${endpoint.method} ${endpoint.path}`.slice(0, 200),
    description:
      `${what}(${api.slug}: ${endpoint.method} ${endpoint.path}, through the metered gateway, call_api's rules). ` +
      `${cost}; failed upstream calls are refunded. ${capsNote(key, price)}`,
    inputSchema: tool.inputSchema as Tool['inputSchema'],
    annotations: annotationsOf(endpoint.method, price),
    _meta: {
      ...(price > 0 ? { [MOVES_MONEY]: true } : {}),
      [PRICE]: `${price} cents per successful call`,
      [API_TOOL]: { slug: api.slug, method: endpoint.method, path: endpoint.path, endpoint_id: endpoint.id },
    },
  };
}
