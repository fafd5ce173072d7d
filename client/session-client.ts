/**
 * The typed client API: start sessions, talk to them and read their state. The `loopwright`
 * command line is built on it, and programs can use it the same way.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { DEFAULT_TASK_QUEUE } from '../common/defaults';
import type { BudgetState, SessionInput } from '../common/session-types';
import { AGENT_ATTRIBUTE, BUNDLE_ATTRIBUTE, SESSION_SEARCH_ATTRIBUTES, STATUS_ATTRIBUTE, TOKENS_ATTRIBUTE, TURNS_ATTRIBUTE } from '../common/search-attributes';
import { SESSION_WORKFLOW, transcriptPageQuery, BUDGET_MEMO } from '../common/contract/session-definitions';
import { whileLoading } from './turn-history';
import { sessionInput } from './session-input';
import { checkMessageSize, SessionRejectedError } from './session-errors';
import { BatchHandle, startBatch, type StartBatchOptions } from './batch-client';
import { LoopwrightSchedules } from './schedule-client';
import { SessionHandle } from './session-handle';

export { SessionRejectedError } from './session-errors';
export { SessionHandle } from './session-handle';

/** Options of a new session. */
export interface StartSessionOptions extends Omit<SessionInput, 'bundlePath'> {
  /** Bundle folder; made absolute here, since the worker may run elsewhere on this machine. */
  bundlePath: string;
  /** Workflow id (default `loopwright-<agent>-<uuid>`). */
  workflowId?: string;
}

/** Starts and finds sessions on one task queue. */
export class LoopwrightClient {
  constructor(
    readonly client: Client,
    readonly taskQueue: string = DEFAULT_TASK_QUEUE,
  ) {}

  /** Start a session; it initialises the agent and then waits for messages (or runs `firstMessage`). */
  async start(options: StartSessionOptions): Promise<SessionHandle> {
    const { workflowId, ...rest } = options;
    if (options.firstMessage !== undefined) checkMessageSize(options.firstMessage);
    const input: SessionInput = await sessionInput(rest, () => this.hasSearchAttributes());
    const id = workflowId ?? `loopwright-${slug(options.agentId)}-${randomUUID().slice(0, 8)}`;
    const handle = await this.client.workflow.start(SESSION_WORKFLOW, {
      taskQueue: this.taskQueue,
      workflowId: id,
      args: [input],
      // What the Web UI shows in its list and at the top of the session.
      staticSummary: `${options.agentId} · ${path.basename(input.bundlePath)}${options.firstMessage ? ` · ${options.firstMessage.replace(/\s+/g, ' ').slice(0, 60)}` : ''}`,
      staticDetails: `Agent **${options.agentId}** of bundle \`${input.bundlePath}\`${options.oneShot ? ' (one-shot)' : ''}`,
    });
    return new SessionHandle(handle, this.client);
  }

  private searchAttributesKnown: Promise<boolean> | undefined;

  /** Whether the namespace has the Loopwright* search attributes registered (asked once per client). */
  hasSearchAttributes(): Promise<boolean> {
    this.searchAttributesKnown ??= this.client.connection.operatorService.listSearchAttributes({ namespace: this.client.options.namespace }).then(
      (response) => SESSION_SEARCH_ATTRIBUTES.every(({ name }) => name in (response.customAttributes ?? {})),
      // Not allowed to ask (some clouds), or an older server: sessions simply do not upsert them.
      () => false,
    );
    return this.searchAttributesKnown;
  }

