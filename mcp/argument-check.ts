/**
 * Unknown arguments of the default tools (issue 31 item 3). Every default tool's input schema refuses arguments it
 * does not name (`additionalProperties: false`, zod's strict objects). The SDKs would answer such a call with their
 * own `-32602` text ("Unrecognized key"), which names the stray key but not the one meant; this check runs first, in
 * both protocol revisions (mcp/installed-tools.ts wraps the `tools/call` handler of both SDKs), and answers a
 * `validation_failed` error result naming the closest argument the tool takes: `q` → "did you mean `query`?"
 * (core/agent-tools/did-you-mean.ts), with `details.unknown`, `details.suggestions` and `details.expected`. Only the
 * top level is checked here; a stray key inside an object argument is still the SDK's refusal.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { checkKnownArguments } from '../core/agent-tools/did-you-mean.js';
import type { Logger } from '../core/logger.js';
import { toolError } from './tools/tool-result.js';

const strictArguments = new WeakMap<readonly Tool[], Map<string, string[]>>();

/** The argument names of each listed tool whose schema refuses any other (the listing is computed once). */
function argumentsOf(listing: readonly Tool[]): Map<string, string[]> {
  let names = strictArguments.get(listing);
  if (!names) {
    names = new Map(
      listing
        .filter((t) => t.inputSchema.additionalProperties === false)
        .map((t) => [t.name, Object.keys(t.inputSchema.properties ?? {})]),
    );
    strictArguments.set(listing, names);
  }
  return names;
}

/** The refusal of a call to a default tool with an argument it does not take; undefined otherwise. */
export function unknownArgumentResult(
  listing: readonly Tool[],
  name: string,
  args: unknown,
  log: Logger,
): CallToolResult | undefined {
  const expected = argumentsOf(listing).get(name);
  if (!expected || !args || typeof args !== 'object' || Array.isArray(args)) return undefined;
  const refusal = checkKnownArguments(args, expected);
  return refusal ? toolError(refusal, log) : undefined;
}
