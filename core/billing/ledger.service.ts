/**
 * The ledger: every movement of credit is one append-only row written in the same transaction as the change to
 * the org's cached balance. Posting is idempotent on (org, idempotency key): a retry returns the original row.
 * Rows are serialised per org by a row lock on the org, so the cached balance always equals the ledger sum.
 *
 * Every writer of ledger rows is named in `LEDGER_WRITERS` below: those that insert rows themselves (this service,
 * and the batch writers that lock the same org rows and keep the same balance rule for throughput) and the callers of
 * `post`. test/unit/ledger-writers.test.ts fails when a file outside the list writes ledger rows, or when
 * a listed file no longer does, so a new writer has to be named here (with the kinds it books) before it can land.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { LedgerKind } from '../../db/entities/index.js';
import { ConflictError, NotFoundError, PaymentRequiredError, ValidationError } from '../errors.js';
import { newId } from '../ids.js';
import { pageInfo, type Page } from '../pagination.js';
import { crossesReloadThreshold } from '../money/money-rules.js';
import { chainOrder, describeLedgerRows } from './ledger-words.js';

/** How a writer books its rows: its own multi-row insert (`sql`), or `LedgerService.post`. */
export type LedgerWriterVia = 'sql' | 'post';

/** Every writer of ledger rows, by file (paths from the repository root), with the kinds it books. */
export const LEDGER_WRITERS = {
  'core/billing/ledger.service.ts': {
    via: 'sql',
    kinds: [],
    what: '`post`: one row of any kind, for the callers below',
  },
  'core/spend/usage-commit-statement.ts': {
    via: 'sql',
    kinds: ['usage'],
    what: "the gateway's group commit: one consumer debit per (org, usage batch), with its calls' usage rows",
  },
  'core/spend/usage-lean-commit.ts': {
    via: 'sql',
    kinds: ['usage'],
    what: "the group commit's common case: the same debits, summed per (org, usage batch) in the process",
  },
  'core/spend/usage-careful-write.ts': {
    via: 'sql',
    kinds: ['usage'],
    what: "the group commit's careful path (a call that would overdraw a prepaid balance), the same rows",
  },
  'core/billing/earnings.service.ts': {
    via: 'sql',
    kinds: ['provider_earning', 'platform_fee'],
    what: "the earnings fold (queued accruals, per provider and usage batch, into providers' ledgers)",
  },
  'core/billing/earnings-reversal.ts': {
    via: 'sql',
    kinds: ['chargeback'],
    what: "the reversal of disputed earnings (EarningsService.reverseDisputed's chargeback rows)",
  },
  'core/billing/charges.service.ts': {
    via: 'post',
    kinds: ['purchase', 'auto_reload'],
    what: 'a card charge that succeeded at once',
  },
  'core/billing/webhooks.service.ts': {
    via: 'post',
    kinds: ['purchase', 'auto_reload', 'chargeback'],
    what: 'Stripe events: paid checkouts and payment intents, lost disputes',
  },
  'core/billing/payouts.service.ts': { via: 'post', kinds: ['payout'], what: 'payouts and their reversal on failure' },
  'activities/credits.activities.ts': { via: 'post', kinds: ['grant'], what: 'the signup grant workflow' },
  'platform/operators/admin-command.ts': {
    via: 'post',
    kinds: ['grant', 'adjustment'],
    what: "an operator's grant or adjustment (`npm run admin`, in its own process or in a running `npm start`)",
  },
  'core/demo/demo-history.ts': {
    via: 'post',
    kinds: ['grant'],
    what: "the demo's sample consumers' credit (`npm start -- --demo`; their calls go through the group commit)",
  },
  'bench/gateway/gateway-targets.ts': { via: 'post', kinds: ['grant'], what: "the benchmark consumer's credit" },
  'bench/gateway/extended.ts': { via: 'post', kinds: ['grant'], what: "the extended benchmark's consumers' credit" },
  'bench/gateway/commit-cost.ts': { via: 'post', kinds: ['grant'], what: "the write-path benchmark's consumer credit" },
  'bench/soak/run.ts': { via: 'post', kinds: ['grant'], what: "the soak's consumer credit and its top-ups" },
} as const satisfies Record<string, { via: LedgerWriterVia; kinds: readonly LedgerKind[]; what: string }>;

