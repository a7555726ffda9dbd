/** Console · Provider: what its sub-pages share (flash messages, the sub-navigation, the provider gate, badges). */
import { ForbiddenError } from '../../../core/errors.js';
import { escapeHtml } from '../../../core/html.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext } from '../../context.js';
import { flash } from './forms.js';
import { emptyState, type ConsoleView } from './shell.js';

export type Flash = Record<string, ['good' | 'warn' | 'bad', string]>;

export const FLASH: Flash = {
  created: ['good', 'API created as a draft. Set its prices and credential, then verify and publish it.'],
  details: ['good', 'Details saved.'],
  credentials: ['good', 'Upstream credential saved. It is stored encrypted and never shown again.'],
  priced: ['good', 'Prices saved.'],
  scheduled: ['good', 'Prices saved. Increases on a live API apply after the notice period (see Scheduled changes).'],
  unchanged: ['warn', 'No price changed.'],
  cancelled: ['good', 'The scheduled price change is cancelled.'],
  verified: ['good', 'Verification finished: see the smoke test below.'],
  published: ['good', 'Published: the API is live in the catalog.'],
  unpublished: ['good', 'Unpublished: the API is a draft again and out of the catalog.'],
  running: ['warn', 'The workflow is still running. Refresh this page to see its outcome.'],
  document: ['good', 'Document saved as a draft. Activate it to put it in force.'],
  activated: ['good', 'Document activated: it is in force for new acceptances.'],
  // Endpoint changes, revisions and retirement (issue 31). A failed smoke test's banner is built from its evidence
  // (provider-revision.ts verificationBanner), so it can name host:port.
  'endpoint-added': ['good', 'Endpoint added.'],
  'endpoint-saved': ['good', 'Endpoint saved.'],
  'endpoint-unchanged': ['warn', 'Nothing changed: the endpoint is as it was.'],
  'endpoint-moved': [
    'warn',
    'Method or path changed: that is a removal of the old endpoint plus an addition of a new one (a new id, the same price and schemas).',
  ],
  'endpoint-staged': ['good', 'Endpoint added to the open revision: callers see it once you publish the revision.'],
  'endpoint-saved-staged': [
    'good',
    'Change staged in the open revision: callers see it once you publish the revision.',
  ],
  'endpoint-moved-staged': [
    'warn',
    'Method or path changed: staged in the revision as a removal of the old endpoint plus an addition of a new one. Once published, the old one is removed after its notice (at once if it had no call in 30 days).',
  ],
  'endpoint-removed': ['good', 'Endpoint removed.'],
  'removal-staged': [
    'good',
    'Removal staged in the open revision: it takes effect once you publish the revision (when: see the revision).',
  ],
  'removal-scheduled': [
    'good',
    'Removal announced: calls carry Deprecation and Sunset headers until the date, then answer 410.',
  ],
  'addition-dropped': ['good', 'The staged addition is dropped from the revision.'],
  reimported: ['good', 'Endpoints re-imported from the OpenAPI document.'],
  'reimport-staged': [
    'good',
    'Re-import staged in the open revision: review it, then publish or discard the revision.',
  ],
  'revision-published': ['good', 'Revision published: its changes are live (removals after their notice).'],
  'no-revision': ['warn', 'There was no open revision to publish.'],
  'revision-discarded': ['good', 'Revision discarded: nothing it staged was applied.'],
  archived: [
    'good',
    'Archived: the API is out of the catalog and its URLs answer 410 api_archived. Its history stays; restore it to publish it again.',
  ],
  restored: ['good', 'Restored to a draft: verify and publish it to go live again.'],
  deleted: ['good', 'API deleted: its slug is free again.'],
};

const sub = [
  { path: '/console/provider', label: 'My APIs' },
  { path: '/console/provider/analytics', label: 'Analytics' },
  { path: '/console/provider/documents', label: 'Documents' },
  { path: '/console/provider/requests', label: 'Requests' },
];

export function subNav(current: string): string {
  return `<nav aria-label="Provider"><ul class="chips">${sub
    .map((s) => `<li><a href="${s.path}"${s.path === current ? ' aria-current="page"' : ''}>${s.label}</a></li>`)
    .join('')}</ul></nav>`;
}

/** A provider page: the sub-navigation (`current` marked) above `body`, with the flash banners of ?done=. */
export function providerPage(
  ctx: AppContext,
  title: string,
  current: string,
  status: number,
  body: string,
): ConsoleView {
  return { section: 'provider', title, status, banners: flash(ctx, FLASH), body: `${subNav(current)}\n${body}` };
}

/** A provider page's view; `state` re-renders it after a failed form (the message, what was typed). */
export type ProviderView<S = never> = (
  services: Services,
  ctx: AppContext,
  person: SessionPrincipal,
  state?: S,
) => Promise<ConsoleView>;

/** A person without provider:write (email not verified) gets a clear page, not an error. */
export function gate(person: SessionPrincipal): ConsoleView | undefined {
  if (person.scopes.includes('provider:write')) return undefined;
  return {
    section: 'provider',
    title: 'Provider',
    status: 403,
    body: emptyState(`<p><strong>Listing your own APIs needs a verified email address.</strong></p>
<p>Your organization can search the catalog and call APIs. Open the verification link we emailed you at sign-up, then sign in again to create, price and publish APIs here.</p>
<p><a href="/console/catalog">Browse the catalog</a></p>`),
  };
}

/** For POST handlers: refuse without provider:write, like the REST routes (403 page). */
export function requireProvider(person: SessionPrincipal): void {
  if (!person.scopes.includes('provider:write')) {
    throw new ForbiddenError('Listing your own APIs needs a verified email address (scope "provider:write").');
  }
}

export const statusBadge = (status: string) =>
  `<span class="badge ${['live', 'passed', 'enabled', 'active'].includes(status) ? 'ok' : status === 'failed' ? 'error' : ''}">${escapeHtml(status)}</span>`;
