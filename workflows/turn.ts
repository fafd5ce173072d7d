/**
 * One turn of the agentic loop, as an explicit sequence of steps: check the limit, call the model,
 * append its message, run all requested tools in parallel, append their results in tool-call order,
 * and decide what comes next. Only recorded facts (activity results, workflow time) drive it.
 */
import { isCancellation, log } from '@temporalio/workflow';
import type { ChatMessage, TokenUsage, ToolCall, ToolDefinition, ToolMessage, ToolResult } from '../common/messages';
import type { RuntimeContext } from '../common/runtime-context';
import type { RunningTool, TurnResult, TurnStatus } from '../common/session-types';
import type { SessionActivityStubs } from './activity-proxies';
import { rootMessage, runToolCall, truncateArguments } from './tool-calls';
import { addUsage, ZERO_USAGE } from './usage';

/** What the turn tells its session as it goes, so queries can show progress. */
export interface TurnObserver {
  onThinking(iteration: number): void;
  onTools(tools: RunningTool[]): void;
  onUsage(usage: TokenUsage): void;
}

/** Everything a turn needs; `transcript` is the session's append-only message array. */
export interface TurnInput {
  activities: SessionActivityStubs;
  turn: number;
  transcript: ChatMessage[];
  tools: ToolDefinition[];
  context: RuntimeContext;
  maxIterations: number;
  model?: string;
  observer: TurnObserver;
}

/** The message a turn ends with when the model keeps asking for tools past the limit. */
export function maxIterationsMessage(max: number): string {
  return `Agent execution exceeded maximum iterations (${max})`;
}

/** Run a turn for `userMessage`. Never throws: interruption and model failures end the turn with a status. */
export async function runTurn(input: TurnInput, userMessage: string): Promise<TurnResult> {
  const { transcript, maxIterations, observer } = input;
  const firstIndex = transcript.length;
  transcript.push({ role: 'user', content: userMessage });
  const turnStarted = Date.now();
  let iterations = 0;
  let usage: TokenUsage = ZERO_USAGE;

  const finish = (status: TurnStatus, response: string | null, error?: string): TurnResult => {
    const result: TurnResult = {
      turn: input.turn,
      success: status === 'completed',
      status,
      iterations,
      response,
      messages: transcript.slice(firstIndex),
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
      iterations += 1;
      observer.onThinking(iterations);
      const modelStarted = Date.now();
      const reply = await input.activities.callModel({ messages: transcript, tools: input.tools, model: input.model });
      transcript.push(reply.message);
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
      await runToolCalls(input, calls, transcript);
    }
  } catch (err) {
    if (isCancellation(err)) {
      closeDanglingToolCalls(transcript, firstIndex);
      return finish('interrupted', null, 'Interrupted by the user');
    }
    return finish('failed', null, rootMessage(err));
  }
}

/**
 * Run every call of one assistant message at once and append the results in tool-call order once
 * all are in. On interruption the results that did arrive are appended first, so nothing is lost.
 */
async function runToolCalls(input: TurnInput, calls: ToolCall[], transcript: ChatMessage[]): Promise<void> {
  input.observer.onTools(calls.map((c) => ({ id: c.id, name: c.function.name })));
  const results: (ToolResult | undefined)[] = calls.map(() => undefined);
  try {
    await Promise.all(
      calls.map(async (call, i) => {
        const started = Date.now();
        const result = await runToolCall(input.activities, call, input.context);
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
      const result = results[i];
      if (result) transcript.push(toolMessage(call.id, result));
    });
    input.observer.onTools([]);
  }
}

function toolMessage(toolCallId: string, result: ToolResult): ToolMessage {
  return { role: 'tool', tool_call_id: toolCallId, content: JSON.stringify(result) };
}

/**
 * After an interrupt, answer every tool call that has no result yet, so the transcript stays a
 * valid conversation for the next model call (each tool call must be followed by its result).
 */
function closeDanglingToolCalls(transcript: ChatMessage[], fromIndex: number): void {
  for (let i = transcript.length - 1; i >= fromIndex; i--) {
    const message = transcript[i];
    if (message.role !== 'assistant') continue;
    const answered = new Set(
      transcript.slice(i + 1).flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])),
    );
    for (const call of message.tool_calls ?? []) {
      if (!answered.has(call.id)) {
        transcript.push(toolMessage(call.id, { success: false, error: 'Interrupted by the user before this tool finished' }));
      }
    }
    return;
  }
}

function lastAssistantText(transcript: ChatMessage[], fromIndex: number): string | null {
  for (let i = transcript.length - 1; i >= fromIndex; i--) {
    const message = transcript[i];
    if (message.role === 'assistant' && message.content) return message.content;
  }
  return null;
}
