/** A consumer org's acceptance of one exact document version (pinned by its content hash), by a person. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { createdNow, prefixedId, sha256Hex } from './common.js';
import { Document } from './document.entity.js';
import { Org } from './org.entity.js';
import { User } from './user.entity.js';

export const TermsAcceptance = defineEntity({
  name: 'TermsAcceptance',
  tableName: 'terms_acceptances',
  properties: {
    id: prefixedId(),
    org: p.manyToOne(Org),
    document: p.manyToOne(Document).index(),
    contentHash: sha256Hex(),
    acceptedBy: p.manyToOne(User),
    acceptedAt: createdNow(),
  },
  uniques: [{ name: 'terms_acceptances_org_document_uniq', properties: ['org', 'document'] }],
});

export type ITermsAcceptance = InferEntity<typeof TermsAcceptance>;
