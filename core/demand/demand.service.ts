/**
 * Demand (issue 11, item 7): requests for APIs the catalog lacks. POST merges a near-duplicate into the open request
 * it resembles (similarity.ts) and counts one vote per requesting org; GET lists the most requested without any
 * requester's email or notes. When a listing goes live, open requests it covers are marked fulfilled and requesters
 * who left an email are mailed, once (the vote is stamped `notified_at` before the send: at most once). Only a proven
 * address is kept and mailed (notify-address.ts): the verified email of a user of the requesting org.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import { ValidationError } from '../errors.js';
import { escapeHtml } from '../html.js';
import { newId } from '../ids.js';
import { pgArray, toDate } from '../db/sql.js';
import type { Logger } from '../logger.js';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import {
  coverage,
  DUPLICATE_THRESHOLD,
  MATCH_THRESHOLD,
  normalizeQuery,
  querySimilarity,
  tokenize,
} from './similarity.js';
import { PROVEN_VOTE_EMAIL, provenNotifyAddress } from './notify-address.js';
import type { ApiRequestView } from './demand.schemas.js';
export type { ApiRequestView } from './demand.schemas.js';

export const ApiRequestBody = z
  .object({
    query: z.string().trim().min(1).max(500),
    email: z.email().max(254).optional(),
    notes: z.string().trim().max(2000).optional(),
  })
  .strict();
export type ApiRequestBody = z.infer<typeof ApiRequestBody>;

export const ApiRequestsQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(200).default(50),
    status: z.enum(['open', 'fulfilled', 'all']).default('open'),
  })
  .strict();
export type ApiRequestsQuery = z.infer<typeof ApiRequestsQuery>;

interface RequestRow {
  id: string;
  query: string;
  votes: number;
  status: 'open' | 'fulfilled';
  created_at: Date | string;
  updated_at: Date | string;
  fulfilled_slug: string | null;
  fulfilled_name: string | null;
}

const view = (r: RequestRow): ApiRequestView => ({
  id: r.id,
  query: r.query,
  votes: Number(r.votes),
  status: r.status,
  fulfilled_by: r.fulfilled_slug ? { slug: r.fulfilled_slug, name: r.fulfilled_name ?? r.fulfilled_slug } : null,
  created_at: toDate(r.created_at).toISOString(),
  last_requested_at: toDate(r.updated_at).toISOString(),
});

const SELECT = `select r.id, r.query, r.votes, r.status, r.created_at, r.updated_at, a.slug as fulfilled_slug,
  a.name as fulfilled_name from api_requests r left join apis a on a.id = r.fulfilled_api_id`;

export function fulfilledEmail(
  to: string,
  query: string,
  listing: { slug: string; name: string; url: string },
): MailMessage {
  return {
    to,
    subject: `An API you asked for is live: ${listing.name}`,
    text: [
      `You asked the API marketplace for: "${query}".`,
      `A matching API was just published: ${listing.name}.`,
      listing.url,
      '',
      'You get this message once; reply is not monitored.',
    ].join('\n'),
    html: `<p>You asked the API marketplace for: “${escapeHtml(query)}”.</p>
<p>A matching API was just published: <a href="${escapeHtml(listing.url)}">${escapeHtml(listing.name)}</a>.</p>
<p>You get this message once.</p>`,
  };
}

export class DemandService {
  constructor(
    private readonly deps: { orm: MikroORM; clock: Clock; mailer: Mailer; logger: Logger; publicBase: string },
  ) {}

  /**
   * Record the org's vote. `notifyEmail` is the address that will be told when a matching API goes live: the
   * request's `email` when a verified user of the org owns it, else null (an unproven address is not kept).
   */
  async request(
    principal: Principal,
    body: ApiRequestBody,
  ): Promise<{ request: ApiRequestView; merged: boolean; notifyEmail: string | null }> {
    const tokens = tokenize(body.query);
    if (tokens.length === 0) {
      throw new ValidationError('Say what the API should do: the query has no meaningful words.', {
        details: { field: 'query' },
      });
    }
    const normalized = normalizeQuery(body.query).slice(0, 500);
    const now = this.deps.clock.now();
    return this.deps.orm.em.fork().transactional(async (em) => {
      const notifyEmail = await provenNotifyAddress(em, principal.orgId, body.email);
      const candidates = await em.execute<{ id: string; normalized: string }[]>(
        `select id, normalized from api_requests where status = 'open' and tokens && ?::text[]
          order by votes desc limit 200`,
        [pgArray(tokens)],
      );
      let best: { id: string; score: number } | undefined;
      for (const c of candidates) {
        const score = querySimilarity(normalized, c.normalized);
        if (score >= DUPLICATE_THRESHOLD && (!best || score > best.score)) best = { id: c.id, score };
      }
      const requestId = best?.id ?? newId('apiRequest');
      if (!best) {
        await em.execute(
          `insert into api_requests (id, query, normalized, tokens, votes, status, created_at, updated_at)
           values (?, ?, ?, ?::text[], 1, 'open', ?, ?)`,
          [requestId, body.query, normalized, pgArray(tokens), now, now],
        );
      }
      await em.execute(
        `insert into api_request_votes (id, request_id, org_id, email, notes, created_at, updated_at)
         values (?, ?, ?, ?, ?, ?, ?)
         on conflict (request_id, org_id) do update set email = coalesce(excluded.email, api_request_votes.email),
           notes = coalesce(excluded.notes, api_request_votes.notes), updated_at = excluded.updated_at`,
        [newId('apiRequestVote'), requestId, principal.orgId, notifyEmail, body.notes ?? null, now, now],
      );
      await em.execute(
        `update api_requests set votes = (select count(*) from api_request_votes where request_id = ?), updated_at = ?
          where id = ?`,
        [requestId, now, requestId],
      );
      const [row] = await em.execute<RequestRow[]>(`${SELECT} where r.id = ?`, [requestId]);
      return { request: view(row!), merged: Boolean(best), notifyEmail };
    });
  }

  async list(query: ApiRequestsQuery): Promise<ApiRequestView[]> {
    const where = query.status === 'all' ? '' : `where r.status = '${query.status === 'open' ? 'open' : 'fulfilled'}'`;
    const rows = await this.deps.orm.em
      .fork()
      .execute<RequestRow[]>(`${SELECT} ${where} order by r.votes desc, r.updated_at desc, r.id limit ?`, [
        query.limit,
      ]);
    return rows.map(view);
  }

  /** The most requested open APIs (provider analytics). */
  async topOpen(limit = 10): Promise<{ query: string; votes: number; last_requested_at: string }[]> {
    const items = await this.list({ limit, status: 'open' });
    return items.map((i) => ({ query: i.query, votes: i.votes, last_requested_at: i.last_requested_at }));
  }

  /** The publish hook: match, mail, and log (never throw) so a publish never fails because of demand. */
  async onPublished(apiId: string): Promise<void> {
    try {
      await this.matchPublished(apiId);
    } catch (err) {
      this.deps.logger.warn({ err, api_id: apiId }, 'matching api requests to a published listing failed');
    }
  }

  /**
   * A listing went live: open requests it covers (≥ 60% of a request's words appear in its name, summary,
   * description, tags, category or examples) are fulfilled by it, and their requesters with a proven email are told
   * once.
   * Returns the ids of the requests fulfilled.
   */
  async matchPublished(apiId: string): Promise<string[]> {
    const em = this.deps.orm.em.fork();
    const [api] = await em.execute<{ slug: string; name: string; text: string; status: string }[]>(
      `select a.slug, a.name, a.status, concat_ws(' ', a.name, a.summary, a.description, array_to_string(a.tags, ' '),
              a.category, c.name, array_to_string(a.examples, ' ')) as text
         from apis a left join categories c on c.slug = a.category where a.id = ?`,
      [apiId],
    );
    if (!api || api.status !== 'live') return [];
    const listingTokens = new Set(tokenize(api.text));
    const open = await em.execute<{ id: string; query: string; tokens: string[] }[]>(
      `select id, query, tokens from api_requests where status = 'open' and tokens && ?::text[]`,
      [pgArray([...listingTokens])],
    );
    const matched = open.filter((r) => coverage(r.tokens, listingTokens) >= MATCH_THRESHOLD);
    if (matched.length === 0) return [];
    const ids = matched.map((r) => r.id);
    const now = this.deps.clock.now();
    const toTell = await em.transactional(async (tem) => {
      await tem.execute(
        `update api_requests set status = 'fulfilled', fulfilled_api_id = ?, updated_at = ?
          where id = any(?::varchar[]) and status = 'open'`,
        [apiId, now, pgArray(ids)],
      );
      return tem.execute<{ id: string; email: string; request_id: string }[]>(
        `update api_request_votes v set notified_at = ? where request_id = any(?::varchar[]) and email is not null
           and notified_at is null and ${PROVEN_VOTE_EMAIL} returning id, email, request_id`,
        [now, pgArray(ids)],
      );
    });
    const queries = new Map(matched.map((r) => [r.id, r.query]));
    const url = `${this.deps.publicBase}/v1/apis/${api.slug}`;
    for (const vote of toTell) {
      try {
        await this.deps.mailer.send(
          fulfilledEmail(vote.email, queries.get(vote.request_id) ?? '', { slug: api.slug, name: api.name, url }),
        );
      } catch (err) {
        this.deps.logger.warn({ err, vote_id: vote.id }, 'could not mail a requester about a published API');
      }
    }
    this.deps.logger.info({ api_id: apiId, fulfilled: ids, mailed: toTell.length }, 'api requests fulfilled');
    return ids;
  }
}
