/**
 * The project's token estimate: a documented approximation, not a tokenizer. One token per four
 * UTF-8 bytes of text, plus a fixed cost per message for the chat template's role markers. Pure
 * code: the workflow decides compaction with it (calibrated by the last call's recorded `usage`),
 * and the fake model server counts prompts the same way. A tokenizer library would tie the
 * estimate to one model family and add megabytes to every cached session; the calibration against
 * the server's own `usage` corrects for the model actually used.
 */
import type { ChatMessage, ToolDefinition } from './messages';
import { utf8Length } from './transcript';

/** UTF-8 bytes per token in the estimate. */
export const BYTES_PER_TOKEN = 4;

/** Tokens a chat template spends on one message besides its text (role markers, separators). */
export const TOKENS_PER_MESSAGE = 4;

/** Estimated tokens of a text. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(utf8Length(text) / BYTES_PER_TOKEN);
}

/** Estimated tokens of one message: its content, its tool calls' names and arguments, the per-message cost. */
export function estimateMessageTokens(message: ChatMessage): number {
  let tokens = TOKENS_PER_MESSAGE + estimateTextTokens(message.content ?? '');
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) tokens += TOKENS_PER_MESSAGE + estimateTextTokens(call.function.name) + estimateTextTokens(call.function.arguments);
  }
  return tokens;
}

/** Estimated tokens of the tool definitions a request offers. */
export function estimateToolTokens(tools: readonly ToolDefinition[]): number {
  return tools.length === 0 ? 0 : estimateTextTokens(JSON.stringify(tools));
}

/** Estimated prompt tokens of a request: its messages and its tools. */
export function estimatePromptTokens(messages: readonly ChatMessage[], tools: readonly ToolDefinition[] = []): number {
  let tokens = estimateToolTokens(tools);
  for (const message of messages) tokens += estimateMessageTokens(message);
  return tokens;
}
