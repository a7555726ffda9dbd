/**
 * The one door to Temporal for the control plane: starts and signals workflows by business id, and reports health.
 * Routes never talk to Temporal directly. The connection is lazy, so a process that never starts a workflow (the
 * gateway) pays nothing, and a Temporal outage does not stop a process from booting.
 */
import { Client, Connection, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { TypedSearchAttributes } from '@temporalio/common';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client/index.js';
import { tracingOn } from '../tracing.js';
import type { Logger } from '../logger.js';
import { ConflictError } from '../errors.js';
import {
  QUERIES,
  SEARCH_ATTRIBUTES,
  SIGNALS,
  WORKFLOW_TYPES,
  workflowIds,
  type AccountUpdate,
  type BillingCycleInput,
  type BillingCycleResult,
  type CatalogRollupsResult,
  type ConnectOnboardingInput,
  type EndpointRemovalInput,
  type PaymentSettled,
  type PriceChangeInput,
  type PublishInput,
  type PublishResult,
  type SignupCreditsInput,
  type SignupCreditsResult,
  type SignupCreditsStatus,
  type UsagePartitionsResult,
} from './contracts.js';
import { ensureRecurringSchedules } from './recurring-schedules.js';

/** Which listing a run concerns, for operators' filters (`ApiSlug = "weather"`, `OrgId = "org_…"`). */
export interface ApiRunAttributes {
  apiSlug: string;
  /** The provider's org. */
  orgId: string;
}

function apiSearchAttributes(attrs: ApiRunAttributes): TypedSearchAttributes {
  return new TypedSearchAttributes([
    { key: SEARCH_ATTRIBUTES.apiSlug, value: attrs.apiSlug },
    { key: SEARCH_ATTRIBUTES.orgId, value: attrs.orgId },
  ]);
}

function orgSearchAttributes(orgId: string): TypedSearchAttributes {
  return new TypedSearchAttributes([{ key: SEARCH_ATTRIBUTES.orgId, value: orgId }]);
}

export interface TemporalTarget {
  address: string;
  namespace: string;
  taskQueue: string;
}

export class TemporalService {
  readonly connection: Connection;
  readonly client: Client;
  /**
   * Health probes use their own connection without the retry interceptor: one attempt under a deadline. With the
   * default interceptor a probe against a down server keeps retrying in the background after the probe gave up.
   */
  private readonly probeConnection: Connection;

  constructor(
    readonly target: TemporalTarget,
    private readonly logger: Logger,
  ) {
    this.connection = Connection.lazy({ address: target.address, connectTimeout: '3s' });
    // Tracing on (platform/tracing.ts): starts and signals carry the caller's trace into the workflow's headers.
    this.client = new Client({
      connection: this.connection,
      namespace: target.namespace,
      ...(tracingOn() ? { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } } : {}),
    });
    this.probeConnection = Connection.lazy({ address: target.address, connectTimeout: '2s', interceptors: [] });
  }

  /** Start the hold on a signup's trial credit. Idempotent: an already running hold is left as it is. */
  async startSignupCredits(input: SignupCreditsInput): Promise<{ workflowId: string; started: boolean }> {
    // One hold per org, ever: a finished hold is not restarted (the ledger key is the second guard).
    return this.startOrgWorkflow(WORKFLOW_TYPES.signupCredits, workflowIds.signupCredits, input, 'REJECT_DUPLICATE');
  }

  /**
   * Release an org's trial credit: signal its hold that the email is verified, starting the hold first if it was
   * never started (Temporal was unreachable at signup). A hold that already ended (granted or lapsed) is left alone.
   * Returns whether a running (or newly started) hold received the signal.
   */
  async releaseSignupCredits(input: SignupCreditsInput): Promise<boolean> {
    try {
      await this.client.workflow.signalWithStart(WORKFLOW_TYPES.signupCredits, {
        workflowId: workflowIds.signupCredits(input.orgId),
        taskQueue: this.target.taskQueue,
        args: [input],
        signal: SIGNALS.emailVerified,
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: orgSearchAttributes(input.orgId),
      });
      return true;
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
      throw err;
    }
  }

  /** Wait (bounded) for an org's hold to finish; undefined when it is still running after `timeoutMs`. */
  async waitForSignupCredits(orgId: string, timeoutMs: number): Promise<SignupCreditsResult | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), timeoutMs);
    });
    try {
      return await Promise.race([this.signupCreditsResult(orgId), timeout]);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Tell the hold that the email is verified. Returns false when no hold exists for the org (or it has ended). */
  async signalEmailVerified(orgId: string): Promise<boolean> {
    try {
      await this.client.workflow.getHandle(workflowIds.signupCredits(orgId)).signal(SIGNALS.emailVerified);
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  async signupCreditsStatus(orgId: string): Promise<SignupCreditsStatus | null> {
    try {
      return await this.client.workflow
        .getHandle(workflowIds.signupCredits(orgId))
        .query<SignupCreditsStatus>(QUERIES.signupCreditsStatus);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return null;
      throw err;
    }
  }

  async signupCreditsResult(orgId: string): Promise<SignupCreditsResult> {
    return this.client.workflow.getHandle(workflowIds.signupCredits(orgId)).result() as Promise<SignupCreditsResult>;
  }

  /**
   * Run a listing lifecycle step (verify, publish, unpublish) as `publish:{apiId}` and wait up to `waitMs` for its
   * result, so the routes stay synchronous. Only one run per listing at a time: a second request while one runs is a
   * 409. When the wait ends first, the caller gets the run's ids (the run carries on).
   */
  async runPublish(
    input: PublishInput,
    waitMs: number,
    attrs: ApiRunAttributes,
  ): Promise<
    { done: true; result: PublishResult } | { done: false; workflow_id: string; run_id: string; status: 'running' }
  > {
    const workflowId = workflowIds.publish(input.apiId);
    let handle;
    try {
      handle = await this.client.workflow.start(WORKFLOW_TYPES.verifyAndPublish, {
        workflowId,
        taskQueue: this.target.taskQueue,
        args: [input],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
        typedSearchAttributes: apiSearchAttributes(attrs),
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        throw new ConflictError('A verify, publish or unpublish of this API is already running; try again shortly.', {
          details: { workflow_id: workflowId },
        });
      }
      throw err;
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), waitMs);
    });
    try {
      const result = await Promise.race([handle.result() as Promise<PublishResult>, timeout]);
      if (result) return { done: true, result };
      return { done: false, workflow_id: workflowId, run_id: handle.firstExecutionRunId, status: 'running' };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Schedule (or reschedule: a running schedule for the same endpoint is replaced) a price increase. */
  schedulePriceChange(input: PriceChangeInput, attrs: ApiRunAttributes): Promise<{ workflowId: string }> {
    const workflowId = workflowIds.priceChange(input.apiId, input.endpointId);
    return this.replaceTimer(WORKFLOW_TYPES.priceChange, workflowId, input, attrs);
  }

  /** Cancel a scheduled price increase; true when a running schedule was cancelled. */
  cancelPriceChange(apiId: string, endpointId: string): Promise<boolean> {
    return this.cancelTimer(workflowIds.priceChange(apiId, endpointId));
  }

  /**
   * Schedule an announced endpoint removal (endpointRemovalWorkflow, `removal:{apiId}:{endpointId}`): a running
   * schedule for the same endpoint is replaced.
   */
  scheduleEndpointRemoval(input: EndpointRemovalInput, attrs: ApiRunAttributes): Promise<{ workflowId: string }> {
    const workflowId = workflowIds.endpointRemoval(input.apiId, input.endpointId);
    return this.replaceTimer(WORKFLOW_TYPES.endpointRemoval, workflowId, input, attrs);
  }

  /** Withdraw an announced removal; true when a running schedule was cancelled. */
  cancelEndpointRemoval(apiId: string, endpointId: string): Promise<boolean> {
    return this.cancelTimer(workflowIds.endpointRemoval(apiId, endpointId));
  }

  /** Start a listing's durable timer (a price change, a removal), replacing one already running under its id. */
  private async replaceTimer(
    type: string,
    workflowId: string,
    input: PriceChangeInput | EndpointRemovalInput,
    attrs: ApiRunAttributes,
  ): Promise<{ workflowId: string }> {
    await this.client.workflow.start(type, {
      workflowId,
      taskQueue: this.target.taskQueue,
      args: [input],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      workflowIdConflictPolicy: 'TERMINATE_EXISTING',
      typedSearchAttributes: apiSearchAttributes(attrs),
    });
    return { workflowId };
  }

  /** Cancel a running timer; true when one was running. */
  private async cancelTimer(workflowId: string): Promise<boolean> {
    try {
      await this.client.workflow.getHandle(workflowId).cancel();
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  /** Start waiting for a provider's Connect onboarding to complete (idempotent while one is running). */
  async startConnectOnboarding(input: ConnectOnboardingInput): Promise<{ workflowId: string; started: boolean }> {
    return this.startOrgWorkflow(WORKFLOW_TYPES.connectOnboarding, workflowIds.connect, input, 'ALLOW_DUPLICATE');
  }

  /** Forward Stripe's account.updated to the org's onboarding; false when none is running. */
  async signalAccountUpdated(orgId: string, update: AccountUpdate): Promise<boolean> {
    try {
      await this.client.workflow.getHandle(workflowIds.connect(orgId)).signal(SIGNALS.accountUpdated, update);
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  /** Ask for an auto-reload of the org (signal-with-start: one reload at a time per org). */
  async requestAutoReload(orgId: string): Promise<void> {
    await this.client.workflow.signalWithStart(WORKFLOW_TYPES.autoReload, {
      workflowId: workflowIds.autoReload(orgId),
      taskQueue: this.target.taskQueue,
      args: [{ orgId }],
      signal: SIGNALS.reloadRequested,
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      typedSearchAttributes: orgSearchAttributes(orgId),
    });
  }

  /** Tell the workflow waiting on a charge how it settled; false when none is waiting. */
  async signalPaymentSettled(
    payment: { id: string; kind: string; org: { id: string } },
    outcome: { succeeded: boolean; reason?: string },
  ): Promise<boolean> {
    const workflowId =
      payment.kind === 'auto_reload'
        ? workflowIds.autoReload(payment.org.id)
        : payment.kind === 'usage_charge'
          ? workflowIds.usageCharge(payment.org.id)
          : undefined;
    if (!workflowId) return false;
    try {
      const settled: PaymentSettled = { paymentId: payment.id, ...outcome };
      await this.client.workflow.getHandle(workflowId).signal(SIGNALS.paymentSettled, settled);
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  /** Create the recurring schedules if they do not exist yet (idempotent; called at worker start). */
  async ensureSchedules(): Promise<string[]> {
    return ensureRecurringSchedules(this.client, this.target.taskQueue);
  }

  /** Run the books check now (as the schedule would) and return its report. */
  async reconcileNow(workflowId = `reconcile:${Date.now()}`): Promise<unknown> {
    return this.client.workflow.execute(WORKFLOW_TYPES.reconcileBooks, {
      workflowId,
      taskQueue: this.target.taskQueue,
      args: [],
    });
  }

  /** Run the catalog rollups now (as the schedule would: tests, operators) and wait for the report. */
  async runRollupsNow(workflowId = `catalog-rollups:manual:${randomUUID()}`): Promise<CatalogRollupsResult> {
    return this.client.workflow.execute<() => Promise<CatalogRollupsResult>>(WORKFLOW_TYPES.catalogRollups, {
      workflowId,
      taskQueue: this.target.taskQueue,
      args: [],
    });
  }

  /** Run the usage partition maintenance now (as the schedule would: tests, operators) and wait for the report. */
  async runUsagePartitionsNow(workflowId = `usage-partitions:manual:${randomUUID()}`): Promise<UsagePartitionsResult> {
    return this.client.workflow.execute<() => Promise<UsagePartitionsResult>>(WORKFLOW_TYPES.usagePartitions, {
      workflowId,
      taskQueue: this.target.taskQueue,
      args: [],
    });
  }

  /** Run a billing cycle now (operators, tests) and wait for it; its usage charges run on as their own workflows. */
  async runBillingCycle(
    input: BillingCycleInput,
    workflowId = `billing-cycle:${input.reason}:${randomUUID()}`,
  ): Promise<BillingCycleResult> {
    return this.client.workflow.execute<(input: BillingCycleInput) => Promise<BillingCycleResult>>(
      WORKFLOW_TYPES.billingCycle,
      {
        workflowId,
        taskQueue: this.target.taskQueue,
        args: [input],
      },
    );
  }

  /** Health: the frontend answers a cheap RPC within the timeout. */
  async ping(timeoutMs = 2_000): Promise<number> {
    const t = performance.now();
    const probe = this.probeConnection;
    await probe.withDeadline(Date.now() + timeoutMs, () => probe.workflowService.getSystemInfo({}));
    return performance.now() - t;
  }

  /** Start a per-org workflow unless one with its id is running (or, rejecting duplicates, ever ran). */
  private async startOrgWorkflow(
    type: string,
    idOf: (orgId: string) => string,
    input: { orgId: string },
    workflowIdReusePolicy: 'REJECT_DUPLICATE' | 'ALLOW_DUPLICATE',
  ): Promise<{ workflowId: string; started: boolean }> {
    const workflowId = idOf(input.orgId);
    try {
      await this.client.workflow.start(type, {
        workflowId,
        taskQueue: this.target.taskQueue,
        args: [input],
        workflowIdReusePolicy,
        typedSearchAttributes: orgSearchAttributes(input.orgId),
      });
      return { workflowId, started: true };
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return { workflowId, started: false };
      throw err;
    }
  }

  async close(): Promise<void> {
    for (const connection of [this.connection, this.probeConnection]) {
      try {
        await connection.close();
      } catch (err) {
        this.logger.debug({ err }, 'temporal connection close');
      }
    }
  }
}
