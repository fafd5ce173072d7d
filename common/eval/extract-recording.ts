/**
 * Reading a recorded session from its history: the input from the start event of its first run,
 * the user messages in order (the first message, each accepted `send` update, or in an eval session
 * each `loadEvalTurn` answer), and per turn the model's tool calls matched with their results (a tool
 * activity by its name and arguments, a local activity's marker by its name, an inline read from the
 * model call's result), the approvals decided (`approve` and `deny` updates and the call ids they
 * answered), and the turn's result (a `send` or `awaitTurn` update's answer, the turn-end memo, a
 * one-shot session's result or failure). History is read in Temporal's JSON form (`historyToJSON`,
 * `temporal workflow show --output json`) with its payloads already decoded by the caller's codecs;
 * `decode` turns one payload into its value. Pure: no I/O, no Node built-ins.
 */
import type { TokenUsage, ToolCall, ToolResult } from '../messages';
import type { ModelCallResult } from '../model-call';
import type { SessionInput, SessionResult, TurnResult } from '../session-types';
import type { ContinuedSession } from '../continued-types';
import { TURN_END_MEMO } from '../contract/session-definitions';
import { argumentsKey, canonicalJson } from './canonical-json';
import type { VerificationReport } from '../verify-types';
import { type FailedCheckItem, MAX_FAILED_ITEMS_LISTED, type RecordedAction, type RecordedCall, type RecordedTurn, type Recording, type TurnFigures } from './recording';
import type { BudgetChange } from '../budget-types';

/** A payload in Temporal's JSON form: metadata values and data in base64. */
export interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

/** Turns one (codec-decoded) payload into its value. */
export type PayloadDecoder = (payload: JsonPayload) => unknown;

/** One run's history in JSON form: its events, first to last. */
export interface HistoryRun {
  runId?: string;
  events: readonly HistoryEvent[];
}

/** A history event in JSON form; only the fields read here are named. */
export type HistoryEvent = { eventId?: string | number; eventTime?: string; eventType?: string } & Record<string, unknown>;

/** Activities that are not tools (everything else a session schedules is one, named like its tool). */
const MODEL_CALLS = new Set(['callModel', 'callModelV2']);
const USAGE_CALLS = new Set(['summarizeContext', 'verifyDocument']);
const NOT_TOOLS = new Set([
  ...MODEL_CALLS,
  ...USAGE_CALLS,
  'initializeAgent',
  'describeModel',
  'loadTranscriptPage',
  'listTools',
  'checkPins',
  'loadEvalTurn',
  'readBatchPage',
  'appendBatchResults',
  'assembleBatchResults',
  'awaitSessionOutcome',
]);
/** The activity that answers an eval session's next scripted message. */
export const EVAL_TURN_ACTIVITY = 'loadEvalTurn';
const MCP_CALL = 'callMcpTool';
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/** A thrown problem with a history: not a session's, or unreadable. */
export class RecordingError extends Error {
  override name = 'RecordingError';
}

/** Read a recorded session from its runs' histories (first run first). */
export function extractRecording(runs: readonly HistoryRun[], decode: PayloadDecoder, workflowId?: string): Recording {
  if (runs.length === 0 || runs.every((r) => r.events.length === 0)) throw new RecordingError('the history has no events');
  const reader = new HistoryReader(decode);
  runs.forEach((run, i) => reader.readRun(run, i));
  return reader.finish(
    workflowId,
    runs.map((r) => r.runId ?? '').filter((id) => id !== ''),
  );
}

/** A turn being read, with what only the reader needs. */
interface TurnInProgress extends RecordedTurn {
  /** When the turn's first model call was scheduled (else its message arrived): a first turn waits for the agent's initialisation, which is not the turn's. */
  startedAt?: number;
  timed?: boolean;
  endedAt?: number;
  modelCalls: number;
  usage: TokenUsage;
}

/** A tool activity scheduled, and the call it runs. */
type Scheduled = { kind: 'model' | 'usage' | 'evalTurn' | 'other' } | { kind: 'tool'; call: RecordedCall | undefined };

