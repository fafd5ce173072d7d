/**
 * One turn of the agentic loop, as an explicit sequence of steps: check the limit, call the model,
 * append its message, run all requested tools in parallel, append their results in tool-call order,
 * and decide what comes next. Only recorded facts (activity results, workflow time) drive it.
 * Features take part through their extensions (extensions.ts); the limits are the session's (turn-limits.ts).
 */
import { isCancellation, log, metricMeter } from '@temporalio/workflow';
import { MAX_TRANSCRIPT_BYTES } from '../../common/defaults';
import type { TokenUsage, ToolCall, ToolDefinition, ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import type { CompactionRecord, PendingQuestion, PendingTurn, RunningTool, TurnResult, TurnStatus } from '../../common/session-types';
import { loopToolSpec, TOOL_SPECS, toolSpec } from '../../common/tools';
import { argsOf, targetOf } from '../../common/tools/tool-spec';
import type { HashedTranscript } from '../../common/transcript';
import type { SessionActivityStubs } from '../stubs/activity-proxies';
import { isContextLengthFailure, type ManagedModel, ModelCaller, type ModelStep } from './model-calls';
import { rootMessage, type SessionToolSet, truncateArguments } from './tool-calls';
import { inlineToolNames, type WorkerCopies } from './inline-reads';
import { tracing, withSpan } from '../tracing/trace-hook';
import { runToolCalls, settleInline } from './turn-tools';
import { closeDanglingToolCalls, countToolCalls, FILTERED_RESULT, lastAssistantText, toolMessage } from './turn-messages';
import { addUsage, ZERO_USAGE } from './usage';
import type { CallPoint, TurnEnd, TurnExtension, TurnPoint } from './extensions';
import type { TurnLimits } from './turn-limits';

/** What the turn tells its session as it goes, so queries can show progress. */
export interface TurnObserver {
  onThinking(iteration: number): void;
  onTools(tools: RunningTool[]): void;
  onUsage(usage: TokenUsage): void;
  /** The session's runtime context changed within the turn (a skill was activated): keep it for later turns and runs. */
  onContext?(context: RuntimeContext): void;
}

/** A human's answer to a tool call that needed approval. */
export interface ApprovalDecision {
  approved: boolean;
  reason?: string;
}

/** Approvals in a turn (sessions recorded before the human loop have none). */
export interface TurnApprovals {
  /** Whether `call` waits for a human yes. */
  needsApproval(call: ToolCall): boolean;
  /** The result of a call refused without asking (a command a deny rule covers); undefined for any other. */
  refused?(call: ToolCall): ToolResult | undefined;
  /** Wait (durably, cancellably) for the human's decision on `call`. */
  requestApproval(call: ToolCall): Promise<ApprovalDecision>;
}

/** Everything a turn needs; `transcript` is the session's append-only transcript. */
export interface TurnInput {
  activities: SessionActivityStubs;
  turn: number;
  transcript: HashedTranscript;
  tools: ToolDefinition[];
  context: RuntimeContext;
  model?: string;
  observer: TurnObserver;
  /** The iteration limit, its warning and the repeated-failure count (the session owns them). */
  limits: TurnLimits;
  /** Features that take part in the turn (verification, delegation), in the order they are asked. */
  extensions: readonly TurnExtension[];
  /** Handle the loop-breaking tools (`LOOP_TOOL_SPECS`). */
  loopBreakers: boolean;
  /** Pass the model a reference to the transcript (`callModelV2`) instead of the whole transcript. */
  transcriptRef: boolean;
  /** Run read-only tools as local activities. */
  localReads?: boolean;
  /** What the model-call worker keeps of this run (absent: recorded before it: every call carries all). */
  copies?: WorkerCopies;
  /** Inline reads: the model-call activity runs the reply's reads (with `copies` only). */
  inlineReads?: boolean;
  /** The tools offered beyond the built-in ones (custom, MCP) and how to run them; default the built-in ones. */
  toolSet?: SessionToolSet;
  /** Asked between iterations: true when this run should hand the turn over to a fresh run. */
  shouldPause(): boolean;
  /** Largest transcript sent to the model, in bytes (default MAX_TRANSCRIPT_BYTES). */
  maxTranscriptBytes?: number;
  /** Approvals; absent for recorded sessions. */
  approvals?: TurnApprovals;
  /** Context management, budgets, model settings; absent for sessions recorded before them. */
  managed?: ManagedModel;
}

/**
 * How a turn begins: a new user message, an answer to the model's pending question (it becomes that
 * call's tool result), or a turn resumed from the run before this one.
 */
export type TurnStart = { message: string; answers?: PendingQuestion } | { resume: PendingTurn };

/** A turn handed over to the next run between two iterations. */
export interface PausedTurn {
  paused: PendingTurn;
}

/** A turn result, plus the question the model asked when it ended `waiting_for_user`. */
export type TurnOutcome = TurnResult & { question?: PendingQuestion };

/**
 * Run a turn. Never throws: interruption and model failures end the turn with a status. Returns
 * `{ paused }` instead of a result when `shouldPause` asked for a fresh run between iterations.
 */
export function runTurn(input: TurnInput, start: TurnStart): Promise<TurnOutcome | PausedTurn> {
  return new Turn(input, start).run();
}

/** One turn's progress: the loop in `run`, each step of it a method. */
class Turn {
  private readonly resumed: PendingTurn | undefined;
  /** Index of the turn's first message. */
  private readonly firstIndex: number;
  /** A menu command an extension answers instead of the model. */
  private readonly command: ((at: TurnPoint) => Promise<TurnEnd & { response: string }>) | undefined;
  private readonly startedAt: number;
  private iterations: number;
  private readonly iterationsAtStart: number;
  private usage: TokenUsage;
  private readonly caller: ModelCaller;
  private readonly compactions: CompactionRecord[] = [];
  private readonly modelWarnings: string[] = [];
  private continuations = 0;
  private readonly costAtStart: number;
  /** The index just past the model's last reply: the messages after it are what the worker lacks. */
  private afterLastReply: number | undefined;
  /** When the running model call started (for the log). */
  private callStarted = 0;
  private readonly point: TurnPoint;

  constructor(
    private readonly input: TurnInput,
    start: TurnStart,
  ) {
    const { transcript, extensions } = input;
    this.resumed = 'resume' in start ? start.resume : undefined;
    const resumed = this.resumed;
    this.firstIndex = resumed ? resumed.firstIndex : transcript.length;
    let command: Turn['command'];
    if (!resumed) {
      const { message, answers } = start as { message: string; answers?: PendingQuestion };
      // The answer to the model's question is the result of its question call.
      if (answers) transcript.push(toolMessage(answers.callId, { success: true, answer: message }));
      else transcript.push({ role: 'user', content: message });
      for (const e of extensions) e.onTurnStart?.();
      if (!answers) for (const e of extensions) command ??= e.command?.(message);
    }
    this.command = command;
    this.startedAt = resumed ? resumed.startedAt : Date.now();
    this.iterations = resumed ? resumed.iterations : 0;
    this.iterationsAtStart = this.iterations;
    this.usage = resumed ? resumed.usage : ZERO_USAGE;
    const managed = input.managed;
    const approvals = input.approvals;
    const inline = input.copies && input.inlineReads;
    const local = (name: string): boolean => input.activities.localReads[name] !== undefined;
    this.caller = new ModelCaller(input, managed, inline ? inlineToolNames(input.tools, input.toolSet?.tools, local, approvals && ((call) => approvals.needsApproval(call))) : []);
    this.costAtStart = managed?.budgets.cost ?? 0;
    managed?.budgets.startTurn(this.usage.totalTokens, resumed?.turnTokensExtra ?? 0, resumed?.budgetWarned ?? []);
    this.point = { turn: input.turn, recordUsage: (usage) => this.recordUsage(usage) };
  }

  async run(): Promise<TurnOutcome | PausedTurn> {
    try {
      if (this.command) {
        // A menu item an extension answers (a document check): its report is the reply.
        const end = await this.command(this.point);
        this.input.transcript.push({ role: 'assistant', content: end.response });
        return this.finish(end.status, end.response, end.error);
      }
      for (;;) {
        const stop = this.beforeCall();
        if (stop) return stop;
        // Each await stands where it always stood: workflow code that shares an activation (the idle
        // loop, handlers) must see the same commands in the same order as recorded histories.
        const reply = await this.caller.step(this.afterLastReply, this.startCall(), this.onUsage);
        const ended = this.tookReply(reply);
        if (ended) return ended;
        const calls = reply.message.tool_calls ?? [];
        if (calls.length === 0) {
          const answer = await this.answered(reply.message.content ?? '');
          if (answer) return answer;
          continue;
        }
        // The worker asked for the runtime context (it lost it): the next call sends it again.
        if (reply.inlineNeedsContext && this.input.copies) this.input.copies.contextSent = undefined;
        const breaker = this.input.loopBreakers ? calls.find((c) => loopToolSpec(c.function.name)) : undefined;
        const acting = breaker ? calls.filter((c) => !loopToolSpec(c.function.name)) : calls;
        const ran = this.runTools(reply, calls, acting, breaker);
        const results = Array.isArray(ran) ? ran : await ran;
        for (const e of this.input.extensions) e.onToolResults?.(acting, results, this.writes);
        if (breaker) {
          const { question, text } = this.breakerText(breaker, reply);
          if (question) return this.finish('waiting_for_user', text, undefined, { callId: breaker.id, question: text });
          const answer = await this.answered(text);
          if (answer) return answer;
          continue;
        }
        const stuck = this.input.limits.noteFailures(this.input.transcript, acting, results);
        if (stuck) return this.finish('stuck', stuck, stuck);
      }
    } catch (err) {
      return this.failed(err);
    }
  }

  /** Before a model call: the limit, a hand-over to the next run, the limit warning, budgets and size. */
  private beforeCall(): TurnOutcome | PausedTurn | undefined {
    const { input, iterations } = this;
    const { transcript, limits, managed } = input;
    if (limits.reached(iterations)) {
      const { response, error } = limits.limitReply(lastAssistantText(transcript, this.firstIndex));
      return this.finish('max_iterations', response, error);
    }
    // Between iterations (never before this run's first one, so every run makes progress).
    if (iterations > this.iterationsAtStart && input.shouldPause()) {
      log.info('Turn continues in a new run', { turn: input.turn, iterations });
      const { firstIndex, usage, startedAt } = this;
      return { paused: { turn: input.turn, firstIndex, iterations, usage, startedAt, ...limits.carry(), ...managed?.budgets.turnCarry() } };
    }
    const warning = limits.warning(iterations);
    if (warning) transcript.push({ role: 'system', content: warning });
    if (managed) {
      // Budgets are checked before a call: the turn never starts a call it may not afford.
      const stop = managed.budgets.exhausted();
      if (stop) {
        metricMeter.createCounter('loopwright_budget_stops', 'turns', 'Turns a budget stopped, by budget').add(1, { budget: stop.which });
        return this.finish('budget_exceeded', lastAssistantText(transcript, this.firstIndex), stop.message);
      }
    } else {
      const max = input.maxTranscriptBytes ?? MAX_TRANSCRIPT_BYTES;
      if (transcript.bytes > max) return this.finish('failed', null, `The transcript is ${transcript.bytes} bytes, over the ${max} bytes a turn sends to the model; start a new session`);
    }
    return undefined;
  }

  /** A model call starts: its iteration, shown as thinking. */
  private startCall(): number {
    this.iterations += 1;
    this.input.observer.onThinking(this.iterations);
    this.callStarted = Date.now();
    return this.iterations;
  }

  /** The model's reply joins the transcript; for managed sessions a reply may end the turn (see `managedEnd`). */
  private tookReply(reply: ModelStep): TurnOutcome | undefined {
    const { input, caller } = this;
    caller.afterInline = undefined;
    input.transcript.push(reply.message);
    // A reply joined from several calls replaces the first part the worker recorded: send it along.
    this.afterLastReply = reply.joined ? input.transcript.length - 1 : input.transcript.length;
    this.compactions.push(...reply.compactions);
    this.continuations += reply.continuations;
    if (reply.warnings) this.modelWarnings.push(...reply.warnings);
    log.info(`Iteration ${this.iterations}/${input.limits.limit}`, {
      turn: input.turn,
      modelMs: Date.now() - this.callStarted,
      toolCalls: (reply.message.tool_calls ?? []).map((c) => `${c.function.name} ${truncateArguments(c.function.arguments)}`),
    });
    return this.managedEnd(reply);
  }

  /** After a reply, for managed sessions: budget warnings, and the replies that end the turn (refused, filtered, cut off). */
  private managedEnd(reply: ModelStep): TurnOutcome | undefined {
    const { managed, transcript } = this.input;
    if (!managed) return undefined;
    for (const warning of managed.budgets.newWarnings()) {
      metricMeter.createCounter('loopwright_budget_warnings', 'warnings', 'Budgets that passed their warning share').add(1);
      transcript.push({ role: 'system', content: `[Loopwright] Budget warning: ${warning}. Finish the task soon, or tell the user what is left.` });
    }
    const content = reply.message.content;
    if (reply.refusal) return this.finish('refused', content, `The model refused: ${content ?? 'no reason given'}`);
    if (reply.finishReason === 'content_filter') {
      closeDanglingToolCalls(transcript, this.firstIndex, FILTERED_RESULT);
      return this.finish('content_filtered', content, "The model server's content filter stopped the reply");
    }
    if (reply.finishReason === 'length' && !reply.message.tool_calls?.length) {
      const tried = reply.continuations > 0 ? ` (continued ${reply.continuations} times)` : '';
      return this.finish('truncated', content ?? '', `The reply was cut off at the output limit${tried}; raise the output limit (maxOutputTokens) or say "continue"`);
    }
    return undefined;
  }

  /**
   * The tools of one reply: the gather phase when they only read, the act phase when one writes.
   * Calls that already ran inline go straight into the transcript (no promise made unless a phase
   * span is recorded, which then says the reads ran in the model call).
   */
  private runTools(reply: ModelStep, calls: ToolCall[], acting: ToolCall[], breaker: ToolCall | undefined): (ToolResult | undefined)[] | Promise<(ToolResult | undefined)[]> {
    const { input, iterations } = this;
    // Inline results come in the reply's call order; `acting` may leave a loop breaker out.
    const ran = reply.toolResults;
    const inlined = ran ? acting.map((call) => ran[calls.indexOf(call)] ?? null) : undefined;
    const phase = acting.some((c) => this.writes(c.function.name)) ? 'act' : 'gather';
    const attributes = { 'loopwright.turn': input.turn, 'loopwright.iteration': iterations, 'loopwright.tool_calls': acting.length };
    if (breaker || inlined?.every((r) => r !== null) !== true) {
      const at: CallPoint = { turn: input.turn, iteration: iterations, transcript: input.transcript, firstIndex: this.firstIndex, recordUsage: this.point.recordUsage };
      return withSpan(`loopwright.phase.${phase}`, attributes, () => runToolCalls(input, acting, breaker, at, inlined));
    }
    const settle = (): ToolResult[] => settleInline(input, acting, inlined as ToolResult[], this.caller);
    return tracing() ? withSpan(`loopwright.phase.${phase}`, { ...attributes, 'loopwright.inline_reads': acting.length }, () => Promise.resolve(settle())) : settle();
  }

  /** A loop-breaking call's text: the question it asks, or the completion's answer. */
  private breakerText(breaker: ToolCall, reply: ModelStep): { question: boolean; text: string } {
    const spec = loopToolSpec(breaker.function.name)!;
    const given = targetOf(spec, argsOf(breaker));
    const text = given !== undefined && given.trim() !== '' ? given : undefined;
    if (spec.loop === 'question') return { question: true, text: text ?? reply.message.content ?? 'I have a question.' };
    return { question: false, text: text ?? reply.message.content ?? 'Done.' };
  }

  /** The model is done: each extension may send it back to work (a failed check) or end the turn its way. */
  private async answered(response: string): Promise<TurnOutcome | undefined> {
    for (const e of this.input.extensions) {
      if (!e.onAnswer) continue;
      const verdict = await e.onAnswer(this.point);
      if (!verdict) continue;
      if ('continueWith' in verdict) {
        this.input.transcript.push({ role: 'system', content: verdict.continueWith });
        return undefined;
      }
      return this.finish(verdict.end.status, verdict.end.response ?? response, verdict.end.error);
    }
    return this.finish('completed', response);
  }

  /** The turn ends on a failure: interrupted, too large for the model even compacted, or another error. */
  private failed(err: unknown): TurnOutcome {
    const { transcript, managed } = this.input;
    if (isCancellation(err)) {
      closeDanglingToolCalls(transcript, this.firstIndex);
      return this.finish('interrupted', null, 'Interrupted by the user');
    }
    if (managed && isContextLengthFailure(err)) {
      // Even compacted, the turn does not fit: leave it out of what the model sees, so the next message works.
      closeDanglingToolCalls(transcript, this.firstIndex);
      managed.context.omit(this.firstIndex, transcript.length);
      return this.finish('failed', null, `${rootMessage(err)} This turn's messages are now left out of what the model sees, so the next message starts from the conversation before it.`);
    }
    return this.finish('failed', null, rootMessage(err));
  }

  /** Whether a tool writes (a reply with a write is the act phase). */
  private readonly writes = (name: string): boolean => toolSpec(name, this.input.toolSet?.tools ?? TOOL_SPECS)?.access === 'write';

  /** Counts a model call's usage in the turn, the session and its budgets. */
  private readonly onUsage = (usage: TokenUsage, model?: string): void => this.recordUsage(usage, model);

  private recordUsage(callUsage: TokenUsage, model?: string): void {
    this.usage = addUsage(this.usage, callUsage);
    this.input.observer.onUsage(callUsage);
    // Priced by the model the session asked for (servers often answer with a longer name).
    this.input.managed?.budgets.record(callUsage, this.caller.model ?? model);
  }

  private finish(status: TurnStatus, response: string | null, error?: string, question?: PendingQuestion): TurnOutcome {
    const { input, firstIndex, iterations, usage, compactions, continuations, modelWarnings } = this;
    const { transcript, managed } = input;
    const to = transcript.length;
    const cost = managed && managed.budgets.cost > this.costAtStart ? Math.round((managed.budgets.cost - this.costAtStart) * 1e6) / 1e6 : undefined;
    const result: TurnOutcome = {
      turn: input.turn,
      success: status === 'completed',
      status,
      iterations,
      response,
      messageRange: { from: firstIndex, to },
      toolCalls: countToolCalls(transcript, firstIndex),
      usage,
      ...(error === undefined ? {} : { error }),
      ...(question ? { question } : {}),
      ...(compactions.length ? { compactions } : {}),
      ...(continuations ? { continuations } : {}),
      ...(cost !== undefined ? { cost } : {}),
      ...(modelWarnings.length ? { modelWarnings: modelWarnings.slice(0, 20) } : {}),
    };
    for (const e of input.extensions) Object.assign(result, e.report?.(transcript, firstIndex, to));
    log.info('Turn ended', { turn: input.turn, status, iterations, durationMs: Date.now() - this.startedAt, error });
    return result;
  }
}

/** True for a turn handed over to the next run. */
export function isPaused(result: TurnOutcome | PausedTurn): result is PausedTurn {
  return 'paused' in result;
}