  /**
   * Sessions on this namespace, newest first, found by their search attributes (agent, status),
   * with what the list shows. Needs the Loopwright* attributes registered.
   */
  async list(filter: { agent?: string; status?: string; limit?: number } = {}): Promise<SessionSummary[]> {
    // One line per session: the runs a session continued from are left out.
    const clauses = [`WorkflowType = '${SESSION_WORKFLOW}'`, `ExecutionStatus != 'ContinuedAsNew'`];
    if (filter.agent) clauses.push(`${AGENT_ATTRIBUTE.name} = '${quote(filter.agent)}'`);
    if (filter.status) clauses.push(`${STATUS_ATTRIBUTE.name} = '${quote(filter.status)}'`);
    const sessions: SessionSummary[] = [];
    for await (const execution of this.client.workflow.list({ query: clauses.join(' AND ') })) {
      const attributes = execution.typedSearchAttributes;
      sessions.push({
        workflowId: execution.workflowId,
        runId: execution.runId,
        workflowStatus: execution.status.name,
        startTime: execution.startTime,
        agent: attributes.get(AGENT_ATTRIBUTE),
        bundle: attributes.get(BUNDLE_ATTRIBUTE),
        status: attributes.get(STATUS_ATTRIBUTE),
        turns: attributes.get(TURNS_ATTRIBUTE),
        totalTokens: attributes.get(TOKENS_ATTRIBUTE),
        ...(execution.memo?.[BUDGET_MEMO] ? { budget: execution.memo[BUDGET_MEMO] as BudgetState } : {}),
      });
      if (sessions.length >= (filter.limit ?? 100)) break;
    }
    return sessions;
  }

  /**
   * Start a new session whose conversation is the first `turns` turns of session `sourceId` (same
   * bundle, agent and settings). Files the source wrote after that point stay on disk.
   */
  async branch(sourceId: string, turns: number, options: { workflowId?: string } = {}): Promise<SessionHandle> {
    const source = this.session(sourceId);
    const { runId, events, ended } = await source.turnEnd(turns);
    const started = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    if (!started) throw new SessionRejectedError(`Session ${sourceId} has no recorded input to branch from`);
    const sourceInput = this.client.options.loadedDataConverter.payloadConverter.fromPayload(started) as SessionInput;
    const { continued: _c, firstMessage: _f, oneShot: _o, branchFrom: _b, searchAttributes: _s, ...settings } = sourceInput;
    const to = ended.result.messageRange.to;
    // The run the turn ended in holds the transcript up to there (later runs carry it on).
    const page = await whileLoading(() => this.client.workflow.getHandle(sourceId, runId).query(transcriptPageQuery, to - 1, 1, to));
    return this.start({
      ...settings,
      ...(options.workflowId ? { workflowId: options.workflowId } : {}),
      branchFrom: { workflowId: sourceId, runId, to, hash: page.hash, turns },
    });
  }

  /** Start a batch: one one-shot session per line of a JSONL file (batch-client.ts); reattaches to a running batch of that id. `batch(id)`: a handle on one. */
  startBatch(options: StartBatchOptions): Promise<BatchHandle> {
    return startBatch(this, options);
  }
  batch(workflowId: string): BatchHandle {
    return new BatchHandle(this.client.workflow.getHandle(workflowId));
  }
  /** Schedules of one-shot sessions, on Temporal Schedules (schedule-client.ts). */
  get schedules(): LoopwrightSchedules {
    return new LoopwrightSchedules(this);
  }

  /** A handle on an existing session. */
  session(workflowId: string): SessionHandle {
    return new SessionHandle(this.client.workflow.getHandle(workflowId), this.client);
  }
}

/** One line of `LoopwrightClient.list`. */
export interface SessionSummary {
  workflowId: string;
  runId: string;
  /** Temporal's status of the run (RUNNING, COMPLETED, CONTINUED_AS_NEW, ...). */
  workflowStatus: string;
  startTime: Date;
  agent?: string;
  bundle?: string;
  /** The session's own status when it last changed (thinking, waiting_for_user, completed, ...). */
  status?: string;
  turns?: number;
  /** Budgets and their use after the last turn, for sessions that have budgets. */
  budget?: BudgetState;
  totalTokens?: number;
}

function quote(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
}

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 40) || 'agent'
  );
}
