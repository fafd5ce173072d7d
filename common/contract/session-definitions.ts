/**
 * Signals, queries and updates of the session workflow: the contract between the workflow, the
 * activities that query it (the transcript's pages) and its clients, so every side agrees on names
 * and types. Pure definitions: the workflow sandbox imports them too.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ChatMessage } from '../messages';
import type { BudgetChange, BudgetState, CompactionRecord, OfferedToolSummary, PendingApproval, SessionState, TurnResult } from '../session-types';
import type { TranscriptPage } from '../transcript';

/** Cancel the model or tool call in flight; the turn ends `interrupted` and the session waits for the next message. */
export const interruptSignal = defineSignal<[reason?: string]>('interrupt');

/** Complete the session after the current turn (at once when idle). */
export const endSignal = defineSignal('end');

/** Status, turn, iteration, running tools and token usage. */
export const stateQuery = defineQuery<SessionState>('state');

/**
 * The transcript from an index (`messages(from)`), for small transcripts: it fails, saying so, when
 * the answer would be too large for one payload. Use `transcriptPage` for anything else.
 */
export const messagesQuery = defineQuery<ChatMessage[], [from?: number]>('messages');

/**
 * One page of the transcript: messages from `from` (up to `to`), at most `maxBytes` of JSON (default
 * and cap 384 KB; always at least one message), with the total count and the chain hash after the page.
 */
export const transcriptPageQuery = defineQuery<TranscriptPage, [from: number, maxBytes?: number, to?: number]>('transcriptPage');

/**
 * Run one turn for a user message and return its result. Rejected when empty, too large, or while a
 * turn runs (`busy`). When the run continues as new mid-turn, it fails with type
 * `LoopwrightContinuedAsNew` and `details[0].turn`: collect the result with `awaitTurn`.
 */
export const sendUpdate = defineUpdate<TurnResult, [message: string]>('send');

/** Wait for turn `turn` to finish (in this run or an earlier one) and return its result. */
export const awaitTurnUpdate = defineUpdate<TurnResult, [turn: number]>('awaitTurn');

/** Name of the session workflow type, as registered by the worker. */
export const SESSION_WORKFLOW = 'agentSession';

/** Let tool call `callId` run (all pending calls when null or omitted); returns the call ids approved. Rejected when none waits. */
export const approveUpdate = defineUpdate<string[], [callId: string | null]>('approve');

/** Refuse tool call `callId` (all pending when null or omitted), with a reason the model sees; returns the call ids denied. */
export const denyUpdate = defineUpdate<string[], [callId: string | null, reason?: string]>('deny');

/** Raise the running turn's iteration limit by `n` (null or omitted: by the session's limit); returns the new limit. */
export const extendUpdate = defineUpdate<number, [n: number | null]>('extend');

/** Compact the model's view of the transcript now (refused while a turn runs); returns what it did, null when there was nothing to compact. */
export const compactUpdate = defineUpdate<CompactionRecord | null, []>('compact');
/** List the session's tools again (a changed `.mcp.json`, a server that came back); returns them. Refused while a turn runs. */
export const refreshToolsUpdate = defineUpdate<OfferedToolSummary[], []>('refreshTools');

/** Raise the session's budgets by the given amounts (the running turn's too); returns the budgets now. */
export const budgetUpdate = defineUpdate<BudgetState, [change: BudgetChange]>('budget');

/** What the transcript queries answer while a new run pages its transcript in; clients ask again. */
export const TRANSCRIPT_LOADING = 'The session is moving to a new run and its transcript is still loading; ask again in a moment';

/**
 * Memo key a session upserts when a turn that no `send` update answers ends (a first message, a
 * turn resumed in a new run): `{ turn, messageRange, status }`, so its end can be found in history.
 */
export const TURN_END_MEMO = 'loopwrightTurnEnd';

/** Memo key a session with budgets upserts when they change after a turn: the BudgetState, for `list`. */
export const BUDGET_MEMO = 'loopwrightBudget';

/**
 * Delegation: a child session tells its parent which of its tool calls wait for approval (its whole
 * list, sent whenever it changes), so the parent's `state` shows them and its `approve` and `deny`
 * reach them. Sent by sessions, not clients.
 */
export const childApprovalsSignal = defineSignal<[report: { workflowId: string; agent: string; approvals: PendingApproval[] }]>('childApprovals');

/** Delegation: the parent forwards a decision on calls of a child session (the child's own call ids). Sent by sessions, not clients. */
export const decideApprovalsSignal = defineSignal<[callIds: string[], approved: boolean, reason?: string]>('decideApprovals');
