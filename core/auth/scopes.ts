/** Scopes (spec: Authentication / Scopes) and the one check every route and tool declares its scope with. */
import { ForbiddenError } from '../errors.js';

export const SCOPES = [
  'catalog:read',
  'proxy:call',
  'keys:write',
  'usage:read',
  'billing:write',
  'provider:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/** What an anonymous registration (and an unverified signup) gets. */
export const CONSUMER_SCOPES: readonly Scope[] = ['catalog:read', 'proxy:call', 'keys:write', 'usage:read'];
/** Added to the same key in place by email verification. */
export const VERIFIED_EXTRA_SCOPES: readonly Scope[] = ['billing:write', 'provider:write'];
export const ALL_SCOPES: readonly Scope[] = SCOPES;

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export type Principal =
  | {
      type: 'api_key';
      orgId: string;
      keyId: string;
      keyPrefix: string;
      scopes: readonly Scope[];
    }
  | {
      type: 'session';
      orgId: string;
      sessionId: string;
      userId: string;
      role: 'owner' | 'admin' | 'member';
      emailVerified: boolean;
      scopes: readonly Scope[];
      /** The person's address, for pages that say who is signed in. */
      email?: string;
    };

/** Throws 403 `forbidden` naming the missing scope. */
export function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.includes(scope)) {
    throw new ForbiddenError(`This credential lacks the "${scope}" scope.`, {
      details: { missing_scope: scope },
    });
  }
}
