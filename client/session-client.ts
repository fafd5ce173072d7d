/**
 * The typed client API: start sessions, talk to them and read their state. The `loopwright`
 * command line is built on it, and programs can use it the same way.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { UpdateDefinition } from '@temporalio/common';
import { DEFAULT_TASK_QUEUE } from '../common/defaults';
import type { ChatMessage } from '../common/messages';
import type { BudgetChange, BudgetState, CompactionRecord, OfferedToolSummary, SessionInput, SessionResult, SessionState, TurnResult } from '../common/session-types';
import { AGENT_ATTRIBUTE, BUNDLE_ATTRIBUTE, SESSION_SEARCH_ATTRIBUTES, STATUS_ATTRIBUTE, TOKENS_ATTRIBUTE, TURNS_ATTRIBUTE } from '../common/search-attributes';
import {
  approveUpdate,
  awaitTurnUpdate,
  budgetUpdate,
  compactUpdate,
  refreshToolsUpdate,
  denyUpdate,
  extendUpdate,
  endSignal,
  interruptSignal,
  SESSION_WORKFLOW,
  sendUpdate,
  stateQuery,
  transcriptPageQuery,
  BUDGET_MEMO,
} from '../common/contract/session-definitions';
import { findTurnEnd, readTranscript, type TurnEnd, whileLoading } from './turn-history';
import { type FollowOptions, followTurn, type SessionEvent } from './session-events';
import { sessionInput } from './session-input';
import { workflowResult } from './workflow-result';
import { checkMessageSize, continuedTurn, rejection, serverDeadline, SessionRejectedError, unprocessedUpdate } from './session-errors';

export { SessionRejectedError } from './session-errors';
import { BatchHandle, startBatch, type StartBatchOptions } from './batch-client';
import { LoopwrightSchedules } from './schedule-client';

/** How long the client keeps following a session that is moving to a new run before giving up. */
const FOLLOW_TIMEOUT_MS = 60_000;

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

/**
 * One session: send messages, interrupt, end, and read its state. Every call goes to the session's
 * latest run, so a session that continued as new is followed without the caller noticing.
 */
export class SessionHandle {
  constructor(
    readonly workflow: WorkflowHandle,
    /** The Temporal client this handle talks through. */
    private readonly client: Client,
  ) {}

  get workflowId(): string {
    return this.workflow.workflowId;
  }

  /**
   * Run a turn and wait for its result. Rejected (SessionRejectedError) with `busy` while another
   * turn runs, and before anything is sent when the message is larger than a session takes. A turn
   * that goes on in the session's next run is followed there.
   *
   * The message goes to one run, named by its id, under one update id: Temporal drops a repeated
   * update only within a run, and the client repeats a call that failed in transit (a history host
   * or the frontend lost), so a repeat that reached the session's next run would start the turn
   * again. Sent to a run that has ended, it gets that run's answer if the run took it, else "already
   * completed", and then, only then, it goes to the newest run.
   */
  async send(message: string): Promise<TurnResult> {
    checkMessageSize(message);
    const deadline = Date.now() + FOLLOW_TIMEOUT_MS;
    const updateId = randomUUID();
    for (;;) {
      try {
        return await this.updateOneRun(sendUpdate, [message], updateId, deadline);
      } catch (err) {
        const moved = continuedTurn(err);
        if (moved === undefined) throw rejection(err);
        if (moved.turn !== undefined) return this.awaitTurn(moved.turn);
        // The run was handing over and did not take the message: send it to the next run.
        if (Date.now() > deadline) throw rejection(err);
        await sleep(50);
      }
    }
  }