class HistoryReader {
  private input: SessionInput | undefined;
  private readonly turns = new Map<number, TurnInProgress>();
  private current: TurnInProgress | undefined;
  private turnCount = 0;
  /** The calls of the model's latest reply, which the tool activities that follow run. */
  private lastReply: RecordedCall[] = [];
  private matched = new Set<RecordedCall>();
  private scheduled = new Map<string, Scheduled>();
  private updates = new Map<string, { name: string; args: unknown[] }>();
  private ended: Recording['ended'] = 'running';
  /** Actions taken while the session waited between turns: they go to the next turn, as `before` it. */
  private waiting: RecordedAction[] = [];
  private readonly warnings: string[] = [];

  constructor(private readonly decode: PayloadDecoder) {}

  readRun(run: HistoryRun, index: number): void {
    this.scheduled = new Map();
    this.updates = new Map();
    this.lastReply = [];
    for (const event of run.events) this.readEvent(event, index);
  }

  finish(workflowId: string | undefined, runIds: string[]): Recording {
    if (!this.input) throw new RecordingError('the history does not start with a session: no start event');
    const turns = [...this.turns.values()].sort((a, b) => a.turn - b.turn).map((t) => this.finished(t));
    const missing = turns.filter((t) => t.result?.derived).map((t) => t.turn);
    if (missing.length > 0) this.warnings.push(`no recorded result for turn(s) ${missing.join(', ')}: their figures are counted from their model calls`);
    return { ...(workflowId !== undefined ? { workflowId } : {}), runIds, input: this.input, turns, ended: this.ended, warnings: this.warnings };
  }

  private finished(t: TurnInProgress): RecordedTurn {
    const { startedAt, endedAt, modelCalls, usage, timed: _timed, ...turn } = t;
    const result: TurnFigures = turn.result ?? { status: this.ended === 'running' ? 'running' : 'unknown', success: false, iterations: modelCalls, usage, response: null, derived: true };
    return {
      ...turn,
      result,
      ...(startedAt !== undefined && endedAt !== undefined ? { latencyMs: Math.max(0, endedAt - startedAt) } : {}),
    };
  }

  private readEvent(event: HistoryEvent, run: number): void {
    const id = String(event.eventId ?? '');
    const time = event.eventTime !== undefined ? Date.parse(event.eventTime) : undefined;
    const a = attributesOf(event);
    if (!a) return;
    switch (a.kind) {
      case 'workflowExecutionStartedEventAttributes':
        return this.started(a.value, run, time);
      case 'activityTaskScheduledEventAttributes':
        return this.activityScheduled(id, a.value, time);
      case 'activityTaskCompletedEventAttributes':
        return this.activityCompleted(a.value, time);
      case 'markerRecordedEventAttributes':
        return this.marker(a.value);
      case 'workflowExecutionUpdateAcceptedEventAttributes':
        return this.updateAccepted(id, a.value, time);
      case 'workflowExecutionSignaledEventAttributes':
        if (a.value.signalName === 'interrupt') this.action({ kind: 'interrupt' });
        return;
      case 'workflowExecutionUpdateCompletedEventAttributes':
        return this.updateCompleted(a.value, time);
      case 'workflowPropertiesModifiedEventAttributes':
        return this.memo(a.value, time);
      case 'workflowExecutionCompletedEventAttributes': {
        this.ended = 'completed';
        const result = this.first(a.value.result) as SessionResult | undefined;
        if (result?.lastTurn) this.turnResult(result.lastTurn, time);
        return;
      }
      case 'workflowExecutionFailedEventAttributes': {
        this.ended = 'failed';
        const failure = a.value.failure as Record<string, unknown> | undefined;
        const info = failure?.applicationFailureInfo as Record<string, unknown> | undefined;
        const turn = this.first(info?.details) as TurnResult | undefined;
        if (turn && typeof turn === 'object' && typeof turn.turn === 'number' && typeof turn.status === 'string') this.turnResult(turn, time);
        return;
      }
      case 'workflowExecutionContinuedAsNewEventAttributes':
        this.ended = 'continued';
        return;
      case 'workflowExecutionCanceledEventAttributes':
        this.ended = 'cancelled';
        return;
      case 'workflowExecutionTerminatedEventAttributes':
        this.ended = 'terminated';
        return;
      case 'workflowExecutionTimedOutEventAttributes':
        this.ended = 'timed_out';
        return;
    }
  }

