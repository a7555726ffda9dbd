/** A consumer org's acceptance of one exact document version (pinned by its content hash), by a person. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Document } from './document.entity.js';
import { Org } from './org.entity.js';
import { User } from './user.entity.js';

export const TermsAcceptance = defineEntity({
  name: 'TermsAcceptance',
  tableName: 'terms_acceptances',
  properties: {
    id: p.string().length(40).primary(),
    org: p.manyToOne(Org),
    document: p.manyToOne(Document).index(),
    contentHash: p.string().length(64),
    acceptedBy: p.manyToOne(User),
    acceptedAt: p
      .datetime()
      .defaultRaw('now()')
      .onCreate(() => new Date()),
  },
  uniques: [{ name: 'terms_acceptances_org_document_uniq', properties: ['org', 'document'] }],
});

export type ITermsAcceptance = InferEntity<typeof TermsAcceptance>;
