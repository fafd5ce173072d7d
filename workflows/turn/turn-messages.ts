/**
 * The transcript side of a turn: tool messages, closing calls left without a result, and what the
 * turn's messages hold (last reply, tool-call count, repeated failures). Workflow code, deterministic.
 */
import type { ToolCall, ToolResult } from '../../common/messages';
import { type HashedTranscript, toolMessage } from '../../common/transcript';

export { toolMessage };
import { truncateArguments } from './tool-calls';

export const INTERRUPTED_RESULT: ToolResult = { success: false, error: 'Interrupted by the user before this tool finished' };
export const FILTERED_RESULT: ToolResult = { success: false, error: "Not run: the model server's content filter stopped the reply" };

/**
 * After an interrupt, answer every tool call that has no result yet, so the transcript stays a
 * valid conversation for the next model call (each tool call must be followed by its result).
 */
export function closeDanglingToolCalls(transcript: HashedTranscript, fromIndex: number, result: ToolResult = INTERRUPTED_RESULT): void {
  const messages = transcript.messages;
  for (let i = messages.length - 1; i >= fromIndex; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant') continue;
    const answered = new Set(messages.slice(i + 1).flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
    for (const call of message.tool_calls ?? []) {
      if (!answered.has(call.id)) transcript.push(toolMessage(call.id, result));
    }
    return;
  }
}

export function lastAssistantText(transcript: HashedTranscript, fromIndex: number): string | null {
  const messages = transcript.messages;
  for (let i = messages.length - 1; i >= fromIndex; i--) {
    const message = messages[i]!;
    if (message.role === 'assistant' && message.content) return message.content;
  }
  return null;
}

export function countToolCalls(transcript: HashedTranscript, fromIndex: number): number {
  let count = 0;
  const messages = transcript.messages;
  for (let i = fromIndex; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === 'assistant') count += message.tool_calls?.length ?? 0;
  }
  return count;
}

/**
 * Count each failing call (tool, arguments, error). The second time the same call fails the same
 * way, its result tells the model so; at `max` the turn ends `stuck` (returns the reply).
 */
export function noteRepeatedFailures(transcript: HashedTranscript, calls: ToolCall[], results: (ToolResult | undefined)[], failures: Record<string, number>, max: number): string | undefined {
  let stuck: string | undefined;
  calls.forEach((call, i) => {
    const result = results[i];
    if (!result || result.success || result.declined) return;
    const key = `${call.function.name}\u0000${call.function.arguments}\u0000${String(result.error)}`;
    const count = (failures[key] ?? 0) + 1;
    failures[key] = count;
    if (count >= max) {
      stuck ??= `The same call kept failing (${count} times): ${call.function.name} ${truncateArguments(call.function.arguments)} → ${String(result.error)}. Tell me how to go on.`;
    } else if (count >= 2) {
      transcript.push({
        role: 'system',
        content: `[Loopwright] This exact call has now failed ${count} times with the same error: ${call.function.name} ${truncateArguments(call.function.arguments)} → ${String(result.error)}. Do not repeat it; change the arguments, try something else, or ask the user.`,
      });
    }
  });
  return stuck;
}