  /** A run starts: the first holds the session's input (and maybe a first message); a later one may resume a turn. */
  private started(attributes: Record<string, unknown>, run: number, time: number | undefined): void {
    const type = (attributes.workflowType as { name?: string } | undefined)?.name;
    const input = this.first(attributes.input) as SessionInput | undefined;
    if (!input || typeof input !== 'object') throw new RecordingError(`the ${type ?? 'workflow'} started without a session input`);
    const continued = (input as { continued?: ContinuedSession }).continued;
    if (run === 0) {
      if (type !== undefined && type !== 'agentSession') throw new RecordingError(`the history is of a ${type} workflow, not a session (agentSession)`);
      const { continued: _c, ...settings } = input as SessionInput & { continued?: unknown };
      this.input = settings;
      if (continued) this.warnings.push(`the history starts at run ${continued.run} of its session: earlier turns are missing`);
      if (input.branchFrom) this.warnings.push(`the session was branched from ${input.branchFrom.workflowId} at turn ${input.branchFrom.turns}: its first turns are not part of this recording`);
      this.turnCount = continued?.turn ?? input.branchFrom?.turns ?? 0;
      if (!continued && input.firstMessage !== undefined) this.begin(this.turnCount + 1, input.firstMessage, time);
    }
    if (continued) {
      this.turnCount = Math.max(this.turnCount, continued.turn);
      const pending = continued.pendingTurn;
      this.current = pending ? (this.turns.get(pending.turn) ?? this.begin(pending.turn, '', time)) : undefined;
    }
  }

  /** A turn begins with a user message (`turn` is its number). */
  private begin(turn: number, message: string, time: number | undefined): TurnInProgress {
    const t: TurnInProgress = {
      turn,
      message,
      calls: [],
      approvals: [],
      modelCalls: 0,
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      ...(time !== undefined ? { startedAt: time } : {}),
    };
    if (this.input?.model !== undefined) t.model = this.input.model;
    if (this.waiting.length > 0) {
      t.actions = this.waiting;
      this.waiting = [];
    }
    this.turns.set(turn, t);
    this.turnCount = Math.max(this.turnCount, turn);
    this.current = t;
    this.lastReply = [];
    return t;
  }

  private activityScheduled(id: string, attributes: Record<string, unknown>, time: number | undefined): void {
    const name = (attributes.activityType as { name?: string } | undefined)?.name ?? '';
    if (MODEL_CALLS.has(name)) {
      const turn = this.current;
      if (turn && !turn.timed && time !== undefined) {
        turn.startedAt = time;
        turn.timed = true;
      }
      return void this.scheduled.set(id, { kind: 'model' });
    }
    if (USAGE_CALLS.has(name)) return void this.scheduled.set(id, { kind: 'usage' });
    if (name === EVAL_TURN_ACTIVITY) return void this.scheduled.set(id, { kind: 'evalTurn' });
    if (NOT_TOOLS.has(name)) return void this.scheduled.set(id, { kind: 'other' });
    const inputs = this.all(attributes.input);
    let tool = name;
    let args: unknown = inputs[1];
    if (name === MCP_CALL) {
      const mcp = inputs[0] as { name?: string; args?: unknown } | undefined;
      tool = mcp?.name ?? name;
      args = mcp?.args;
    }
    this.scheduled.set(id, { kind: 'tool', call: this.matchCall(tool, args === undefined ? undefined : canonicalJson(args)) });
  }

  /** The call of the latest reply a tool activity (or marker) runs: the first unmatched one with its name and, when known, its arguments. */
  private matchCall(tool: string, key: string | undefined): RecordedCall | undefined {
    const open = this.lastReply.filter((c) => c.tool === tool && !this.matched.has(c));
    const call = (key !== undefined ? open.find((c) => c.key === key) : undefined) ?? open[0];
    if (call) this.matched.add(call);
    return call;
  }

