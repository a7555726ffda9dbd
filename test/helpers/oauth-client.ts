/**
 * The client side of the OAuth 2.1 code flow, as an agent on a person's machine does it: dynamic registration over
 * HTTP, PKCE (S256), the authorize URL it sends the person to, a loopback redirect receiver that catches the code,
 * and the code's exchange at the token endpoint.
 */
import { createHash, randomBytes } from 'node:crypto';
import { http, serve } from './http.js';
import { waitFor } from './ports.js';

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A loopback server standing for the client's redirect URI: it records every request that reaches that URI. */
export interface RedirectReceiver {
  /** The redirect URI (`http://127.0.0.1:<port>/callback`). */
  url: string;
  /** Every URL that reached the redirect URI, in order. */
  seen: URL[];
  /** The next request to arrive after `count` were seen. */
  next(count: number): Promise<URL>;
  close(): Promise<void>;
}

export async function startRedirectReceiver(): Promise<RedirectReceiver> {
  const seen: URL[] = [];
  const server = await serve((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/callback') seen.push(url); // not the browser's own asks (its favicon)
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Signed in</title><p>You can close this window.</p>');
  });
  const url = `${server.url}/callback`;
  return {
    url,
    seen,
    next: (count) =>
      waitFor(() => Promise.resolve(seen[count]), { timeoutMs: 15_000, what: `redirect #${count + 1} to ${url}` }),
    close: () => server.close(),
  };
}

/** Dynamic client registration (RFC 7591): a public native client with one redirect URI. Returns its client_id. */
export async function registerClient(issuer: string, name: string, redirectUri: string): Promise<string> {
  const res = await http<{ client_id?: string }>(issuer, 'POST', '/oauth/register', {
    body: {
      client_name: name,
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    },
  });
  const body = res.body;
  if (res.status !== 201 || !body.client_id) throw new Error(`registration: ${res.status} ${JSON.stringify(body)}`);
  return body.client_id;
}

export interface Authorization {
  /** Where the client sends the person. */
  url: string;
  verifier: string;
  state: string;
}

/** A fresh authorization request (PKCE S256, a random state) for the MCP resource. */
export function authorization(
  issuer: string,
  client: { clientId: string; redirectUri: string; resource: string },
): Authorization {
  const { verifier, challenge } = pkce();
  const state = randomBytes(8).toString('hex');
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: client.resource,
    state,
  });
  return { url: `${issuer}/oauth/authorize?${q.toString()}`, verifier, state };
}

/** The code's exchange at the token endpoint; returns the status and the JSON answer. */
export async function exchangeCode(
  issuer: string,
  params: { clientId: string; redirectUri: string; resource: string; code: string; verifier: string },
): Promise<{ status: number; body: Record<string, string> }> {
  const res = await http<Record<string, string>>(issuer, 'POST', '/oauth/token', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    rawBody: new URLSearchParams({
      grant_type: 'authorization_code',
      code: params.code,
      redirect_uri: params.redirectUri,
      code_verifier: params.verifier,
      client_id: params.clientId,
      resource: params.resource,
    }).toString(),
  });
  return { status: res.status, body: res.body };
}
