/**
 * The recurring Temporal Schedules the worker makes sure exist at start (TemporalService.ensureSchedules): what each
 * runs, when, and how it catches up after the cluster was down.
 */
import { ScheduleAlreadyRunning, type Client, type ScheduleSpec } from '@temporalio/client';
import { msToNumber } from '@temporalio/common';
import { SCHEDULES, WORKFLOW_TYPES, type BillingCycleInput, type CatalogRollupsInput } from './contracts.js';

export interface RecurringSchedule {
  id: string;
  spec: ScheduleSpec;
  workflowType: string;
  args: unknown[];
  catchupWindow?: string;
  workflowId?: string;
  triggerImmediately?: boolean;
  /** Bring an existing schedule of this id to this spec and action (its definition changed). */
  update?: boolean;
}

export const RECURRING_SCHEDULES: readonly RecurringSchedule[] = [
  {
    id: SCHEDULES.reconcileBooks.id,
    spec: { intervals: [{ every: SCHEDULES.reconcileBooks.every }] },
    workflowType: WORKFLOW_TYPES.reconcileBooks,
    args: [],
  },
  {
    id: SCHEDULES.billingThreshold.id,
    spec: { intervals: [{ every: SCHEDULES.billingThreshold.every }] },
    workflowType: WORKFLOW_TYPES.billingCycle,
    args: [{ reason: 'threshold' } satisfies BillingCycleInput],
  },
  {
    id: SCHEDULES.billingPeriodClose.id,
    spec: { calendars: [SCHEDULES.billingPeriodClose.calendar], timezone: 'UTC' },
    workflowType: WORKFLOW_TYPES.billingCycle,
    args: [{ reason: 'period_end' } satisfies BillingCycleInput],
  },
  {
    id: SCHEDULES.catalogRollups.id,
    spec: { intervals: [{ every: SCHEDULES.catalogRollups.every }] },
    workflowType: WORKFLOW_TYPES.catalogRollups,
    args: [{ loop: SCHEDULES.catalogRollups.loop } satisfies CatalogRollupsInput],
    // Each pass starts from the watermark: a run missed while the cluster was down needs no catching up.
    catchupWindow: '1 minute',
    workflowId: SCHEDULES.catalogRollups.id,
    // The first hourly run starts now, not at the next hour: boards are fresh from the first minute.
    triggerImmediately: true,
    // A deployment made before issue 22 has the 30-second schedule: it is brought to this one.
    update: true,
  },
  {
    id: SCHEDULES.usagePartitions.id,
    spec: { calendars: [SCHEDULES.usagePartitions.calendar], timezone: 'UTC' },
    workflowType: WORKFLOW_TYPES.usagePartitions,
    args: [],
    // Each run looks at the whole calendar: one missed while the cluster was down is made up by the next.
    catchupWindow: '1 day',
    workflowId: SCHEDULES.usagePartitions.id,
  },
  {
    id: SCHEDULES.demandEmailCleanup.id,
    spec: { calendars: [SCHEDULES.demandEmailCleanup.calendar], timezone: 'UTC' },
    workflowType: WORKFLOW_TYPES.demandEmailCleanup,
    args: [],
    // A run missed while the cluster was down is made up (an address must not outlive its week by two days).
    catchupWindow: '1 day',
    workflowId: SCHEDULES.demandEmailCleanup.id,
  },
];

/** Create the recurring schedules if they do not exist yet (idempotent; called at worker start). */
/** Creates the recurring schedules missing (ids returned); an existing one marked `update` is brought up to date. */
export async function ensureRecurringSchedules(client: Client, taskQueue: string): Promise<string[]> {
  const created: string[] = [];
  for (const schedule of RECURRING_SCHEDULES) {
    const action = {
      type: 'startWorkflow' as const,
      workflowType: schedule.workflowType,
      taskQueue,
      args: schedule.args,
      ...(schedule.workflowId ? { workflowId: schedule.workflowId } : {}),
    };
    try {
      await client.schedule.create({
        scheduleId: schedule.id,
        spec: schedule.spec,
        // A run missed while the cluster was down still happens (a month-end charge must not be skipped).
        policies: { catchupWindow: schedule.catchupWindow ?? '7 days', overlap: 'SKIP' },
        action,
        ...(schedule.triggerImmediately ? { state: { triggerImmediately: true } } : {}),
      });
      created.push(schedule.id);
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      if (schedule.update) await updateSchedule(client, schedule.id, schedule.spec, action);
    }
  }
  return created;
}

/** Bring an existing schedule to `spec` and `action` when either differs (a deployment made by an older version). */
async function updateSchedule(
  client: Client,
  id: string,
  spec: ScheduleSpec,
  action: { type: 'startWorkflow'; workflowType: string; taskQueue: string; args: unknown[]; workflowId?: string },
): Promise<void> {
  const handle = client.schedule.getHandle(id);
  const current = await handle.describe();
  const intervals = (s: ScheduleSpec) => (s.intervals ?? []).map((i) => msToNumber(i.every)).join(',');
  const sameArgs =
    current.action.type === 'startWorkflow' && JSON.stringify(current.action.args) === JSON.stringify(action.args);
  if (sameArgs && intervals(current.spec) === intervals(spec)) return;
  await handle.update((prev) => ({ ...prev, spec, action }));
}
