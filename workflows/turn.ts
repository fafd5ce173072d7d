/**
 * One turn of the agentic loop, as an explicit sequence of steps: check the limit, call the model,
 * append its message, run all requested tools in parallel, append their results in tool-call order,
 * and decide what comes next. Only recorded facts (activity results, workflow time) drive it.
 */
import { isCancellation, log, workflowInfo } from '@temporalio/workflow';
import { MAX_TRANSCRIPT_BYTES } from '../common/defaults';
import type { TokenUsage, ToolCall, ToolDefinition, ToolMessage, ToolResult } from '../common/messages';
import type { ModelCallResult } from '../common/model-call';
import type { RuntimeContext } from '../common/runtime-context';
import type { PendingTurn, RunningTool, TurnResult, TurnStatus } from '../common/session-types';
import { type HashedTranscript, INLINE_DELTA_BYTES, jsonBytes, MAX_MESSAGE_BYTES } from '../common/transcript';
import type { SessionActivityStubs } from './activity-proxies';
import { rootMessage, runToolCall, truncateArguments } from './tool-calls';
import { addUsage, ZERO_USAGE } from './usage';

/** What the turn tells its session as it goes, so queries can show progress. */
export interface TurnObserver {
  onThinking(iteration: number): void;
  onTools(tools: RunningTool[]): void;
  onUsage(usage: TokenUsage): void;
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
  /** Asked between iterations: true when this run should hand the turn over to a fresh run. */
  shouldPause(): boolean;
  /** Largest transcript sent to the model, in bytes (default MAX_TRANSCRIPT_BYTES). */
  maxTranscriptBytes?: number;
}

/** How a turn begins: a new user message, or a turn resumed from the run before this one. */
export type TurnStart = { message: string } | { resume: PendingTurn };

/** A turn handed over to the next run between two iterations. */
export interface PausedTurn {
  paused: PendingTurn;
}

/** The message a turn ends with when the model keeps asking for tools past the limit. */
export function maxIterationsMessage(max: number): string {
  return `Agent execution exceeded maximum iterations (${max})`;
}

/**
 * Run a turn. Never throws: interruption and model failures end the turn with a status. Returns
 * `{ paused }` instead of a result when `shouldPause` asked for a fresh run between iterations.
 */
export async function runTurn(input: TurnInput, start: TurnStart): Promise<TurnResult | PausedTurn> {
  const { transcript, maxIterations, observer } = input;
  const resumed = 'resume' in start ? start.resume : undefined;
  const firstIndex = resumed ? resumed.firstIndex : transcript.length;
  if (!resumed) transcript.push({ role: 'user', content: (start as { message: string }).message });
  const turnStarted = resumed ? resumed.startedAt : Date.now();
  let iterations = resumed ? resumed.iterations : 0;
  const iterationsAtStart = iterations;
  let usage: TokenUsage = resumed ? resumed.usage : ZERO_USAGE;
  // The index just past the model's last reply: the messages after it are what the worker lacks.
  let afterLastReply: number | undefined;
  const maxTranscriptBytes = input.maxTranscriptBytes ?? MAX_TRANSCRIPT_BYTES;

  const finish = (status: TurnStatus, response: string | null, error?: string): TurnResult => {
    const to = transcript.length;
    const result: TurnResult = {
      turn: input.turn,
      success: status === 'completed',
      status,
      iterations,
      response,
      messageRange: { from: firstIndex, to },
      toolCalls: countToolCalls(transcript, firstIndex),
      usage,
      ...(error === undefined ? {} : { error }),
    };
    log.info('Turn ended', { turn: input.turn, status, iterations, durationMs: Date.now() - turnStarted, error });
    return result;
  };

  try {
    for (;;) {
      if (iterations >= maxIterations) {
        return finish('max_iterations', lastAssistantText(transcript, firstIndex), maxIterationsMessage(maxIterations));
      }
      // Between iterations (never before this run's first one, so every run makes progress).
      if (iterations > iterationsAtStart && input.shouldPause()) {
        log.info('Turn continues in a new run', { turn: input.turn, iterations });
        return { paused: { turn: input.turn, firstIndex, iterations, usage, startedAt: turnStarted } };
      }
      if (transcript.bytes > maxTranscriptBytes) {
        return finish(
          'failed',
          null,
          `The transcript is ${transcript.bytes} bytes, over the ${maxTranscriptBytes} bytes a turn sends to the model; start a new session`,
        );
      }
      iterations += 1;
      observer.onThinking(iterations);
      const modelStarted = Date.now();
      const reply = await callModel(input, afterLastReply);
      transcript.push(reply.message);
      afterLastReply = transcript.length;
      if (reply.usage) {
        usage = addUsage(usage, reply.usage);
        observer.onUsage(reply.usage);
      }
      const calls = reply.message.tool_calls ?? [];
      log.info(`Iteration ${iterations}/${maxIterations}`, {
        turn: input.turn,
        modelMs: Date.now() - modelStarted,
        toolCalls: calls.map((c) => `${c.function.name} ${truncateArguments(c.function.arguments)}`),
      });
      if (calls.length === 0) {
        return finish('completed', reply.message.content ?? '');
      }
      await runToolCalls(input, calls);
    }
  } catch (err) {
    if (isCancellation(err)) {
      closeDanglingToolCalls(transcript, firstIndex);
      return finish('interrupted', null, 'Interrupted by the user');
    }
    return finish('failed', null, rootMessage(err));
  }
}