export type LedgerWriter = keyof typeof LEDGER_WRITERS;

export interface PostEntryInput {
  orgId: string;
  kind: LedgerKind;
  /** Signed integer cents: positive credits the org, negative debits it. Never zero. */
  amountCents: number;
  idempotencyKey?: string;
  reference?: string;
  memo?: string;
}

export interface PostedEntry {
  id: string;
  orgId: string;
  kind: LedgerKind;
  amountCents: number;
  balanceAfterCents: number;
  idempotencyKey: string | null;
  createdAt: Date;
  /** True when the idempotency key had already been posted and this is the original row. */
  replayed: boolean;
}

export interface LedgerHistoryRow {
  id: string;
  kind: LedgerKind;
  amount_cents: number;
  balance_after_cents: number;
  reference: string | null;
  memo: string | null;
  /** The row in words: "Earnings from 12 paid calls on Weather API" (ledger-words.ts). */
  description: string;
  created_at: string;
}

export interface LedgerDrift {
  orgId: string;
  creditCents: number;
  ledgerSumCents: number;
}

interface EntryRow {
  id: string;
  org_id: string;
  kind: LedgerKind;
  amount_cents: string;
  balance_after_cents: string;
  idempotency_key: string | null;
  /** Raw rows carry timestamptz as text (MikroORM's pg type parsers). */
  created_at: string;
}

function toPosted(row: EntryRow, replayed: boolean): PostedEntry {
  return {
    id: row.id,
    orgId: row.org_id,
    kind: row.kind,
    amountCents: Number(row.amount_cents),
    balanceAfterCents: Number(row.balance_after_cents),
    idempotencyKey: row.idempotency_key,
    createdAt: new Date(row.created_at),
    replayed,
  };
}

export class LedgerService {
  constructor(private readonly orm: MikroORM) {}

  /** Post one entry in its own transaction, or inside `em`'s transaction when given. */
  async post(input: PostEntryInput, em?: EntityManager): Promise<PostedEntry> {
    if (!Number.isSafeInteger(input.amountCents) || input.amountCents === 0) {
      throw new ValidationError('amountCents must be a non-zero integer number of cents.');
    }
    if (em?.isInTransaction()) return this.postInTransaction(em, input);
    return (em ?? this.orm.em.fork()).transactional((tem) => this.postInTransaction(tem, input));
  }

  private async postInTransaction(tem: EntityManager, input: PostEntryInput): Promise<PostedEntry> {
    const [org] = await tem.execute<
      {
        credit_cents: string;
        billing_mode: string;
        auto_reload_enabled: boolean;
        auto_reload_threshold_cents: string | null;
      }[]
    >(
      'select credit_cents, billing_mode, auto_reload_enabled, auto_reload_threshold_cents from orgs where id = ? for update',
      [input.orgId],
    );
    if (!org) throw new NotFoundError(`Organization ${input.orgId} not found.`);

    if (input.idempotencyKey) {
      const [existing] = await tem.execute<EntryRow[]>(
        'select id, org_id, kind, amount_cents, balance_after_cents, idempotency_key, created_at from ledger_entries where org_id = ? and idempotency_key = ?',
        [input.orgId, input.idempotencyKey],
      );
      if (existing) {
        if (existing.kind !== input.kind || Number(existing.amount_cents) !== input.amountCents) {
          throw new ConflictError(`Idempotency key "${input.idempotencyKey}" was already used for a different entry.`);
        }
        return toPosted(existing, true);
      }
    }

    const balanceAfter = Number(org.credit_cents) + input.amountCents;
    if (org.billing_mode === 'prepaid' && balanceAfter < 0) {
      throw new PaymentRequiredError('Insufficient prepaid credits.', {
        details: { credit_cents: Number(org.credit_cents), required_cents: -input.amountCents },
      });
    }
    // Crossing under the auto-reload threshold only marks the org (cheap, same row); the trigger starts the workflow.
    const threshold = org.auto_reload_threshold_cents === null ? null : Number(org.auto_reload_threshold_cents);
    const crossed = crossesReloadThreshold(org.auto_reload_enabled, threshold, Number(org.credit_cents), balanceAfter);
    await tem.execute(
      `update orgs set credit_cents = ?, balance_version = balance_version + 1, updated_at = now()${crossed ? ', reload_requested_at = coalesce(reload_requested_at, now())' : ''} where id = ?`,
      [balanceAfter, input.orgId],
      'run',
    );
    const [row] = await tem.execute<EntryRow[]>(
      `insert into ledger_entries (id, org_id, kind, amount_cents, balance_after_cents, idempotency_key, reference, memo)
       values (?, ?, ?, ?, ?, ?, ?, ?)
       returning id, org_id, kind, amount_cents, balance_after_cents, idempotency_key, created_at`,
      [
        newId('ledgerEntry'),
        input.orgId,
        input.kind,
        input.amountCents,
        balanceAfter,
        input.idempotencyKey ?? null,
        input.reference ?? null,
        input.memo ?? null,
      ],
    );
    return toPosted(row!, false);
  }

