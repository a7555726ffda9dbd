/**
 * What a key has spent on one UTC day: kept by the gateway's commit batch, read back when the day cap's fast counter
 * must be rebuilt (Redis lost it). Only grows.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { cents } from './common.js';
import { ApiKey } from './api-key.entity.js';

export const KeyDaySpend = defineEntity({
  name: 'KeyDaySpend',
  tableName: 'key_day_spend',
  properties: {
    key: p.manyToOne(ApiKey).primary(),
    day: p.string().length(10).primary(),
    spentCents: cents().default(0),
  },
  checks: [{ name: 'key_day_spend_nonnegative', expression: 'spent_cents >= 0' }],
});

export type IKeyDaySpend = InferEntity<typeof KeyDaySpend>;
