/**
 * The one place that depends on how SDK 1.32.2's Streamable HTTP transport holds a session. Our sessions outlive the
 * process that opened them (mcp/sessions.ts), so another instance, or this one after a restart, must rebuild a
 * session's McpServer and transport for an id it never saw initialize.
 *
 * The SDK has no public way to give a fresh transport an existing session id: the id and the "initialized" flag are
 * set only by an `initialize` request (typescript-sdk issues #1658 and #1882; the PRs adding an option were closed
 * unmerged). Rather than write those private fields, `restoreSession` replays the client's own handshake through the
 * transport's public `handleRequest`: an `initialize` carrying the stored protocol version, capabilities and client
 * info (the transport takes its id from `sessionIdGenerator`, which returns the stored id, and the McpServer records
 * the client as on the first day), then `notifications/initialized`. The replies go nowhere. We use the web-standard
 * transport (the SDK's Node transport is a thin wrapper around it) so the replay needs no fake Node request.
 * test/unit/mcp-session-transport.test.ts fails if an SDK upgrade changes any of this.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

export type SessionTransport = WebStandardStreamableHTTPServerTransport;

/** What the client said in its `initialize`, as stored with the session. */
export interface SessionHandshake {
  id: string;
  /** The version the server answered with (see negotiatedVersion). */
  protocolVersion: string;
  clientInfo: Record<string, unknown>;
  clientCapabilities: Record<string, unknown>;
}

export class SessionRestoreError extends Error {
  override name = 'SessionRestoreError';
}

/** The protocol version the SDK's server answers an `initialize` with (its own rule, in Server._oninitialize). */
export function negotiatedVersion(requested: string): string {
  return SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

/**
 * A stateful transport whose session id is `id`. `onClosed` runs when the client ends the session (DELETE); the
 * transport answers that request and then closes itself.
 */
export function createSessionTransport(id: string, onClosed: () => Promise<void>): SessionTransport {
  return new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => id, onsessionclosed: onClosed });
}

/**
 * Bring a fresh transport, already connected to its McpServer, to where the session's `initialize` left the
 * original: initialized, with the stored id and protocol version. Throws SessionRestoreError when the SDK did not
 * play along (then the session cannot be served here and is ended: the client starts a new one).
 */
export async function restoreSession(
  transport: SessionTransport,
  handshake: SessionHandshake,
  endpoint: string,
): Promise<void> {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    transport.handleRequest(
      new Request(endpoint, {
        method: 'POST',
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
    );
  const init = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: handshake.protocolVersion,
      capabilities: handshake.clientCapabilities,
      clientInfo: handshake.clientInfo,
    },
  });
  const answered = await answeredVersion(init);
  if (transport.sessionId !== handshake.id || answered !== handshake.protocolVersion) {
    throw new SessionRestoreError(
      `replaying initialize gave session ${transport.sessionId ?? 'none'} at protocol version ${answered ?? 'none'} ` +
        `(HTTP ${init.status}), not ${handshake.protocolVersion}`,
    );
  }
  const initialized = await post(
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { 'mcp-session-id': handshake.id, 'mcp-protocol-version': handshake.protocolVersion },
  );
  await initialized.body?.cancel();
  if (initialized.status !== 202) {
    throw new SessionRestoreError(`replaying notifications/initialized answered HTTP ${initialized.status}`);
  }
}

/** The protocol version in an initialize answer (one SSE event, or JSON), or undefined. */
async function answeredVersion(res: Response): Promise<string | undefined> {
  const text = await res.text();
  if (res.status !== 200) return undefined;
  const json = res.headers.get('content-type')?.includes('text/event-stream') ? /^data: (.+)$/m.exec(text)?.[1] : text;
  try {
    const message = JSON.parse(json ?? '') as { result?: { protocolVersion?: unknown } };
    const version = message.result?.protocolVersion;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}
