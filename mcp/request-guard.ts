/**
 * Origin validation and DNS-rebinding protection for /mcp (MCP transport spec: servers MUST validate `Origin`),
 * with the semantics of the SDK's own `enableDnsRebindingProtection` / `allowedOrigins` / `allowedHosts`: a request
 * whose `Origin` is not allowed, or whose `Host` is not ours, is refused with 403 before anything else runs. We check
 * in Koa rather than in the transport so the refusal comes before authentication and in our error envelope.
 *
 * - Origin: absent is fine (agents and SDK clients send none); present, it must be the MCP URL's own origin or one of
 *   MCP_ALLOWED_ORIGINS, exactly (`null` is refused).
 * - Host (as the client addressed us: `X-Forwarded-Host` only with TRUST_PROXY_HOPS > 0): the MCP URL's host and port,
 *   any MCP_ALLOWED_HOSTS entry (`name` for any port, `name:port`), and when we listen on loopback or the MCP URL is a
 *   loopback one, `localhost`, `127.0.0.1` and `[::1]` on any port (a rebinding attack's Host is the attacker's
 *   name, never these). `MCP_ALLOWED_HOSTS=*` turns the Host check off (a proxy in front already enforces it).
 */
import type { Middleware } from 'koa';
import type { AppState } from '../api/context.js';
import type { Config } from '../core/config.js';
import { ForbiddenError } from '../core/errors.js';

interface HostRule {
  name: string;
  /** Undefined: any port. */
  port?: string;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

export function requestGuard(config: Config): Middleware<AppState> {
  const own = new URL(config.urls.mcp);
  const origins = new Set([own.origin, ...config.mcp.allowedOrigins]);
  const anyHost = config.mcp.allowedHosts.includes('*');
  const ownPort = own.port || DEFAULT_PORTS[own.protocol]!;
  const hosts: HostRule[] = [{ name: own.hostname, port: ownPort }, ...config.mcp.allowedHosts.map(parseHost)];
  if (isLoopback(config.host) || isLoopback(own.hostname)) hosts.push(...LOOPBACK_NAMES.map((name) => ({ name })));

  return async (ctx, next) => {
    const origin = ctx.get('origin');
    if (origin && !origins.has(origin.toLowerCase())) {
      throw new ForbiddenError(`Requests from origin ${origin} are not accepted by this MCP server.`, {
        details: { rule: 'origin' },
      });
    }
    if (!anyHost) {
      const host = parseHost(ctx.host.toLowerCase());
      if (!hosts.some((rule) => rule.name === host.name && portMatches(rule, host.port))) {
        throw new ForbiddenError(`Host ${ctx.host || '(none)'} is not this MCP server.`, { details: { rule: 'host' } });
      }
    }
    await next();
  };
}

/**
 * A Host without a port is on the scheme's default port; which scheme the client used is unknown behind a proxy that
 * terminates TLS, so either default matches.
 */
function portMatches(rule: HostRule, port: string | undefined): boolean {
  if (rule.port === undefined) return true;
  return port === undefined ? Object.values(DEFAULT_PORTS).includes(rule.port) : rule.port === port;
}

/** `name`, `name:port`, `[v6]` or `[v6]:port`. */
function parseHost(value: string): HostRule {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(value);
  return match ? { name: match[1]!, port: match[2] } : { name: value };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
