/**
 * One compact call record (issue 23, step 3): a finished call is encoded once, when it settles, as a JSON array of its
 * fields in a fixed order (no field names: about half the bytes of the object form, and cheaper to write and read),
 * carried in the usage stream (core/spend/redis-spend-lua.ts) and decoded only by a drainer that claims an entry
 * another process left; the process that settled a call hands the drain the object itself.
 *
 * The charge's split (credit applied, billable) is not in the record: the settle step decides it and stores it beside
 * the record in the stream entry. Records written before this format (a JSON object with ISO dates) still decode, so
 * streams left by an older process drain after an upgrade.
 */
import type { CallRecord } from './usage-committer.js';

/** The format's tag, the array's first element: a future layout gets a new number and both keep decoding. */
const V1 = 1;

export function encodeCall(c: CallRecord): string {
  return JSON.stringify([
    V1,
    c.usageId,
    c.orgId,
    c.keyId,
    c.ancestorKeyIds && c.ancestorKeyIds.length > 0 ? c.ancestorKeyIds : 0,
    c.apiId,
    c.apiSlug,
    c.endpointId,
    c.providerOrgId,
    c.method,
    c.path,
    c.status,
    c.outcome === 'success' ? 1 : 0,
    c.priceCents,
    c.priceCentsEffective,
    Math.round(c.latencyMs * 1000) / 1000,
    c.idempotencyKey,
    c.requestHash ?? null,
    c.replayExtra ?? null,
    c.requestId,
    c.clientRequestId ?? null,
    c.day,
    c.at.getTime(),
    c.unsynced ? 1 : 0,
  ]);
}

type Encoded = [
  typeof V1,
  string,
  string,
  string,
  string[] | 0,
  string,
  string,
  string,
  string,
  string,
  string,
  number,
  0 | 1,
  number,
  number,
  number,
  string | null,
  string | null,
  Record<string, unknown> | null,
  string,
  string | null,
  string,
  number,
  0 | 1,
];

/** A streamed record back into a CallRecord, with the charge's split the settle step stored beside it. */
export function decodeCall(text: string, creditAppliedCents: number, billableCents: number): CallRecord {
  if (text.startsWith('{')) {
    // The object form of earlier processes (dates as ISO strings).
    const raw = JSON.parse(text) as CallRecord & { at: string };
    return { ...raw, at: new Date(raw.at), creditAppliedCents, billableCents };
  }
  const a = JSON.parse(text) as Encoded;
  if (a[0] !== V1) throw new Error(`unknown call record format ${String(a[0])}`);
  const call: CallRecord = {
    usageId: a[1],
    orgId: a[2],
    keyId: a[3],
    apiId: a[5],
    apiSlug: a[6],
    endpointId: a[7],
    providerOrgId: a[8],
    method: a[9],
    path: a[10],
    status: a[11],
    outcome: a[12] === 1 ? 'success' : 'failed',
    priceCents: a[13],
    priceCentsEffective: a[14],
    latencyMs: a[15],
    idempotencyKey: a[16],
    requestId: a[19],
    day: a[21],
    at: new Date(a[22]),
    creditAppliedCents,
    billableCents,
  };
  if (a[4] !== 0) call.ancestorKeyIds = a[4];
  if (a[17] !== null) call.requestHash = a[17];
  if (a[18] !== null) call.replayExtra = a[18];
  if (a[20] !== null) call.clientRequestId = a[20];
  if (a[23] === 1) call.unsynced = true;
  return call;
}