  async balance(orgId: string): Promise<number> {
    const [row] = await this.orm.em
      .fork()
      .execute<{ credit_cents: string }[]>('select credit_cents from orgs where id = ?', [orgId]);
    if (!row) throw new NotFoundError(`Organization ${orgId} not found.`);
    return Number(row.credit_cents);
  }

  /**
   * An org's ledger rows, newest first, paginated, each named in words (the console's billing history; with `kinds`,
   * only those kinds: the provider's earnings on its analytics page). Read-only.
   */
  async history(
    orgId: string,
    page: { limit: number; offset: number },
    kinds?: readonly LedgerKind[],
  ): Promise<Page<LedgerHistoryRow>> {
    const em = this.orm.em.fork();
    const only = kinds?.length ? ` and kind in (${kinds.map(() => '?').join(',')})` : '';
    const rows = await em.execute<(EntryRow & { reference: string | null; memo: string | null })[]>(
      `select id, org_id, kind, amount_cents, balance_after_cents, idempotency_key, reference, memo, created_at
         from ledger_entries where org_id = ?${only} order by created_at desc, id desc limit ? offset ?`,
      [orgId, ...(kinds ?? []), page.limit, page.offset],
    );
    const [count] = await em.execute<{ n: string }[]>(
      `select count(*) as n from ledger_entries where org_id = ?${only}`,
      [orgId, ...(kinds ?? [])],
    );
    const words = await describeLedgerRows(em, orgId, rows);
    return {
      items: chainOrder(rows).map((r) => ({
        id: r.id,
        kind: r.kind,
        amount_cents: Number(r.amount_cents),
        balance_after_cents: Number(r.balance_after_cents),
        reference: r.reference,
        memo: r.memo,
        description: words.get(r.id) ?? r.kind,
        created_at: new Date(r.created_at).toISOString(),
      })),
      pagination: pageInfo(page.limit, page.offset, rows.length, Number(count?.n ?? 0)),
    };
  }

  /** Orgs whose cached balance differs from their ledger sum (empty when the books are consistent). */
  async findDrift(): Promise<LedgerDrift[]> {
    const rows = await this.orm.em.fork().execute<{ id: string; credit_cents: string; ledger_sum: string }[]>(
      `select o.id, o.credit_cents, coalesce(l.sum, 0) as ledger_sum
         from orgs o
         left join (select org_id, sum(amount_cents) as sum from ledger_entries group by org_id) l on l.org_id = o.id
        where o.credit_cents <> coalesce(l.sum, 0)`,
    );
    return rows.map((r) => ({
      orgId: r.id,
      creditCents: Number(r.credit_cents),
      ledgerSumCents: Number(r.ledger_sum),
    }));
  }
}