  private activityCompleted(attributes: Record<string, unknown>, time: number | undefined): void {
    const scheduled = this.scheduled.get(String(attributes.scheduledEventId ?? ''));
    if (!scheduled) return;
    const result = this.first(attributes.result);
    if (scheduled.kind === 'model') return this.reply(result as ModelCallResult);
    if (scheduled.kind === 'usage') return this.addUsage((result as { usage?: TokenUsage | null } | undefined)?.usage);
    if (scheduled.kind === 'evalTurn') {
      const next = result as { turn?: number; message?: string } | null;
      if (next && typeof next.message === 'string') this.begin(this.turnCount + 1, next.message, time);
      return;
    }
    if (scheduled.kind === 'tool' && scheduled.call && isToolResult(result)) {
      scheduled.call.result = result;
      scheduled.call.ran = 'activity';
    }
  }

  /** A model reply: its calls join the turn; inline reads came back with it. */
  private reply(result: ModelCallResult | undefined): void {
    const turn = this.current;
    if (!turn || !result?.message) return;
    turn.modelCalls += 1;
    this.addUsage(result.usage);
    const calls: ToolCall[] = result.message.tool_calls ?? [];
    this.lastReply = calls.map((call, i) => {
      const recorded: RecordedCall = { id: call.id, tool: call.function.name, arguments: call.function.arguments, key: argumentsKey(call.function.arguments), iteration: turn.modelCalls };
      const inline = result.toolResults?.[i];
      if (inline && isToolResult(inline)) {
        recorded.result = inline;
        recorded.ran = 'inline';
        this.matched.add(recorded);
      }
      return recorded;
    });
    turn.calls.push(...this.lastReply);
  }

  private addUsage(usage: TokenUsage | null | undefined): void {
    const turn = this.current;
    if (!turn || !usage) return;
    turn.usage = {
      promptTokens: turn.usage.promptTokens + (usage.promptTokens ?? 0),
      completionTokens: turn.usage.completionTokens + (usage.completionTokens ?? 0),
      totalTokens: turn.usage.totalTokens + (usage.totalTokens ?? 0),
    };
  }

  /** A local activity's marker: a read that ran in the workflow's worker (its input is not recorded: matched by name). */
  private marker(attributes: Record<string, unknown>): void {
    if (attributes.markerName !== LOCAL_ACTIVITY_MARKER) return;
    const details = (attributes.details ?? {}) as Record<string, unknown>;
    const data = this.first(details.data) as { activity_type?: string } | undefined;
    const result = this.first(details.result);
    const tool = data?.activity_type;
    if (!tool || NOT_TOOLS.has(tool) || !isToolResult(result)) return;
    const call = this.matchCall(tool, undefined);
    if (call) {
      call.result = result;
      call.ran = 'local';
    }
  }

  private updateAccepted(id: string, attributes: Record<string, unknown>, time: number | undefined): void {
    const request = attributes.acceptedRequest as { meta?: { updateId?: string }; input?: { name?: string; args?: unknown } } | undefined;
    const name = request?.input?.name ?? '';
    const args = this.all(request?.input?.args);
    this.updates.set(request?.meta?.updateId ?? id, { name, args });
    if (name === 'send' && typeof args[0] === 'string') this.begin(this.turnCount + 1, args[0], time);
    else if (name === 'extend') this.action({ kind: 'extend', n: typeof args[0] === 'number' ? args[0] : null });
    else if (name === 'budget' && args[0] && typeof args[0] === 'object') this.action({ kind: 'budget', change: args[0] as BudgetChange });
    else if (name === 'compact') this.action({ kind: 'compact' });
  }

  /**
   * A person's action: during the running turn, after the model replies it has had; else while the
   * session waited, before the next turn (an interrupt then stops nothing and is left out).
   */
  private action(action: Omit<RecordedAction, 'at'>): void {
    const turn = this.current;
    if (turn && turn.endedAt === undefined) {
      (turn.actions ??= []).push({ ...action, at: turn.modelCalls });
      return;
    }
    if (action.kind !== 'interrupt') this.waiting.push({ ...action, at: 'before' });
  }

