/**
 * Providers' legal documents and consumers' acceptances.
 * - A document is immutable once created (a change is a new version). Activating one makes it effective and
 *   supersedes the previous active version of the same kind and scope (one API, or all of the provider's APIs).
 * - `content_hash` is the SHA-256 of the body; the snapshot URL serves exactly that text.
 * - Accepting needs a person: a session of an owner or admin whose email is verified (an API key alone gets 403),
 *   naming the document and its hash (a stale hash is a 400, so nobody accepts a text they did not see).
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { Api, Document, Org, TermsAcceptance, User, type IApi, type IDocument } from '../../db/entities/index.js';
import type { Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import { sha256Hex } from '../crypto.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors.js';
import type { GatewayEvents } from '../spend/gateway-events.js';
import { isId, newId } from '../ids.js';
import type { AcceptTermsBody, CreateDocumentBody } from '../providers/providers.schemas.js';
import type { AcceptanceView, DocumentView } from './terms.schemas.js';
export type { AcceptanceView, DocumentView } from './terms.schemas.js';

export interface TermsRequirement {
  document_id: string;
  content_hash: string;
  snapshot_url: string;
  approval_url: string;
}

export class DocumentsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly publicBaseUrl: string,
    private readonly events?: Pick<GatewayEvents, 'listingChanged'>,
  ) {}

  snapshotUrl(id: string): string {
    return `${this.publicBaseUrl}/v1/documents/${id}/snapshot`;
  }

  view(d: IDocument): DocumentView {
    return {
      document_id: d.id,
      kind: d.kind,
      source: d.source,
      version: d.version,
      title: d.title ?? null,
      content_hash: d.contentHash,
      acceptance_mode: d.acceptanceMode,
      status: d.status,
      api_id: d.api?.id ?? null,
      snapshot_url: this.snapshotUrl(d.id),
      activated_at: d.activatedAt?.toISOString() ?? null,
      created_at: d.createdAt.toISOString(),
    };
  }

  private async ownApi(em: EntityManager, principal: Principal, apiId: string): Promise<IApi> {
    const api = isId('api', apiId) ? await em.findOne(Api, { id: apiId, org: principal.orgId }) : null;
    if (!api) throw new NotFoundError(`No API ${apiId}.`);
    return api;
  }

  async create(principal: Principal, body: CreateDocumentBody): Promise<DocumentView> {
    const em = this.orm.em.fork();
    const api = body.api_id ? await this.ownApi(em, principal, body.api_id) : null;
    const doc = em.create(Document, {
      id: newId('document'),
      org: em.getReference(Org, principal.orgId),
      api,
      kind: body.kind,
      source: body.source,
      version: body.version,
      title: body.title ?? null,
      body: body.body,
      contentHash: sha256Hex(body.body),
      acceptanceMode: body.acceptance_mode,
    });
    await em.flush();
    return this.view(doc);
  }

  async list(principal: Principal, filter: { api_id?: string; kind?: string }): Promise<DocumentView[]> {
    const where: Record<string, unknown> = { org: principal.orgId };
    if (filter.api_id) where.api = filter.api_id;
    if (filter.kind) where.kind = filter.kind;
    const docs = await this.orm.em.fork().find(Document, where, { orderBy: { createdAt: 'asc', id: 'asc' } });
    return docs.map((d) => this.view(d));
  }

  async activate(principal: Principal, documentId: string): Promise<DocumentView> {
    const { view, slugs } = await this.orm.em.fork().transactional(async (tem) => {
      const doc = isId('document', documentId)
        ? await tem.findOne(Document, { id: documentId, org: principal.orgId })
        : null;
      if (!doc) throw new NotFoundError(`No document ${documentId}.`);
      if (doc.status === 'active') return { view: this.view(doc), slugs: [] as string[] };
      if (doc.status === 'superseded')
        throw new ConflictError('This version was superseded; create a new version instead.');
      const now = this.clock.now();
      await tem.nativeUpdate(
        Document,
        { org: principal.orgId, api: doc.api?.id ?? null, kind: doc.kind, status: 'active' },
        { status: 'superseded', supersededAt: now },
      );
      doc.status = 'active';
      doc.activatedAt = now;
      await tem.flush();
      // The gateways cache each live listing's required documents: the listings this one applies to must reload.
      const apis = await tem.find(
        Api,
        doc.api ? { id: doc.api.id, status: 'live' } : { org: principal.orgId, status: 'live' },
        { fields: ['slug'] },
      );
      return { view: this.view(doc), slugs: apis.map((a) => a.slug) };
    });
    for (const slug of slugs) await this.events?.listingChanged(slug);
    return view;
  }

  /** The exact text behind a content hash (active or superseded versions; drafts are private). */
  async snapshot(documentId: string): Promise<{ body: string; contentHash: string; version: string }> {
    const doc = isId('document', documentId)
      ? await this.orm.em.fork().findOne(Document, { id: documentId }, { populate: ['body'] })
      : null;
    if (!doc || doc.status === 'draft') throw new NotFoundError('No such document.');
    return { body: doc.body, contentHash: doc.contentHash, version: doc.version };
  }

  /** Active documents in force for a listing: its own, and the provider's org-wide ones. */
  async effectiveFor(em: EntityManager, api: IApi): Promise<IDocument[]> {
    return (await this.effectiveForMany(em, [api])).get(api.id) ?? [];
  }

  /** `effectiveFor` of several listings in one read (the gateway's catalog refresh), by listing id. */
  async effectiveForMany(em: EntityManager, apis: readonly IApi[]): Promise<Map<string, IDocument[]>> {
    const out = new Map<string, IDocument[]>(apis.map((a) => [a.id, []]));
    if (apis.length === 0) return out;
    const docs = await em.find(
      Document,
      {
        org: { $in: [...new Set(apis.map((a) => a.org.id))] },
        status: 'active',
        $or: [{ api: { $in: apis.map((a) => a.id) } }, { api: null }],
      },
      { orderBy: { kind: 'asc', activatedAt: 'asc' } },
    );
    for (const api of apis) {
      const own = out.get(api.id)!;
      for (const d of docs) {
        if (d.org.id === api.org.id && (d.api === null || d.api === undefined || d.api.id === api.id)) own.push(d);
      }
    }
    return out;
  }

  /** Required documents in force for `api` that `orgId` has not accepted (the gateway's 428 check). */
  async unacceptedRequired(em: EntityManager, api: IApi, orgId: string): Promise<TermsRequirement[]> {
    const docs = (await this.effectiveFor(em, api)).filter((d) => d.acceptanceMode === 'required');
    if (docs.length === 0) return [];
    const accepted = await em.find(TermsAcceptance, { org: orgId, document: { $in: docs.map((d) => d.id) } });
    const done = new Set(accepted.map((a) => a.document.id));
    return docs
      .filter((d) => !done.has(d.id))
      .map((d) => ({
        document_id: d.id,
        content_hash: d.contentHash,
        snapshot_url: this.snapshotUrl(d.id),
        approval_url: this.approvalUrl(api),
      }));
  }

  /** The page where a person reads `api`'s terms in force and accepts them for their org. */
  approvalUrl(api: Pick<IApi, 'slug'>): string {
    return `${this.publicBaseUrl}/terms/${api.slug}`;
  }

  /**
   * Who may accept: a person (a session), owner or admin of the org, with a verified email. Every refusal carries
   * the page a person opens to accept, so an agent holding only a key can hand it on.
   */
  private assertMayAccept(
    principal: Principal,
    api: IApi,
  ): asserts principal is Extract<Principal, { type: 'session' }> {
    const approval_url = this.approvalUrl(api);
    if (principal.type !== 'session') {
      throw new ForbiddenError(
        `Accepting terms needs a person signed in (a session), not an API key. Give this URL to a person (an owner ` +
          `or admin of your organization, with a verified email) to read and accept the terms: ${approval_url}`,
        { details: { required_credential: 'session', approval_url } },
      );
    }
    if (principal.role !== 'owner' && principal.role !== 'admin') {
      throw new ForbiddenError('Only an owner or admin of the organization can accept terms.', {
        details: { approval_url },
      });
    }
    if (!principal.emailVerified) {
      throw new ForbiddenError('Verify your email before accepting terms.', { details: { approval_url } });
    }
  }

  /**
   * A consumer (or the provider itself) accepts a document in force for `api`. The caller is checked first; a person
   * who names no document is told to name one (with its hash, so nobody accepts a text they did not see).
   */
  async accept(principal: Principal, api: IApi, body?: AcceptTermsBody): Promise<AcceptanceView> {
    this.assertMayAccept(principal, api);
    if (!body) {
      throw new ValidationError(
        'Name the document to accept: its document_id and content_hash, as listed in the terms in force.',
        { details: { field: 'document_id', approval_url: this.approvalUrl(api) } },
      );
    }
    const em = this.orm.em.fork();
    const doc = (await this.effectiveFor(em, api)).find((d) => d.id === body.document_id);
    if (!doc) throw new NotFoundError(`Document ${body.document_id} is not in force for this API.`);
    if (doc.contentHash !== body.content_hash) {
      throw new ValidationError(
        'content_hash does not match the document in force; read the current text and accept again.',
        {
          details: { expected_content_hash: doc.contentHash },
        },
      );
    }
    const existing = await em.findOne(TermsAcceptance, { org: principal.orgId, document: doc.id });
    if (existing) {
      return {
        accepted: true,
        document_id: doc.id,
        content_hash: doc.contentHash,
        accepted_at: existing.acceptedAt.toISOString(),
      };
    }
    const acceptance = em.create(TermsAcceptance, {
      id: newId('termsAcceptance'),
      org: em.getReference(Org, principal.orgId),
      document: doc,
      contentHash: doc.contentHash,
      acceptedBy: em.getReference(User, principal.userId),
      acceptedAt: this.clock.now(),
    });
    try {
      await em.flush();
    } catch (err) {
      // A concurrent acceptance of the same document won: the outcome is the same.
      if (!(err instanceof UniqueConstraintViolationException)) throw err;
    }
    return {
      accepted: true,
      document_id: doc.id,
      content_hash: doc.contentHash,
      accepted_at: acceptance.acceptedAt.toISOString(),
    };
  }

  /** A consumer accepts terms in force for the live listing `slug`. */
  async acceptForListing(principal: Principal, slug: string, body?: AcceptTermsBody): Promise<AcceptanceView> {
    const api = await this.orm.em.fork().findOne(Api, { slug, status: 'live' });
    if (!api) throw new NotFoundError(`No live API with slug "${slug}".`);
    return this.accept(principal, api, body);
  }

  /** A provider accepts, for its own org, terms in force for one of its own listings (by id; another org's is 404). */
  async acceptForOwnApi(principal: Principal, apiId: string, body: AcceptTermsBody): Promise<AcceptanceView> {
    const api = await this.ownApi(this.orm.em.fork(), principal, apiId);
    return this.accept(principal, api, body);
  }

  /** Which documents in force for `api` an org has accepted (for the terms routes and the /terms page). */
  async acceptedIds(em: EntityManager, orgId: string, documentIds: string[]): Promise<Set<string>> {
    if (!documentIds.length) return new Set();
    const rows = await em.find(TermsAcceptance, { org: orgId, document: { $in: documentIds } });
    return new Set(rows.map((r) => r.document.id));
  }
}
