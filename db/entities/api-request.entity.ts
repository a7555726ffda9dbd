/**
 * Demand (issue 11): requests for APIs the catalog lacks. Near-duplicate queries merge into one request whose
 * `votes` counts distinct requesters; each requester's vote keeps the email (never shown) to tell them once a
 * matching listing is published. An address the requester's org has not proven is told only once its owner confirms
 * it from the mailed link (issue 31, double opt-in: core/demand/email-confirmation.ts); unconfirmed, it is forgotten
 * after 7 days.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { idRef, prefixedId, sha256Hex, timestamps } from './common.js';

export const API_REQUEST_STATUSES = ['open', 'fulfilled'] as const;
export type ApiRequestStatus = (typeof API_REQUEST_STATUSES)[number];

export const ApiRequest = defineEntity({
  name: 'ApiRequest',
  tableName: 'api_requests',
  properties: {
    id: prefixedId(),
    query: p.string().length(500),
    /** The query normalised (core/demand/similarity.ts): what near-duplicates are matched on. */
    normalized: p.string().length(500),
    tokens: p.array().default([]),
    votes: p.integer().default(1),
    status: p.enum([...API_REQUEST_STATUSES]).default('open'),
    fulfilledApiId: idRef().nullable(),
    ...timestamps(),
  },
  indexes: [{ name: 'api_requests_status_votes_idx', properties: ['status', 'votes'] }],
  checks: [{ name: 'api_requests_votes_positive', expression: 'votes >= 1' }],
});
export type IApiRequest = InferEntity<typeof ApiRequest>;

export const ApiRequestVote = defineEntity({
  name: 'ApiRequestVote',
  tableName: 'api_request_votes',
  properties: {
    id: prefixedId(),
    request: p.manyToOne(ApiRequest).index(),
    /** The requesting org: one vote per org and request. */
    orgId: idRef(),
    email: p.string().length(254).nullable(),
    notes: p.string().length(2000).nullable(),
    notifiedAt: p.datetime().nullable(),
    /** SHA-256 of the confirmation link's token (the token itself is never stored); null for a proven address. */
    emailTokenHash: sha256Hex().nullable().unique(),
    /** When the confirmation mail went out, and when its link stops working (7 days later): then it is forgotten. */
    emailConfirmationSentAt: p.datetime().nullable(),
    emailTokenExpiresAt: p.datetime().nullable(),
    /** When the address's owner confirmed it from the link: from then on it is told like a proven address. */
    emailConfirmedAt: p.datetime().nullable(),
    ...timestamps(),
  },
  uniques: [{ name: 'api_request_votes_request_org_uniq', properties: ['request', 'orgId'] }],
});
export type IApiRequestVote = InferEntity<typeof ApiRequestVote>;