  private updateCompleted(attributes: Record<string, unknown>, time: number | undefined): void {
    const meta = attributes.meta as { updateId?: string } | undefined;
    const update = this.updates.get(meta?.updateId ?? '');
    const outcome = attributes.outcome as { success?: unknown } | undefined;
    if (!update || !outcome?.success) return;
    const value = this.first(outcome.success);
    if (update.name === 'send' || update.name === 'awaitTurn') {
      if (value && typeof value === 'object') this.turnResult(value as TurnResult, time);
      return;
    }
    if ((update.name === 'approve' || update.name === 'deny') && Array.isArray(value)) {
      const turn = this.current;
      if (!turn) return;
      const reason = update.name === 'deny' && typeof update.args[1] === 'string' ? update.args[1] : undefined;
      for (const callId of value) {
        const call = turn.calls.find((c) => c.id === callId);
        // A child session's call (`d1/s1`) is decided in that session's own history.
        if (!call) continue;
        turn.approvals.push({ callId: call.id, tool: call.tool, key: call.key, approved: update.name === 'approve', ...(reason ? { reason } : {}) });
      }
    }
  }

  private memo(attributes: Record<string, unknown>, time: number | undefined): void {
    const fields = ((attributes.upsertedMemo as { fields?: Record<string, JsonPayload> } | undefined)?.fields ?? {}) as Record<string, JsonPayload>;
    const marked = fields[TURN_END_MEMO];
    if (!marked) return;
    const value = this.decode(marked) as Partial<TurnResult> | undefined;
    if (value && typeof value.turn === 'number') this.turnResult(value, time);
  }

  /** A turn's result (whole, or the memo's part: its number, messages and status): the most complete one is kept. */
  private turnResult(result: Partial<TurnResult>, time: number | undefined): void {
    const turn = typeof result.turn === 'number' ? this.turns.get(result.turn) : undefined;
    if (!turn || typeof result.status !== 'string') return;
    if (time !== undefined && turn.endedAt === undefined) turn.endedAt = time;
    const whole = result.usage !== undefined && typeof result.iterations === 'number';
    if (turn.result && !turn.result.derived && !whole) return;
    turn.result = whole
      ? figures(result as TurnResult)
      : { status: result.status, success: result.status === 'completed', iterations: turn.modelCalls, usage: turn.usage, response: result.response ?? null, derived: true };
  }

  private first(payloads: unknown): unknown {
    return this.all(payloads)[0];
  }

  /** The values of a `{payloads: [...]}` field. */
  private all(payloads: unknown): unknown[] {
    const list = (payloads as { payloads?: JsonPayload[] } | undefined)?.payloads ?? [];
    return list.map((p) => this.decode(p));
  }
}

/** The figures a turn result gives. */
function figures(result: TurnResult): TurnFigures {
  const v = result.verification;
  const replay = (result as TurnResult & { replay?: TurnFigures['replay'] }).replay;
  return {
    status: result.status,
    success: result.success,
    iterations: result.iterations,
    usage: result.usage,
    response: result.response ?? null,
    ...(result.error !== undefined ? { error: result.error } : {}),
    ...(result.cost !== undefined ? { cost: result.cost } : {}),
    ...(v ? { verification: { status: v.status, passed: v.passed, failed: v.failed, attempts: v.attempts, ...failedItems(v.items) } } : {}),
    ...(replay ? { replay } : {}),
  };
}

/** The failed items of a verifier's report (older results may lack `items`). */
function failedItems(items: VerificationReport['items'] | undefined): { failedItems?: FailedCheckItem[] } {
  const failed = (items ?? []).filter((i) => !i.passed).slice(0, MAX_FAILED_ITEMS_LISTED);
  if (failed.length === 0) return {};
  return { failedItems: failed.map((i) => ({ item: i.item, ...(i.section ? { section: i.section } : {}), ...(i.note ? { note: i.note } : {}) })) };
}

function isToolResult(value: unknown): value is ToolResult {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && typeof (value as { success?: unknown }).success === 'boolean';
}

/** The event's attributes field (`<kind>EventAttributes`) and its value. */
function attributesOf(event: HistoryEvent): { kind: string; value: Record<string, unknown> } | undefined {
  for (const [key, value] of Object.entries(event)) {
    if (key.endsWith('EventAttributes') && value !== null && typeof value === 'object') return { kind: key, value: value as Record<string, unknown> };
  }
  return undefined;
}
