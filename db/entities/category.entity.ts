/**
 * The category taxonomy: a listing's `category` is one of these slugs. Seeded with the public directory's categories
 * (db/migrations/Migration20261123110000_catalog_base.ts); `api_count` is computed from live listings when read.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { dbNow } from './common.js';

export const Category = defineEntity({
  name: 'Category',
  tableName: 'categories',
  properties: {
    slug: p.string().length(64).primary(),
    name: p.string().length(100),
    createdAt: dbNow(),
  },
});

export type ICategory = InferEntity<typeof Category>;