  /** The result of turn `turn` once it has finished, following the session across runs. */
  async awaitTurn(turn: number): Promise<TurnResult> {
    const deadline = Date.now() + FOLLOW_TIMEOUT_MS;
    for (;;) {
      try {
        const result = await this.workflow.executeUpdate(awaitTurnUpdate, { args: [turn] });
        if (!result.responseOmitted) return result;
        const last = (await this.messages(result.messageRange.to - 1, result.messageRange.to))[0];
        const { responseOmitted: _omitted, ...rest } = result;
        return { ...rest, response: last?.role === 'assistant' ? last.content : null };
      } catch (err) {
        if (Date.now() > deadline) throw rejection(err);
        // A server too busy to answer in time: ask again (waiting for a turn changes nothing).
        if (serverDeadline(err)) continue;
        if (continuedTurn(err) === undefined) throw rejection(err);
        // The turn moved on to a newer run (which may not have started yet).
        await sleep(50);
      }
    }
  }

  /**
   * Run an update of the session; its refusal becomes a SessionRejectedError. Like `send`, it goes
   * to one run under one update id (`updateOneRun`): a budget raise or an approval the client
   * repeated in transit is never applied in two runs.
   */
  private async update<R, A extends unknown[]>(definition: UpdateDefinition<R, A>, args: A): Promise<R> {
    try {
      return await this.updateOneRun(definition, args, randomUUID(), Date.now() + FOLLOW_TIMEOUT_MS);
    } catch (err) {
      throw rejection(err);
    }
  }

  /**
   * One update to the session's current run, named by its id, under `updateId`; to the newest run
   * only once that run has ended without taking it (else its answer would have come back). A call
   * the server answered with its deadline is made again to the same run under the same id. Any other
   * failure is thrown as it came.
   */
  private async updateOneRun<R, A extends unknown[]>(definition: UpdateDefinition<R, A>, args: A, firstUpdateId: string, deadline: number): Promise<R> {
    let runId = (await this.workflow.describe()).runId;
    let updateId = firstUpdateId;
    for (;;) {
      try {
        // The overloads of executeUpdate split on whether there are arguments; both take this shape.
        return await this.client.workflow.getHandle(this.workflowId, runId).executeUpdate(definition as unknown as UpdateDefinition<R, [unknown]>, { args: args as unknown as [unknown], updateId });
      } catch (err) {
        if (Date.now() > deadline) throw err;
        // A server too busy to answer within its deadline may hold the update already: ask the same run
        // again under the same id, which answers for that update rather than making another.
        if (serverDeadline(err)) continue;
        // The server answered for the session that no worker processed the update (it came in a
        // workflow task the worker completed without it): nothing was applied, and that answer is
        // final for this id, so the update is made again under a new one.
        if (unprocessedUpdate(err)) {
          updateId = randomUUID();
          await sleep(100);
          continue;
        }
        if (err instanceof WorkflowNotFoundError) {
          const newest = (await this.workflow.describe()).runId;
          if (newest !== runId) {
            runId = newest;
            continue;
          }
        }
        throw err;
      }
    }
  }

  /**
   * The turn `options.turn` (default: the running one, else the next) as events while it runs: the
   * reply's text as it is written, tool calls, iterations, compactions, approvals, its end. Works
   * from any process with a client of the session's namespace. See session-events.ts.
   */
  follow(options: FollowOptions = {}): AsyncGenerator<SessionEvent> {
    return followTurn(this, this.client, options);
  }

  /** Cancel the model or tool call in flight; the turn ends `interrupted`. */
  interrupt(reason?: string): Promise<void> {
    return this.workflow.signal(interruptSignal, reason);
  }

  /** Let a tool call that waits for approval run (every waiting call when `callId` is omitted); returns the ids approved. */
  async approve(callId?: string): Promise<string[]> {
    return this.update(approveUpdate, [callId ?? null]);
  }

  /** Refuse a tool call that waits for approval (every waiting call when `callId` is omitted); the model sees `reason`. */
  async deny(callId?: string, reason?: string): Promise<string[]> {
    return this.update(denyUpdate, [callId ?? null, ...(reason ? [reason] : [])] as [string | null, string?]);
  }

  /** Raise the running turn's iteration limit by `n` (default: the session's limit); returns the new limit. */
  async extend(n?: number): Promise<number> {
    return this.update(extendUpdate, [n ?? null]);
  }

