/**
 * Demand (issue 11, item 7): requests for APIs the catalog lacks. POST merges a near-duplicate into the open request
 * it resembles (similarity.ts) and counts one vote per requesting org; GET lists the most requested without any
 * requester's email or notes. When a listing goes live, open requests it covers are marked fulfilled and requesters
 * who left an email are mailed, once (the vote is stamped `notified_at` before the send: at most once). Only a proven
 * address is mailed: the verified email of a user of the requesting org (notify-address.ts), or an address whose owner
 * confirmed it from the one confirmation mail it got (issue 31, double opt-in: email-confirmation.ts).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import { ValidationError } from '../errors.js';
import { escapeHtml } from '../html.js';
import { newId } from '../ids.js';
import { pgArray, toDate } from '../db/sql.js';
import type { CounterStore } from '../counters/index.js';
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
import { PROVEN_VOTE_EMAIL } from './notify-address.js';
import type { ApiRequestView, ConfirmationFacts, EmailStatus } from './demand.schemas.js';
import { EmailConfirmations, type EmailOutcome, type VoteEmailRow } from './email-confirmation.js';
import { ConfirmationLinks } from './confirmation-link.js';
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

const emailFields = (email: EmailOutcome | undefined) => ({
  notifyEmail: email?.notifyEmail ?? null,
  emailStatus: email?.status ?? null,
  emailNote: email?.note ?? null,
});

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

/** What POST /v1/api-requests and `request_api` answer besides the request: the merge and the email's fate. */
export interface RequestOutcome {
  request: ApiRequestView;
  merged: boolean;
  /** The address that will be told (proven by the org, or confirmed by its owner), else null. */
  notifyEmail: string | null;
  /** Null when the request named no email. */
  emailStatus: EmailStatus | null;
  emailNote: string | null;
}

export interface DemandDeps {
  orm: MikroORM;
  clock: Clock;
  mailer: Mailer;
  logger: Logger;
  counters: CounterStore;
  publicBase: string;
}

export class DemandService {
  private readonly confirmations: EmailConfirmations;
  private readonly links: ConfirmationLinks;

  constructor(private readonly deps: DemandDeps) {
    this.confirmations = new EmailConfirmations({ counters: deps.counters, publicBase: deps.publicBase });
    this.links = new ConfirmationLinks({ orm: deps.orm, clock: deps.clock });
  }

  /**
   * Record the org's vote. An email is kept as the address to tell when the org proved it; any other gets one
   * confirmation mail (sent once the vote is committed) and is told only once its owner confirms it.
   */
  async request(principal: Principal, body: ApiRequestBody): Promise<RequestOutcome> {
    const tokens = tokenize(body.query);
    if (tokens.length === 0) {
      throw new ValidationError('Say what the API should do: the query has no meaningful words.', {
        details: { field: 'query' },
      });
    }
    const normalized = normalizeQuery(body.query).slice(0, 500);
    const now = this.deps.clock.now();
    const { outcome, email } = await this.deps.orm.em.fork().transactional(async (em) => {
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
      const [vote] = await em.execute<VoteEmailRow[]>(
        `insert into api_request_votes (id, request_id, org_id, notes, created_at, updated_at)
         values (?, ?, ?, ?, ?, ?)
         on conflict (request_id, org_id) do update set notes = coalesce(excluded.notes, api_request_votes.notes),
           updated_at = excluded.updated_at
         returning id, email, email_confirmed_at, email_token_expires_at`,
        [newId('apiRequestVote'), requestId, principal.orgId, body.notes ?? null, now, now],
      );
      const email = body.email
        ? await this.confirmations.record(em, principal.orgId, vote!, body.email, now)
        : undefined;
      await em.execute(
        `update api_requests set votes = (select count(*) from api_request_votes where request_id = ?), updated_at = ?
          where id = ?`,
        [requestId, now, requestId],
      );
      const [row] = await em.execute<RequestRow[]>(`${SELECT} where r.id = ?`, [requestId]);
      return { outcome: { request: view(row!), merged: Boolean(best) }, email };
    });
    if (email?.mail) this.deps.mailer.sendInBackground(email.mail);
    return { ...outcome, ...emailFields(email) };
  }

  /** What the confirmation link's page shows (GET: changes nothing). */
  describeConfirmation(token: string): Promise<ConfirmationFacts> {
    return this.links.describe(token);
  }

  /** The confirmation page's POST: the address will be told when a matching listing is published. */
  confirmEmail(token: string): Promise<ConfirmationFacts> {
    return this.links.confirm(token);
  }

  /** Forget unconfirmed addresses whose link expired (the `demand-email-cleanup` Schedule). */
  forgetUnconfirmedEmails(): Promise<{ forgotten: number }> {
    return this.links.forgetUnconfirmed();
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
   * description, tags, category or examples) are fulfilled by it, and their requesters with a proven or confirmed
   * email are told once (an address still awaiting confirmation is not).
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
           and notified_at is null and (v.email_confirmed_at is not null or ${PROVEN_VOTE_EMAIL})
         returning id, email, request_id`,
        [now, pgArray(ids)],
      );
    });
    const queries = new Map(matched.map((r) => [r.id, r.query]));
    const url = `${this.deps.publicBase}/apis/${api.slug}`; // its storefront page
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