/** True for a turn handed over to the next run. */
export function isPaused(result: TurnResult | PausedTurn): result is PausedTurn {
  return 'paused' in result;
}

/**
 * One model call. With `transcriptRef`, the activity gets where the transcript stands (count and
 * chain hash) plus the messages since the model's last reply when they are small; the worker holds
 * the rest. Otherwise (histories recorded before that) the whole transcript goes in the input.
 */
function callModel(input: TurnInput, afterLastReply: number | undefined): Promise<ModelCallResult> {
  const { transcript } = input;
  if (!input.transcriptRef) {
    return input.activities.callModel({ messages: transcript.slice(), tools: input.tools, model: input.model });
  }
  const info = workflowInfo();
  const count = transcript.length;
  const delta =
    afterLastReply !== undefined && transcript.bytesBetween(afterLastReply, count) <= INLINE_DELTA_BYTES
      ? { from: afterLastReply, messages: transcript.slice(afterLastReply, count) }
      : undefined;
  return input.activities.callModelV2({
    transcript: { workflowId: info.workflowId, runId: info.runId, count, hash: transcript.hashAt(count) },
    ...(delta ? { delta } : {}),
    tools: input.tools,
    model: input.model,
  });
}

/**
 * Run every call of one assistant message at once and append the results in tool-call order once
 * all are in. On interruption the results that did arrive are kept and every call still running is
 * answered with an "interrupted" result, all in call order, so the transcript stays valid.
 */
async function runToolCalls(input: TurnInput, calls: ToolCall[]): Promise<void> {
  input.observer.onTools(calls.map((c) => ({ id: c.id, name: c.function.name })));
  const results: (ToolResult | undefined)[] = calls.map(() => undefined);
  try {
    await Promise.all(
      calls.map(async (call, i) => {
        const started = Date.now();
        const result = await runToolCall(input.activities, call, input.context, { localReads: input.localReads });
        results[i] = result;
        log.info('Tool call finished', {
          tool: call.function.name,
          arguments: truncateArguments(call.function.arguments),
          success: result.success,
          error: result.success ? undefined : result.error,
          durationMs: Date.now() - started,
        });
      }),
    );
  } finally {
    calls.forEach((call, i) => {
      input.transcript.push(toolMessage(call.id, results[i] ?? INTERRUPTED_RESULT));
    });
    input.observer.onTools([]);
  }
}

const INTERRUPTED_RESULT: ToolResult = { success: false, error: 'Interrupted by the user before this tool finished' };

/** A tool message; a result too large for one payload is replaced by an error the model can act on. */
function toolMessage(toolCallId: string, result: ToolResult): ToolMessage {
  const message: ToolMessage = { role: 'tool', tool_call_id: toolCallId, content: JSON.stringify(result) };
  const bytes = jsonBytes(message);
  if (bytes <= MAX_MESSAGE_BYTES) return message;
  const error = `The tool result is ${bytes} bytes, over the limit of ${MAX_MESSAGE_BYTES} bytes for one message; ask for a smaller file or part`;
  return { role: 'tool', tool_call_id: toolCallId, content: JSON.stringify({ success: false, error }) };
}

/**
 * After an interrupt, answer every tool call that has no result yet, so the transcript stays a
 * valid conversation for the next model call (each tool call must be followed by its result).
 */
function closeDanglingToolCalls(transcript: HashedTranscript, fromIndex: number): void {
  const messages = transcript.messages;
  for (let i = messages.length - 1; i >= fromIndex; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant') continue;
    const answered = new Set(messages.slice(i + 1).flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
    for (const call of message.tool_calls ?? []) {
      if (!answered.has(call.id)) transcript.push(toolMessage(call.id, INTERRUPTED_RESULT));
    }
    return;
  }
}

function lastAssistantText(transcript: HashedTranscript, fromIndex: number): string | null {
  const messages = transcript.messages;
  for (let i = messages.length - 1; i >= fromIndex; i--) {
    const message = messages[i]!;
    if (message.role === 'assistant' && message.content) return message.content;
  }
  return null;
}

function countToolCalls(transcript: HashedTranscript, fromIndex: number): number {
  let count = 0;
  const messages = transcript.messages;
  for (let i = fromIndex; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === 'assistant') count += message.tool_calls?.length ?? 0;
  }
  return count;
}
