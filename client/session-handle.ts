/**
 * One session's handle: send messages, interrupt, end, and read its state, following the session
 * across its runs. Made by `LoopwrightClient` (session-client.ts), which re-exports it.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { UpdateDefinition } from '@temporalio/common';
import type { ChatMessage } from '../common/messages';
import type { BudgetChange, BudgetState, CompactionRecord, OfferedToolSummary, SessionResult, SessionState, TurnResult } from '../common/session-types';
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
  sendUpdate,
  stateQuery,
} from '../common/contract/session-definitions';
import { findTurnEnd, readTranscript, type TurnEnd } from './turn-history';
import { type FollowOptions, followTurn, type SessionEvent } from './session-events';
import { workflowResult } from './workflow-result';
import { checkMessageSize, continuedTurn, rejection, serverDeadline, SessionRejectedError, unprocessedUpdate, workflowTaskFailed } from './session-errors';

/** How long the client keeps following a session that is moving to a new run before giving up. */
const FOLLOW_TIMEOUT_MS = 60_000;

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
        // A server too busy to answer in time: ask again (waiting for a turn changes nothing); so too
        // when the workflow task that carried the question failed.
        if (serverDeadline(err)) continue;
        if (workflowTaskFailed(err)) {
          await sleep(100);
          continue;
        }
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
   * the server answered with its deadline, or with the failure of the workflow task that carried it,
   * is made again to the same run under the same id. Any other failure is thrown as it came.
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
        // The workflow task that carried it failed (a history host lost, say): the server dropped the
        // update; the same id again is taken once.
        if (workflowTaskFailed(err)) {
          await sleep(100);
          continue;
        }
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
