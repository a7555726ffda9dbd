/** Columns of rows an org owns. */
import { p } from '@mikro-orm/core';
import { prefixedId } from './common.js';
import { Org } from './org.entity.js';

/** A row with its own prefixed id, owned by an org and listed by it (`org_id`, indexed). */
export const orgOwnedRow = () => ({
  id: prefixedId(),
  org: p.manyToOne(Org).index(),
});
