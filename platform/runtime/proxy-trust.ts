/**
 * How far our Koa apps believe `X-Forwarded-For` (and `-Proto`, `-Host`): exactly TRUST_PROXY_HOPS proxies we run
 * ourselves. Koa's `maxIpsCount` keeps only the rightmost N addresses, the ones our own proxies appended; the
 * leftmost values are whatever the client sent and never become `ctx.ip`. 0 (the default) trusts no header at all:
 * `ctx.ip` is the socket's peer. Every per-IP limit reads `ctx.ip`, so every app (control plane, agent-tool server,
 * the OAuth provider, itself a Koa app) must be configured here, alike. docs/decisions.md, "Client addresses".
 */
import type Koa from 'koa';

export function applyProxyTrust(app: Pick<Koa, 'proxy' | 'maxIpsCount'>, hops: number): void {
  app.proxy = hops > 0;
  app.maxIpsCount = hops;
}
