// Planning endpoint changes (core/providers/endpoint-plan.ts): the change set a draft applies or a live listing's
// revision holds, and the refusals that name their field.
import { describe, expect, it } from 'vitest';
import type { IEndpoint } from '../../db/entities/index.js';
import { ConflictError, NotFoundError, ValidationError } from '../../core/errors.js';
import { EndpointPlan } from '../../core/providers/endpoint-plan.js';

function endpoint(id: string, method: string, path: string, extra: Partial<IEndpoint> = {}): IEndpoint {
  return { id, method, path, summary: null, priceCents: 5, sunsetAt: null, ...extra } as unknown as IEndpoint;
}

const current = () => [endpoint('ep_a', 'GET', '/a'), endpoint('ep_b', 'GET', '/b')];

describe('EndpointPlan', () => {
  it('changes fields in place and treats a new path as a removal plus an addition at the same price', () => {
    const plan = new EndpointPlan(current()).apply({
      update: [
        { endpoint_id: 'ep_a', summary: 'A' },
        { endpoint_id: 'ep_b', path: '/b2', summary: 'B' },
      ],
    });
    const changes = plan.changes();
    expect(changes.update).toEqual([{ endpoint_id: 'ep_a', summary: 'A' }]);
    expect(changes.remove).toEqual(['ep_b']);
    expect(changes.add).toEqual([
      expect.objectContaining({ method: 'GET', path: '/b2', summary: 'B', price_cents: 5 }),
    ]);
    expect(plan.outcome).toEqual({ added: [changes.add[0]!.endpoint_id], updated: ['ep_a'], removed: ['ep_b'] });
  });

  it('keeps an endpoint whose removal is staged when its method and path are added again', () => {
    const plan = new EndpointPlan(current(), { add: [], update: [], remove: ['ep_b'] });
    plan.apply({ add: [{ method: 'GET', path: '/b', summary: 'back' }] });
    expect(plan.changes()).toEqual({ add: [], update: [{ endpoint_id: 'ep_b', summary: 'back' }], remove: [] });
  });

  it('drops a staged addition that is removed, and is empty then', () => {
    const plan = new EndpointPlan(current()).apply({ add: [{ method: 'POST', path: '/c' }] });
    const id = plan.changes().add[0]!.endpoint_id;
    const again = new EndpointPlan(current(), plan.changes()).apply({ remove: [id] });
    expect(again.isEmpty()).toBe(true);
  });

  it('lets an announced removal be added again (the writer withdraws it)', () => {
    const announced = [endpoint('ep_a', 'GET', '/a', { sunsetAt: new Date() })];
    const plan = new EndpointPlan(announced).apply({ add: [{ method: 'GET', path: '/a' }] });
    expect(plan.changes().add).toHaveLength(1);
  });

  it('refuses a taken method and path, an unknown endpoint and too many endpoints, naming the field', () => {
    const taken = () => new EndpointPlan(current()).apply({ add: [{ method: 'GET', path: '/a' }] });
    expect(taken).toThrow(ConflictError);
    try {
      taken();
    } catch (err) {
      expect((err as ConflictError).details).toEqual({ field: 'path', endpoint_id: 'ep_a' });
    }
    const unknown = () => new EndpointPlan(current()).apply({ update: [{ endpoint_id: 'ep_x', summary: 'x' }] });
    expect(unknown).toThrow(NotFoundError);
    const many = Array.from({ length: 499 }, (_, i) => ({ method: 'GET', path: `/n${i}` }) as const);
    expect(() => new EndpointPlan(current()).apply({ add: many })).toThrow(ValidationError);
  });
});
