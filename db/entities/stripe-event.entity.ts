/** A Stripe webhook event we have processed: its id is the primary key, so each event takes effect once. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { createdNow, idRef, stripeId } from './common.js';

export const StripeEvent = defineEntity({
  name: 'StripeEvent',
  tableName: 'stripe_events',
  properties: {
    id: stripeId().primary(),
    type: p.string().length(100),
    /** Stripe's own creation time of the event. */
    stripeCreatedAt: p.datetime(),
    receivedAt: createdNow(),
    /** What we did: applied, ignored (unknown type), or why it was skipped. */
    outcome: p.string().length(200),
    orgId: idRef().nullable(),
  },
});

export type IStripeEvent = InferEntity<typeof StripeEvent>;
