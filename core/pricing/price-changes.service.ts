/**
 * Price changes of a provider's endpoints: a decrease, a discount or any change of a draft that was never live applies
 * at once; an increase on a listing that was ever live (live, or a draft again after an unpublish: its callers come
 * back when it does) is scheduled after the notice period (priceChangeWorkflow), shown to consumers meanwhile, and can
 * be cancelled until it applies. An archived listing's prices do not change (409). Every change is announced to the gateways once it commits.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Endpoint, type Discount, type IApi, type IEndpoint } from '../../db/entities/index.js';
import type { Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { assertNotArchived, endpointsOf, ownApi } from '../db/owned-api.js';
import { NotFoundError } from '../errors.js';
import { isId } from '../ids.js';
import type { TemporalService } from '../temporal/temporal.service.js';
import { endpointView } from './endpoint-view.js';
import type { EndpointView, PricingView } from './pricing.schemas.js';

/**
 * The changes as the provider routes and tools parse them (`PricingBody`, `DiscountInput` in
 * core/providers/providers.schemas.ts; written out here because providers/ sits above pricing/).
 */
export interface PricingBody {
  endpoints: { endpoint_id: string; price_cents?: number; discount?: DiscountInput | null }[];
}
/** Exactly one of `percent` and `amount_cents` (the schema checks it). */
interface DiscountInput {
  percent?: number;
  amount_cents?: number;
  starts_at?: string | null;
  ends_at?: string | null;
  label?: string | null;
}

export interface PriceChangesDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  temporal: TemporalService;
  /** Tells the gateways a listing changed (core/spend/gateway-events.ts), after the change commits. */
  events: { listingChanged(slug: string): Promise<void> };
}

export class PriceChangesService {
  constructor(private readonly deps: PriceChangesDeps) {}

  async updatePricing(principal: Principal, apiId: string, body: PricingBody): Promise<PricingView> {
    const { temporal, clock, config } = this.deps;
    const { slug, view } = await this.deps.orm.em.fork().transactional(async (tem) => {
      const api = await ownApi(tem, principal, apiId);
      assertNotArchived(api);
      const all = await endpointsOf(tem, api.id);
      const byId = new Map(all.map((e) => [e.id, e]));
      const missing = body.endpoints.filter((e) => !byId.has(e.endpoint_id)).map((e) => e.endpoint_id);
      if (missing.length)
        throw new NotFoundError(`No endpoint ${missing.join(', ')} on this API.`, {
          details: { endpoint_ids: missing },
        });
      const now = clock.now();
      const noticeMs = config.providers.priceIncreaseNoticeMs;
      const toSchedule: ScheduledIncrease[] = [];
      const toCancel: IEndpoint[] = [];
      for (const change of body.endpoints) {
        const planned = applyChange(api, byId.get(change.endpoint_id)!, change, now, noticeMs);
        if (planned === 'cancel') toCancel.push(byId.get(change.endpoint_id)!);
        else if (planned) toSchedule.push(planned);
      }
      await tem.flush();
      // Inside the transaction: if Temporal cannot take the schedule, nothing changes and the caller may retry. A run
      // left behind by a rollback finds no matching pending change and applies nothing.
      for (const s of toSchedule) {
        await temporal.schedulePriceChange(
          {
            apiId: api.id,
            endpointId: s.endpoint.id,
            priceCents: s.priceCents,
            effectiveAt: s.effectiveAt.toISOString(),
          },
          { apiSlug: api.slug, orgId: api.org.id },
        );
      }
      for (const e of toCancel) await temporal.cancelPriceChange(api.id, e.id);
      return {
        slug: api.slug,
        view: { endpoints: body.endpoints.map((c) => endpointView(byId.get(c.endpoint_id)!, now)) },
      };
    });
    // Committed: every gateway drops the listing (a decrease or a discount applies to the next call).
    await this.deps.events.listingChanged(slug);
    return view;
  }

