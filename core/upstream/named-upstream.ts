/**
 * An upstream the marketplace serves itself (the demo's, core/demo/), allowed by name whatever the address policy:
 * exactly `origin` (an IP-literal host, so no DNS answer can change what it reaches) and only paths under
 * `pathPrefix`. Any other path of that origin, and every other loopback or private address, stays refused.
 */
export interface NamedUpstream {
  readonly origin: string;
  /** Starts and ends with `/`. */
  readonly pathPrefix: string;
}

/** `url` is the named upstream's: its exact origin and a path under its prefix. */
export function isNamedUpstream(url: URL, named: NamedUpstream | undefined): boolean {
  return named !== undefined && url.origin === named.origin && url.pathname.startsWith(named.pathPrefix);
}