  /**
   * Compact the model's view of the transcript now (the transcript keeps every message); returns
   * what the compaction did, or null when there was nothing to compact. Rejected
   * (SessionRejectedError) while a turn runs.
   */
  async compact(): Promise<CompactionRecord | null> {
    return this.update(compactUpdate, []);
  }

  /**
   * List the session's tools again (after a change to `.mcp.json` or the worker's tools, or a
   * server that came back) and return them. Rejected (SessionRejectedError) while a turn runs.
   */
  async refreshTools(): Promise<OfferedToolSummary[]> {
    return this.update(refreshToolsUpdate, []);
  }

  /**
   * Raise the session's budgets by the amounts in `change` (the running turn's token budget too);
   * returns the budgets now. A refusal is a SessionRejectedError.
   */
  async budget(change: BudgetChange): Promise<BudgetState> {
    return this.update(budgetUpdate, [change]);
  }

  /**
   * Return the session to the end of turn `turn` with Temporal's own reset (the Web UI shows it): a
   * new run replays the history up to there, and the later turns' messages are gone from the
   * transcript; no signal or message sent after that point is re-applied. Files written after that
   * point stay on disk. Turn `turn` may have ended in any run of the session, a first message too;
   * resetting a run the session continued from ends the later runs.
   */
  async rewind(turn: number): Promise<{ runId: string }> {
    const client = this.client;
    const { runId, events, ended } = await this.turnEnd(turn);
    const { turn: latest, status } = await this.state();
    if (turn >= latest && status !== 'thinking' && status !== 'executing_tool' && status !== 'waiting_for_approval') {
      throw new SessionRejectedError(`Turn ${turn} is the session's latest turn: there is nothing to rewind`);
    }
    // The next workflow task after the turn ended is where turn `turn + 1` began: reset to it.
    const next = events.slice(ended.index + 1).find((event) => event.workflowTaskCompletedEventAttributes);
    if (!next?.eventId) throw new SessionRejectedError(`Turn ${turn} is the session's latest turn: there is nothing to rewind`);
    const response = await client.workflowService.resetWorkflowExecution({
      namespace: client.options.namespace,
      workflowExecution: { workflowId: this.workflowId, runId },
      reason: `loopwright rewind to the end of turn ${turn}`,
      workflowTaskFinishEventId: next.eventId,
      requestId: randomUUID(),
      resetReapplyExcludeTypes: [temporal.api.enums.v1.ResetReapplyExcludeType.RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL, temporal.api.enums.v1.ResetReapplyExcludeType.RESET_REAPPLY_EXCLUDE_TYPE_UPDATE],
    });
    return { runId: response.runId ?? '' };
  }

  /** Where turn `turn` ended, in any run of the session (see `findTurnEnd`); a SessionRejectedError when it did not. */
  async turnEnd(turn: number): Promise<TurnEnd> {
    const found = await findTurnEnd(this.client, this.workflow, turn);
    if (!found) throw new SessionRejectedError(`Turn ${turn} did not end in any run of the session (it may still be running, or not have started)`);
    return found;
  }

  /** Complete the session after the current turn. */
  end(): Promise<void> {
    return this.workflow.signal(endSignal);
  }

  state(): Promise<SessionState> {
    return this.workflow.query(stateQuery);
  }

  /**
   * Messages `[from, to)` of the transcript (default: all), read page by page so that no answer is
   * larger than a payload may be. After a continue-as-new the transcript is the same: a run starts
   * with the whole transcript of the run before it.
   */
  async messages(from = 0, to?: number): Promise<ChatMessage[]> {
    return readTranscript(this.client, this.workflow, from, to);
  }

  /** The messages of one turn (its user message, then assistant and tool messages). */
  turnMessages(result: Pick<TurnResult, 'messageRange'>): Promise<ChatMessage[]> {
    return this.messages(result.messageRange.from, result.messageRange.to);
  }

  /** Wait for the session to end, through a server's brief outage (client/workflow-result.ts). */
  result(): Promise<SessionResult> {
    return workflowResult<SessionResult>(this.workflow);
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
