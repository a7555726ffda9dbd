/**
 * Stripe webhook events as the billing tests deliver them: the event id is the caller's, the object carries the
 * fields Stripe sends that the webhook reads.
 */
type Event = { id: string; type: string; data: { object: Record<string, unknown> } };

/** Our payment row as the webhook finds it: its Stripe reference, and its id when the intent's metadata names it. */
type PaymentRef = { id?: string; stripe_ref: string };

function paymentIntent(
  id: string,
  type: string,
  payment: PaymentRef,
  amount: number,
  metadata: Record<string, string>,
  more: Record<string, unknown> = {},
): Event {
  const object = { id: payment.stripe_ref, object: 'payment_intent', amount };
  return {
    id,
    type,
    data: { object: { ...object, metadata: payment.id ? { payment_id: payment.id, ...metadata } : {}, ...more } },
  };
}

/** payment_intent.succeeded for `payment` (metadata: its payment_id, then `metadata`). */
export function paymentSucceeded(id: string, payment: PaymentRef, amount: number, metadata = {}): Event {
  return paymentIntent(id, 'payment_intent.succeeded', payment, amount, metadata);
}

/** payment_intent.payment_failed for `payment`, with the card's `message` as the last payment error. */
export function paymentFailed(id: string, payment: PaymentRef, amount: number, message: string): Event {
  return paymentIntent(id, 'payment_intent.payment_failed', payment, amount, {}, { last_payment_error: { message } });
}

/** checkout.session.completed of a paid session crediting `credit_cents` to `org_id`. */
export function checkoutCompleted(
  id: string,
  session: { id: string; org_id: string; credit_cents: string; payment_intent?: string; amount_total?: number },
): Event {
  const { id: sessionId, org_id, credit_cents, ...optional } = session;
  return {
    id,
    type: 'checkout.session.completed',
    data: {
      object: {
        id: sessionId,
        object: 'checkout.session',
        mode: 'payment',
        payment_status: 'paid',
        ...optional,
        metadata: { org_id, credit_cents },
      },
    },
  };
}

/** charge.dispute.created of `amount` against the intent `payment_intent`. */
export function disputeCreated(
  id: string,
  dispute: { id: string; amount: number; payment_intent: string; reason?: string },
): Event {
  const { id: disputeId, ...rest } = dispute;
  return { id, type: 'charge.dispute.created', data: { object: { id: disputeId, object: 'dispute', ...rest } } };
}
