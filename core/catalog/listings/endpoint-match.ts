/**
 * Which endpoint of a listing a method and path resolve to: the gateway's rule, shared with the quote
 * (GET /v1/apis/{slug}/quote) so both always agree. Literal templates win over parameterised ones; among
 * parameterised templates the first in listing order wins; a `{param}` matches one non-empty path segment.
 */

export interface MatchableEndpoint {
  method: string;
  template: string;
  /** Null for a literal path (compared as a string). */
  matcher: RegExp | null;
}

/** `/users/{id}/posts` → a regex where each `{param}` is one non-empty path segment; null for a literal path. */
export function compileTemplate(template: string): RegExp | null {
  if (!template.includes('{')) return null;
  const parts = template.split(/\{[^}]+\}/).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^/]+')}$`);
}

export function matchTemplate<E extends MatchableEndpoint>(
  endpoints: readonly E[],
  method: string,
  path: string,
): E | undefined {
  let templated: E | undefined;
  for (const e of endpoints) {
    if (e.method !== method) continue;
    if (e.matcher === null) {
      if (e.template === path) return e;
    } else if (templated === undefined && e.matcher.test(path)) {
      templated = e;
    }
  }
  return templated;
}
