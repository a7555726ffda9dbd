/**
 * How a provider's upstream secret is attached to a request: `bearer` (Authorization: Bearer), `header` (a named
 * header), `query` (a named query parameter) or `basic` (Authorization: Basic of `user:password`).
 */
import type { Injection } from '../../db/entities/index.js';

export interface UpstreamCredential {
  secret: string;
  injection: Injection;
  injectionName: string | null;
}

/** Returns the headers to add; query injection is applied to `url` in place. */
export function applyCredential(url: URL, credential: UpstreamCredential): Record<string, string> {
  switch (credential.injection) {
    case 'bearer':
      return { authorization: `Bearer ${credential.secret}` };
    case 'basic':
      return { authorization: `Basic ${Buffer.from(credential.secret, 'utf8').toString('base64')}` };
    case 'header':
      return { [credential.injectionName!.toLowerCase()]: credential.secret };
    case 'query':
      url.searchParams.set(credential.injectionName!, credential.secret);
      return {};
  }
}

/** The URL with any query-injected secret masked, for logs and stored evidence. */
export function redactUrl(url: URL, credential: UpstreamCredential | null): string {
  if (credential?.injection !== 'query' || !credential.injectionName) return url.toString();
  const copy = new URL(url);
  if (copy.searchParams.has(credential.injectionName)) copy.searchParams.set(credential.injectionName, '[redacted]');
  return copy.toString();
}