  async cancelPendingPrice(principal: Principal, apiId: string, endpointId: string): Promise<EndpointView> {
    const { slug, view } = await this.deps.orm.em.fork().transactional(async (tem) => {
      const api = await ownApi(tem, principal, apiId);
      const endpoint = isId('endpoint', endpointId)
        ? await tem.findOne(Endpoint, { id: endpointId, api: api.id })
        : null;
      if (!endpoint) throw new NotFoundError(`No endpoint ${endpointId} on this API.`);
      const now = this.deps.clock.now();
      if (
        endpoint.pendingPriceCents == null ||
        !endpoint.pendingPriceEffectiveAt ||
        endpoint.pendingPriceEffectiveAt <= now
      ) {
        throw new NotFoundError('This endpoint has no scheduled price increase to cancel.');
      }
      endpoint.pendingPriceCents = null;
      endpoint.pendingPriceEffectiveAt = null;
      await tem.flush();
      await this.deps.temporal.cancelPriceChange(api.id, endpoint.id);
      return { slug: api.slug, view: endpointView(endpoint, now) };
    });
    await this.deps.events.listingChanged(slug);
    return view;
  }

  /** Activity: apply a scheduled price if the endpoint still carries exactly this pending change. */
  async applyScheduledPrice(input: { endpointId: string; priceCents: number; effectiveAt: string }): Promise<boolean> {
    const rows = await this.deps.orm.em.fork().execute<{ slug: string }[]>(
      `update endpoints set price_cents = pending_price_cents, pending_price_cents = null,
              pending_price_effective_at = null, updated_at = now()
        where id = ? and pending_price_cents = ? and pending_price_effective_at = ?
        returning (select slug from apis where apis.id = endpoints.api_id) as slug`,
      [input.endpointId, input.priceCents, new Date(input.effectiveAt)],
    );
    if (rows[0]) await this.deps.events.listingChanged(rows[0].slug);
    return rows.length === 1;
  }
}

function toDiscount(d: DiscountInput): Discount {
  return {
    ...(d.percent !== undefined ? { percent: d.percent } : { amount_cents: d.amount_cents }),
    starts_at: d.starts_at ?? null,
    ends_at: d.ends_at ?? null,
    label: d.label ?? null,
  };
}

type ScheduledIncrease = { endpoint: IEndpoint; priceCents: number; effectiveAt: Date };

/**
 * Apply one endpoint's change in memory: a due scheduled price first becomes the current one, then the discount and
 * the price. Returns the increase to schedule, 'cancel' when a decrease replaces a pending increase, or nothing.
 */
function applyChange(
  api: IApi,
  endpoint: IEndpoint,
  change: PricingBody['endpoints'][number],
  now: Date,
  noticeMs: number,
): ScheduledIncrease | 'cancel' | undefined {
  // A scheduled price whose time has come is the current price.
  if (
    endpoint.pendingPriceCents != null &&
    endpoint.pendingPriceEffectiveAt &&
    endpoint.pendingPriceEffectiveAt <= now
  ) {
    endpoint.priceCents = endpoint.pendingPriceCents;
    endpoint.pendingPriceCents = null;
    endpoint.pendingPriceEffectiveAt = null;
  }
  if (change.discount !== undefined) endpoint.discount = change.discount ? toDiscount(change.discount) : null;
  if (change.price_cents === undefined) return undefined;
  const hadPending = endpoint.pendingPriceCents != null;
  // Only a listing that was never live has no callers to warn (an unpublished one keeps the notice rule).
  if (!api.publishedAt || change.price_cents <= endpoint.priceCents) {
    endpoint.priceCents = change.price_cents;
    endpoint.pendingPriceCents = null;
    endpoint.pendingPriceEffectiveAt = null;
    return hadPending ? 'cancel' : undefined;
  }
  const effectiveAt = new Date(now.getTime() + noticeMs);
  endpoint.pendingPriceCents = change.price_cents;
  endpoint.pendingPriceEffectiveAt = effectiveAt;
  return { endpoint, priceCents: change.price_cents, effectiveAt };
}
