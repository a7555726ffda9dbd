/**
 * Planning a listing's endpoint changes, in memory: the endpoints as they are, plus the changes already staged (a live
 * listing's open revision; nothing for a draft), plus the caller's new changes, each checked against the endpoints as
 * they would then be (a method and path used once, the endpoint named exists, at most 500 endpoints). The result is
 * one change set (`RevisionChanges`): a draft applies it at once, a live listing stores it as its open revision.
 *
 * The rules (docs/decisions.md, issue 31): summary, operation id and schemas change in place; a new method or path is
 * a removal plus an addition (the new endpoint keeps the old one's price); adding the method and path of an endpoint
 * whose removal is staged keeps that endpoint instead (its fields change); removing an endpoint the changes add
 * drops the addition.
 */
import type { IEndpoint, RevisionChanges, StagedEndpoint, StagedUpdate } from '../../db/entities/index.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { newId } from '../ids.js';
import type { EndpointPatchBody } from './endpoint-changes.schemas.js';
import type { EndpointInput } from './providers.schemas.js';

export const MAX_ENDPOINTS = 500;

/** The fields a patch or an addition can set on an existing endpoint. */
type Fields = Omit<StagedUpdate, 'endpoint_id'>;

export interface PlanRequest {
  add?: (EndpointInput & { operation_id?: string | null })[];
  update?: (EndpointPatchBody & { endpoint_id: string; operation_id?: string | null })[];
  remove?: string[];
}

/** What one request did to the plan, for its answer. */
export interface PlanOutcome {
  added: string[];
  updated: string[];
  removed: string[];
}

const keyOf = (e: { method: string; path: string }) => `${e.method} ${e.path}`;

export function emptyChanges(): RevisionChanges {
  return { add: [], update: [], remove: [] };
}

export class EndpointPlan {
  private readonly current: Map<string, IEndpoint>;
  private readonly adds = new Map<string, StagedEndpoint>();
  private readonly updates = new Map<string, StagedUpdate>();
  private readonly removes = new Set<string>();
  readonly outcome: PlanOutcome = { added: [], updated: [], removed: [] };

  constructor(current: IEndpoint[], staged: RevisionChanges = emptyChanges()) {
    this.current = new Map(current.map((e) => [e.id, e]));
    for (const a of staged.add) this.adds.set(a.endpoint_id, { ...a });
    for (const u of staged.update) if (this.current.has(u.endpoint_id)) this.updates.set(u.endpoint_id, { ...u });
    for (const id of staged.remove) if (this.current.has(id)) this.removes.add(id);
  }

  /** The caller's changes, in order: removals, changes, then additions (so a request can swap two paths). */
  apply(request: PlanRequest): this {
    for (const id of request.remove ?? []) this.remove(id);
    for (const { endpoint_id, ...patch } of request.update ?? []) this.update(endpoint_id, patch);
    for (const input of request.add ?? []) this.add(input);
    const count = this.current.size - this.removes.size + this.adds.size;
    if (count > MAX_ENDPOINTS) {
      throw new ValidationError(`A listing can have at most ${MAX_ENDPOINTS} endpoints (this makes ${count}).`, {
        details: { field: 'endpoints', limit: MAX_ENDPOINTS },
      });
    }
    return this;
  }

  changes(): RevisionChanges {
    return { add: [...this.adds.values()], update: [...this.updates.values()], remove: [...this.removes] };
  }

  /** The endpoints once the plan applies, and those it (or an announced removal) takes away (`removing`). */
  projected(): { endpoint_id: string; method: string; path: string; removing: boolean }[] {
    const head = (e: { method: string; path: string }) => ({ method: e.method, path: e.path });
    return [
      ...[...this.current.values()].map((e) => ({
        endpoint_id: e.id,
        ...head(e),
        removing: this.removes.has(e.id) || e.sunsetAt != null,
      })),
      ...[...this.adds.values()].map((a) => ({ endpoint_id: a.endpoint_id, ...head(a), removing: false })),
    ];
  }

  isEmpty(): boolean {
    return this.adds.size === 0 && this.updates.size === 0 && this.removes.size === 0;
  }

  /** The endpoint (current or staged) that holds a method and path once the plan applies, if any. */
  private holder(key: string, except?: string): { id: string; staged: boolean } | undefined {
    for (const a of this.adds.values())
      if (a.endpoint_id !== except && keyOf(a) === key) return { id: a.endpoint_id, staged: true };
    for (const e of this.current.values()) {
      if (e.id !== except && keyOf(e) === key && !e.sunsetAt) return { id: e.id, staged: false };
    }
    return undefined;
  }

