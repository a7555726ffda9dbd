/**
 * A provider's changes to a listing after creation (issue 31): its endpoints (a draft's change at once, a live one's
 * are staged in its open revision, published with POST …/publish), re-import from OpenAPI, the revision, archive,
 * restore and delete. Every route needs provider:write; provider.routes.ts lists them with the others.
 */
import { EmptyBody } from '../../core/accounts/accounts.schemas.js';
import {
  EndpointChangesView,
  EndpointPatchBody,
  ImportEndpointsBody,
  RevisionView,
} from '../../core/providers/endpoint-changes.schemas.js';
import { DeletedApiView, EndpointInput, ProviderApiView } from '../../core/providers/providers.schemas.js';
import { NotFoundError } from '../../core/errors.js';
import { env } from '../openapi/operation.js';
import { route } from '../openapi/route.js';

const need = { tag: 'Provider', auth: 'bearer', scope: 'provider:write' } as const;
const changed = env(
  EndpointChangesView,
  'What changed (a draft), or what is staged in the open revision (a live API: `staged: true`).',
);

export const ENDPOINT_ROUTES = [
  route(
    {
      method: 'post',
      path: '/v1/provider/apis/{api_id}/endpoints',
      operationId: 'addProviderEndpoint',
      summary: 'Add an endpoint (a live API: staged in its revision)',
      ...need,
      body: EndpointInput,
      success: { 201: changed },
      errors: [409],
    },
    (_ctx, { services, principal, body, params }) => services.providerEndpoints.add(principal, params.api_id, body),
  ),
  route(
    {
      method: 'patch',
      path: '/v1/provider/apis/{api_id}/endpoints/{endpoint_id}',
      operationId: 'updateProviderEndpoint',
      summary: 'Change an endpoint (a new method or path is a removal plus an addition)',
      ...need,
      body: EndpointPatchBody,
      success: { 200: changed },
      errors: [409],
    },
    (_ctx, { services, principal, body, params }) =>
      services.providerEndpoints.update(principal, params.api_id, params.endpoint_id, body),
  ),
  route(
    {
      method: 'delete',
      path: '/v1/provider/apis/{api_id}/endpoints/{endpoint_id}',
      operationId: 'removeProviderEndpoint',
      summary: 'Remove an endpoint (a live API: after the notice period, 410 afterwards)',
      ...need,
      success: { 200: changed },
      errors: [409],
    },
    (_ctx, { services, principal, params }) =>
      services.providerEndpoints.remove(principal, params.api_id, params.endpoint_id),
  ),
  route(
    {
      method: 'post',
      path: '/v1/provider/apis/{api_id}/import',
      operationId: 'importProviderEndpoints',
      summary: 'Re-import the endpoints from an OpenAPI document',
      ...need,
      body: ImportEndpointsBody,
      success: { 200: changed },
      errors: [409, 422],
    },
    (_ctx, { services, principal, body, params }) =>
      services.providerEndpoints.reimport(principal, params.api_id, body),
  ),
  route(
    {
      method: 'get',
      path: '/v1/provider/apis/{api_id}/revision',
      operationId: 'getProviderRevision',
      summary: "A live API's open revision (staged endpoint changes)",
      ...need,
      success: { 200: env(RevisionView, 'The open revision.') },
    },
    async (_ctx, { services, principal, params }) => {
      const revision = await services.providerEndpoints.revision(principal, params.api_id);
      if (!revision) throw new NotFoundError('This API has no open revision.');
      return revision;
    },
  ),
  route(
    {
      method: 'delete',
      path: '/v1/provider/apis/{api_id}/revision',
      operationId: 'discardProviderRevision',
      summary: 'Discard the open revision',
      ...need,
      success: { 200: env(RevisionView, 'The discarded revision.') },
    },
    (_ctx, { services, principal, params }) => services.providerEndpoints.discardRevision(principal, params.api_id),
  ),
];

export const RETIREMENT_ROUTES = [
  route(
    {
      method: 'post',
      path: '/v1/provider/apis/{api_id}/archive',
      operationId: 'archiveProviderApi',
      summary: 'Archive (retire) a draft: its URLs answer 410, its history stays',
      ...need,
      body: EmptyBody,
      success: { 200: env(ProviderApiView, 'Archived.') },
      errors: [409],
    },
    (_ctx, { services, principal, params }) => services.providerRetirement.archive(principal, params.api_id),
  ),
  route(
    {
      method: 'post',
      path: '/v1/provider/apis/{api_id}/restore',
      operationId: 'restoreProviderApi',
      summary: 'Restore an archived API to a draft',
      ...need,
      body: EmptyBody,
      success: { 200: env(ProviderApiView, 'Restored.') },
      errors: [409],
    },
    (_ctx, { services, principal, params }) => services.providerRetirement.restore(principal, params.api_id),
  ),
  route(
    {
      method: 'delete',
      path: '/v1/provider/apis/{api_id}',
      operationId: 'deleteProviderApi',
      summary: 'Delete a draft that was never live (one that was is archived instead)',
      ...need,
      success: { 200: env(DeletedApiView, 'Deleted.') },
      errors: [409],
    },
    (_ctx, { services, principal, params }) => services.providerRetirement.delete(principal, params.api_id),
  ),
];
