/**
 * One turn of the agentic loop, as an explicit sequence of steps: check the limit, call the model,
 * append its message, run all requested tools in parallel, append their results in tool-call order,
 * and decide what comes next. Only recorded facts (activity results, workflow time) drive it.
 */
import { isCancellation, log, metricMeter } from '@temporalio/workflow';
import { MAX_TRANSCRIPT_BYTES } from '../../common/defaults';
import type { TokenUsage, ToolCall, ToolDefinition, ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import type { CompactionRecord, PendingQuestion, PendingTurn, RunningTool, TurnResult, TurnStatus } from '../../common/session-types';
import { LOOP_TOOL_SPECS, loopToolSpec, TOOL_SPECS, toolSpec } from '../../common/tools';
import { argsOf, targetOf } from '../../common/tools/tool-spec';
import type { HashedTranscript } from '../../common/transcript';
import { reportText } from '../../common/verify-report';
import type { SessionActivityStubs } from '../session/activity-proxies';
import { isContextLengthFailure, type ManagedModel, ModelCaller } from './model-calls';
import { rootMessage, type SessionToolSet, truncateArguments } from './tool-calls';
import { inlineToolNames, type WorkerCopies } from './inline-reads';
import { tracing, withSpan } from '../tracing/trace-hook';
import { runToolCalls, settleInline } from './turn-tools';
import { closeDanglingToolCalls, countToolCalls, FILTERED_RESULT, lastAssistantText, noteRepeatedFailures, toolMessage } from './turn-messages';
import { addUsage, ZERO_USAGE } from './usage';
import type { SessionVerifier } from '../verify/verify';
import type { Delegator } from '../delegation/delegation';

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

/** Human-in-the-loop behaviour of a turn (sessions recorded before it have none). */
export interface TurnControls {
  /** The turn's iteration limit now (`extend` raises it while the turn runs). */
  limit(): number;
  /** Iterations share at which the model is told the limit is near (0: never). */
  warnAt: number;
  /** Same call, same error, this many times: the turn ends `stuck`. */
  maxRepeatedFailures: number;
  /** Handle the loop-breaking tools (`LOOP_TOOL_SPECS`). */
  loopBreakers: boolean;
  /** Whether `call` waits for a human yes. */
  needsApproval(call: ToolCall): boolean;
  /** Wait (durably, cancellably) for the human's decision on `call`. */
  requestApproval(call: ToolCall): Promise<ApprovalDecision>;
  /** The limit was reached in a session a human talks to: reply saying so instead of failing. */
  interactive: boolean;
}

/** Everything a turn needs; `transcript` is the session's append-only transcript. */
export interface TurnInput {
  activities: SessionActivityStubs;
  turn: number;
  transcript: HashedTranscript;
  tools: ToolDefinition[];
  context: RuntimeContext;
  maxIterations: number;
  model?: string;
  observer: TurnObserver;
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
  /** Approvals, loop-breaking tools, limit warnings, repeated failures; absent for recorded sessions. */
  controls?: TurnControls;
  /** Context management, budgets, model settings; absent for sessions recorded before them. */
  managed?: ManagedModel;
  /** The verify phase; absent when it is off and for sessions recorded before it. */
  verifier?: SessionVerifier;
  /** Delegation (`delegate_task` as a child session); absent when the agent has no one to call. */
  delegator?: Delegator;
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

/** The message a turn ends with when the model keeps asking for tools past the limit. */
export function maxIterationsMessage(max: number): string {
  return `Agent execution exceeded maximum iterations (${max})`;
}

/**
 * Run a turn. Never throws: interruption and model failures end the turn with a status. Returns
 * `{ paused }` instead of a result when `shouldPause` asked for a fresh run between iterations.
 */
export async function runTurn(input: TurnInput, start: TurnStart): Promise<TurnOutcome | PausedTurn> {
  const { transcript, observer, controls } = input;
  const resumed = 'resume' in start ? start.resume : undefined;
  const verifier = input.verifier;
  const firstIndex = resumed ? resumed.firstIndex : transcript.length;
  if (!resumed) {
    const { message, answers } = start as { message: string; answers?: PendingQuestion };
    // The answer to the model's question is the result of its question call.
    if (answers) transcript.push(toolMessage(answers.callId, { success: true, answer: message }));
    else transcript.push({ role: 'user', content: message });
    verifier?.startTurn();
  }
  const command = !resumed && !('answers' in start && start.answers) ? verifier?.commandFor((start as { message: string }).message) : undefined;
  const limit = (): number => controls?.limit() ?? input.maxIterations;
  let warned = resumed?.warned ?? false;
  const failures: Record<string, number> = { ...(resumed?.failures ?? {}) };
  const turnStarted = resumed ? resumed.startedAt : Date.now();
  let iterations = resumed ? resumed.iterations : 0;
  const iterationsAtStart = iterations;
  let usage: TokenUsage = resumed ? resumed.usage : ZERO_USAGE;
  const managed = input.managed;
  const caller = new ModelCaller(
    input,
    managed,
    input.copies && input.inlineReads ? inlineToolNames(input.tools, input.toolSet?.tools, (name) => input.activities.localReads[name] !== undefined, controls && ((call) => controls.needsApproval(call))) : [],
  );
  const compactions: CompactionRecord[] = [];
  const modelWarnings: string[] = [];
  let continuations = 0;
  const costAtStart = managed?.budgets.cost ?? 0;
  managed?.budgets.startTurn(usage.totalTokens, resumed?.turnTokensExtra ?? 0, resumed?.budgetWarned ?? []);
  // The index just past the model's last reply: the messages after it are what the worker lacks.
  let afterLastReply: number | undefined;
  const maxTranscriptBytes = input.maxTranscriptBytes ?? MAX_TRANSCRIPT_BYTES;
  const recordUsage = (callUsage: TokenUsage, model?: string): void => {
    usage = addUsage(usage, callUsage);
    observer.onUsage(callUsage);
    // Priced by the model the session asked for (servers often answer with a longer name).
    managed?.budgets.record(callUsage, caller.model ?? model);
  };
  /** The model is done: verify what it saved, and either go on with the failed items or end the turn. */
  const answered = async (response: string): Promise<TurnOutcome | undefined> => {
    if (!verifier) return finish('completed', response);
    const next = await verifier.atAnswer(input.turn, recordUsage);
    if ('fix' in next) {
      transcript.push({ role: 'system', content: next.fix });
      return undefined;
    }
    if (next.done?.status === 'failed_verification') {
      return finish('failed_verification', response, `The document failed verification: ${next.done.failed} of ${next.done.passed + next.done.failed} checklist items failed after ${next.done.attempts} attempts`);
    }
    return finish('completed', response);
  };

  const finish = (status: TurnStatus, response: string | null, error?: string, question?: PendingQuestion): TurnOutcome => {
    const to = transcript.length;
    const verification = verifier?.turnReport();
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
      ...(managed && managed.budgets.cost > costAtStart ? { cost: Math.round((managed.budgets.cost - costAtStart) * 1e6) / 1e6 } : {}),
      ...(modelWarnings.length ? { modelWarnings: modelWarnings.slice(0, 20) } : {}),
      ...(verification ? { verification } : {}),
      ...input.delegator?.turnCount(transcript, firstIndex, to),
    };
    log.info('Turn ended', { turn: input.turn, status, iterations, durationMs: Date.now() - turnStarted, error });
    return result;
  };

  try {
    if (command) {
      // A menu item that checks a document: the check is the turn, and its report the reply.
      const report = await verifier!.runCommand(command, input.turn, recordUsage);
      const text = reportText(report);
      transcript.push({ role: 'assistant', content: text });
      if (report.status === 'failed_verification') return finish('failed_verification', text, `${report.failed} of ${report.passed + report.failed} checklist items failed`);
      return finish('completed', text);
    }
    for (;;) {
      const max = limit();
      if (iterations >= max) {
        const partial = lastAssistantText(transcript, firstIndex);
        if (controls?.interactive) {
          const reply = `I reached this turn's limit of ${max} iterations before finishing.${partial ? ` So far: ${partial}` : ''} Say "continue" to let me go on (or extend the limit).`;
          return finish('max_iterations', reply, maxIterationsMessage(max));
        }
        return finish('max_iterations', partial, maxIterationsMessage(max));
      }
      // Between iterations (never before this run's first one, so every run makes progress).
      if (iterations > iterationsAtStart && input.shouldPause()) {
        log.info('Turn continues in a new run', { turn: input.turn, iterations });
        const extended = controls && max !== input.maxIterations ? { maxIterations: max } : {};
        return { paused: { turn: input.turn, firstIndex, iterations, usage, startedAt: turnStarted, warned, failures, ...extended, ...managed?.budgets.turnCarry() } };
      }
      if (controls && controls.warnAt > 0 && !warned && iterations > 0 && iterations >= Math.ceil(max * controls.warnAt)) {
        warned = true;
        const left = max - iterations;
        transcript.push({
          role: 'system',
          content: `[Loopwright] ${iterations} of this turn's ${max} iterations are used; ${left} remain. Finish the task now, or ask the user how to go on${controls.loopBreakers ? ASK_HINT : ''}.`,
        });
      }
      if (managed) {
        // Budgets are checked before a call: the turn never starts a call it may not afford.
        const stop = managed.budgets.exhausted();
        if (stop) {
          metricMeter.createCounter('loopwright_budget_stops', 'turns', 'Turns a budget stopped, by budget').add(1, { budget: stop.which });
          return finish('budget_exceeded', lastAssistantText(transcript, firstIndex), stop.message);
        }
      } else if (transcript.bytes > maxTranscriptBytes) {
        return finish(
          'failed',
          null,
          `The transcript is ${transcript.bytes} bytes, over the ${maxTranscriptBytes} bytes a turn sends to the model; start a new session`,
        );
      }
      iterations += 1;
      observer.onThinking(iterations);
      const modelStarted = Date.now();
      const reply = await caller.step(afterLastReply, iterations, recordUsage);
      caller.afterInline = undefined;
      transcript.push(reply.message);
      // A reply joined from several calls replaces the first part the worker recorded: send it along.
      afterLastReply = reply.joined ? transcript.length - 1 : transcript.length;
      compactions.push(...reply.compactions);
      continuations += reply.continuations;
      if (reply.warnings) modelWarnings.push(...reply.warnings);
      const calls = reply.message.tool_calls ?? [];
      log.info(`Iteration ${iterations}/${max}`, {
        turn: input.turn,
        modelMs: Date.now() - modelStarted,
        toolCalls: calls.map((c) => `${c.function.name} ${truncateArguments(c.function.arguments)}`),
      });
      if (managed) {
        for (const warning of managed.budgets.newWarnings()) {
          metricMeter.createCounter('loopwright_budget_warnings', 'warnings', 'Budgets that passed their warning share').add(1);
          transcript.push({ role: 'system', content: `[Loopwright] Budget warning: ${warning}. Finish the task soon, or tell the user what is left.` });
        }
        if (reply.refusal) return finish('refused', reply.message.content, `The model refused: ${reply.message.content ?? 'no reason given'}`);
        if (reply.finishReason === 'content_filter') {
          closeDanglingToolCalls(transcript, firstIndex, FILTERED_RESULT);
          return finish('content_filtered', reply.message.content, "The model server's content filter stopped the reply");
        }
        if (reply.finishReason === 'length' && calls.length === 0) {
          const tried = reply.continuations > 0 ? ` (continued ${reply.continuations} times)` : '';
          return finish('truncated', reply.message.content ?? '', `The reply was cut off at the output limit${tried}; raise the output limit (maxOutputTokens) or say "continue"`);
        }
      }
      if (calls.length === 0) {
        const ended = await answered(reply.message.content ?? '');
        if (ended) return ended;
        continue;
      }
      // The worker asked for the runtime context (it lost it): the next call sends it again.
      if (reply.inlineNeedsContext && input.copies) input.copies.contextSent = undefined;
      const breaker = controls?.loopBreakers ? calls.find((c) => loopToolSpec(c.function.name)) : undefined;
      const acting = breaker ? calls.filter((c) => !loopToolSpec(c.function.name)) : calls;
      // Inline results come in the reply's call order; `acting` may leave a loop breaker out.
      const ran = reply.toolResults;
      const inlined = ran ? acting.map((call) => ran[calls.indexOf(call)] ?? null) : undefined;
      const writes = (name: string): boolean => toolSpec(name, input.toolSet?.tools ?? TOOL_SPECS)?.access === 'write';
      // The tools of one reply are the gather phase when they only read, the act phase when one writes.
      const phase = acting.some((c) => writes(c.function.name)) ? 'act' : 'gather';
      const phaseAttributes = { 'loopwright.turn': input.turn, 'loopwright.iteration': iterations, 'loopwright.tool_calls': acting.length };
      // Every call already ran inline: its results go straight into the transcript (no promise made
      // unless a phase span is recorded, which then says the reads ran in the model call).
      const allInline = !breaker && inlined?.every((r) => r !== null) === true;
      const results = !allInline
        ? await withSpan(`loopwright.phase.${phase}`, phaseAttributes, () =>
            runToolCalls(input, acting, breaker, { turn: input.turn, iteration: iterations, transcript, firstIndex, recordUsage }, inlined),
          )
        : tracing()
          ? await withSpan(`loopwright.phase.${phase}`, { ...phaseAttributes, 'loopwright.inline_reads': acting.length }, () => Promise.resolve(settleInline(input, acting, inlined as ToolResult[], caller)))
          : settleInline(input, acting, inlined as ToolResult[], caller);
      verifier?.noteToolResults(acting, results, writes);
      if (breaker) {
        const spec = loopToolSpec(breaker.function.name)!;
        const text = targetOf(spec, argsOf(breaker));
        const given = text !== undefined && text.trim() !== '' ? text : undefined;
        if (spec.loop === 'question') {
          const question = given ?? reply.message.content ?? 'I have a question.';
          return finish('waiting_for_user', question, undefined, { callId: breaker.id, question });
        }
        const ended = await answered(given ?? reply.message.content ?? 'Done.');
        if (ended) return ended;
        continue;
      }
      const stuck = controls ? noteRepeatedFailures(input.transcript, acting, results, failures, controls.maxRepeatedFailures) : undefined;
      if (stuck) return finish('stuck', stuck, stuck);
    }
  } catch (err) {
    if (isCancellation(err)) {
      closeDanglingToolCalls(transcript, firstIndex);
      return finish('interrupted', null, 'Interrupted by the user');
    }
    if (managed && isContextLengthFailure(err)) {
      // Even compacted, the turn does not fit: leave it out of what the model sees, so the next message works.
      closeDanglingToolCalls(transcript, firstIndex);
      managed.context.omit(firstIndex, transcript.length);
      return finish('failed', null, `${rootMessage(err)} This turn's messages are now left out of what the model sees, so the next message starts from the conversation before it.`);
    }
    return finish('failed', null, rootMessage(err));
  }
}

/** True for a turn handed over to the next run. */
export function isPaused(result: TurnOutcome | PausedTurn): result is PausedTurn {
  return 'paused' in result;
}

/** How the limit warning points at the question tool. */
const ASK_HINT = LOOP_TOOL_SPECS.filter((spec) => spec.loop === 'question').map((spec) => ` (${spec.name})`).join('');
