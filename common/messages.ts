/**
 * Chat messages in the OpenAI wire shape. The session workflow owns an append-only array of these;
 * they are plain JSON so they can cross the workflow/activity boundary and be recorded in history.
 */

/** One function call requested by the model. `arguments` is the raw JSON text the model produced. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface SystemMessage {
  role: 'system';
  content: string;
}

export interface UserMessage {
  role: 'user';
  content: string;
}

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  tool_calls?: ToolCall[];
  /**
   * A reasoning model's thinking, as the server sent it (`reasoning_content`). Kept in the record;
   * sent back to the server only when the session's model settings say so (`sendReasoning`).
   */
  reasoning_content?: string;
  /**
   * Anthropic's thinking blocks of this reply, exactly as the server sent them (signatures
   * included): the Messages provider sends them back unchanged, as that API requires; other
   * providers never send them. `reasoning_content` holds their text for readers.
   */
  thinking_blocks?: ThinkingBlock[];
  /**
   * The reasoning items of an OpenAI Responses reply, in order, exactly as the server sent them
   * (encrypted content included): the Responses provider sends them back before the reply's text and
   * calls, so a stateless request (`store: false`) keeps the model's reasoning; other providers never
   * send them. `reasoning_content` holds their summaries for readers.
   */
  reasoning_items?: ReasoningItem[];
}

/** A thinking block of an Anthropic reply: its text and signature, or an encrypted (redacted) one. */
export type ThinkingBlock = { type: 'thinking'; thinking: string; signature: string } | { type: 'redacted_thinking'; data: string };

/** A reasoning item of a Responses reply: its id, its summary and the encrypted reasoning the server reads back. */
export interface ReasoningItem {
  id: string;
  summary: { type: 'summary_text'; text: string }[];
  encrypted_content?: string | null;
}

export interface ToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** Token counts reported by the model server for one call (or summed over a session). */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Of `promptTokens`, those read from the provider's prompt cache (when it says). */
  cacheReadTokens?: number;
  /** Of `promptTokens`, those written to the provider's prompt cache (when it says). */
  cacheWriteTokens?: number;
}

/** An OpenAI function-calling tool definition. */
export interface ToolDefinition {
  type: 'function';
  function: {
    name: string;
    description: string;
    parameters: Record<string, unknown>;
  };
}

/** What every tool returns; it is sent to the model as the JSON content of a `role: 'tool'` message. */
export interface ToolResult {
  success: boolean;
  error?: string;
  [key: string]: unknown;
}