  private add(input: EndpointInput & { operation_id?: string | null }): void {
    const key = keyOf(input);
    const holder = this.holder(key);
    const fields = fieldsOf(input);
    if (holder && !holder.staged && this.removes.has(holder.id)) {
      // Removing and adding the same method and path keeps the endpoint (its id, price and history).
      this.removes.delete(holder.id);
      this.mergeUpdate(holder.id, fields);
      return;
    }
    if (holder) {
      throw new ConflictError(`${key} is already an endpoint of this API (${holder.id}); change that one instead.`, {
        details: { field: 'path', endpoint_id: holder.id },
      });
    }
    const staged: StagedEndpoint = {
      endpoint_id: newId('endpoint'),
      method: input.method,
      path: input.path,
      summary: input.summary ?? null,
      operation_id: input.operation_id ?? null,
      input_schema: input.input_schema ?? null,
      output_schema: input.output_schema ?? null,
      price_cents: input.price_cents ?? 0,
    };
    this.adds.set(staged.endpoint_id, staged);
    this.outcome.added.push(staged.endpoint_id);
  }

  private update(id: string, patch: EndpointPatchBody & { operation_id?: string | null }): void {
    const { method, path, ...rest } = patch;
    const fields = fieldsOf(rest);
    const staged = this.adds.get(id);
    const existing = this.current.get(id);
    if ((!staged && !existing) || this.removes.has(id)) {
      throw new NotFoundError(`No endpoint ${id} on this API.`, { details: { field: 'endpoint_id' } });
    }
    const from = (staged ?? existing)!;
    const moved = { method: method ?? from.method, path: path ?? from.path };
    if (keyOf(moved) === keyOf(from)) {
      if (staged) Object.assign(staged, fields);
      else this.mergeUpdate(id, fields);
      if (!this.outcome.added.includes(id)) this.outcome.updated.push(id);
      return;
    }
    if (existing?.sunsetAt) {
      throw new ConflictError(`${keyOf(existing)} is being removed; add the new method and path instead.`, {
        details: { field: 'path', endpoint_id: id },
      });
    }
    // A new method or path is a new endpoint: the old one is removed, the new one keeps its price and fields.
    const projected = staged ?? {
      ...projectUpdate(existing!, this.updates.get(id)),
      price_cents: existing!.priceCents,
    };
    this.remove(id);
    this.add({ ...projected, ...fields, ...moved, price_cents: projected.price_cents });
  }

  private remove(id: string): void {
    if (this.adds.delete(id)) {
      this.outcome.added = this.outcome.added.filter((a) => a !== id);
      return;
    }
    const existing = this.current.get(id);
    if (!existing) throw new NotFoundError(`No endpoint ${id} on this API.`, { details: { field: 'endpoint_id' } });
    this.updates.delete(id);
    this.removes.add(id);
    this.outcome.removed.push(id);
  }

  private mergeUpdate(id: string, fields: Fields): void {
    this.updates.set(id, { ...this.updates.get(id), ...fields, endpoint_id: id });
  }
}

/** The fields given (undefined ones are left out, so they do not change). */
function fieldsOf(input: Fields & Record<string, unknown>): Fields {
  const out: Fields = {};
  if (input.summary !== undefined) out.summary = input.summary;
  if (input.operation_id !== undefined) out.operation_id = input.operation_id;
  if (input.input_schema !== undefined) out.input_schema = input.input_schema;
  if (input.output_schema !== undefined) out.output_schema = input.output_schema;
  return out;
}

/** An existing endpoint with a staged change laid over it, in the staged shape. */
export function projectUpdate(e: IEndpoint, update?: StagedUpdate): Omit<StagedEndpoint, 'price_cents'> {
  return {
    endpoint_id: e.id,
    method: e.method,
    path: e.path,
    summary: update?.summary !== undefined ? update.summary : (e.summary ?? null),
    operation_id: update?.operation_id !== undefined ? update.operation_id : (e.operationId ?? null),
    input_schema: update?.input_schema !== undefined ? update.input_schema : (e.inputSchema ?? null),
    output_schema: update?.output_schema !== undefined ? update.output_schema : (e.outputSchema ?? null),
  };
}
