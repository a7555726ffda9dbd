/**
 * Profile slugs no org may take (issue 21 item 3): the imported directory's own slug, and the words of the routes the
 * platform serves or may serve (`/v1/providers/{slug}` and the pages sit beside them), so a provider cannot pass for
 * the platform or for the directory. The import writes the directory's profile itself; every user-facing way to set
 * a slug (REST `PATCH /v1/me/profile`, the agent tool `update_my_profile`) goes through `ProfilePatch`, which refuses
 * these.
 */
export const DIRECTORY_SLUG = 'public-apis';

export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  DIRECTORY_SLUG,
  'about',
  'account',
  'accounts',
  'admin',
  'api',
  'api-requests',
  'apis',
  'app',
  'assets',
  'auth',
  'avatars',
  'billing',
  'categories',
  'console',
  'dashboard',
  'directory',
  'docs',
  'documents',
  'gateway',
  'health',
  'help',
  'home',
  'keys',
  'leaderboards',
  'login',
  'logout',
  'market',
  'marketplace',
  'mcp',
  'me',
  'metrics',
  'new',
  'oauth',
  'official',
  'openapi',
  'platform',
  'provider',
  'providers',
  'proxy',
  'public',
  'register',
  'root',
  'search',
  'security',
  'settings',
  'signup',
  'staff',
  'static',
  'status',
  'support',
  'svc',
  'system',
  'terms',
  'usage',
  'v1',
  'verify',
  'well-known',
  'www',
]);

export const RESERVED_SLUG_RULE =
  'is reserved: the platform and the imported directory use it (reserved slugs include public-apis, admin, api, ' +
  'docs, console, login, signup, oauth, mcp, gateway, svc, platform, directory, www)';

export function isReservedSlug(slug: string): boolean {
  return RESERVED_SLUGS.has(slug);
}
