/**
 * The Messages request of a model call (Anthropic's API), from the model's view of the transcript.
 * The transcript is in the Chat Completions shape; Messages differs in ways its server enforces:
 * the system prompt is a field of its own, roles alternate (a tool result is a `tool_result` block
 * of a user message, and consecutive results share one), tool calls are `tool_use` blocks with an
 * object input, a reply's thinking blocks go back unchanged before its text and tool calls, empty
 * text blocks are refused, and `max_tokens` is required. With `cache`, prompt-cache breakpoints
 * follow the transcript's stable prefix (see addCacheBreakpoints). Pure: the caller sends it.
 */
import type { ContentBlockParam, MessageCreateParamsNonStreaming, MessageParam, TextBlockParam, Tool, ToolChoice } from '@anthropic-ai/sdk/resources/messages/messages';
import type { AssistantMessage, ChatMessage, ToolDefinition } from '../../../common/messages';
import { DEFAULT_MAX_OUTPUT_TOKENS, type ModelSettings } from '../../../common/model-call';
import type { ProviderCall } from '../provider';

/** Fields `extraBody` may never set: what the call is about, and how it is read. */
const PROTECTED_FIELDS: ReadonlySet<string> = new Set(['model', 'messages', 'system', 'tools', 'stream']);

/** What stands in for a message with no text (the API refuses empty text blocks). */
export const EMPTY_TEXT = '(empty)';

/** What opens a conversation whose first message is the assistant's (the API wants a user first). */
export const CONVERSATION_CONTINUES = '(The conversation continues.)';

/** Thinking budgets for `reasoningEffort`, in tokens (the API's minimum is 1024). */
export const THINKING_BUDGETS: Record<NonNullable<ModelSettings['reasoningEffort']>, number> = { minimal: 1024, low: 2048, medium: 8192, high: 16384 };

/** The smallest thinking budget the API takes. */
const MIN_THINKING_BUDGET = 1024;

/** The request body of `call`: system, messages, tools and settings in Messages form. */
export function buildMessagesRequest(call: ProviderCall): MessageCreateParamsNonStreaming {
  const settings = call.settings ?? {};
  const { system, messages } = toMessages(call.messages);
  const maxTokens = settings.maxOutputTokens ?? call.maxTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const body: MessageCreateParamsNonStreaming = { model: call.model, max_tokens: maxTokens, messages };
  if (system.length > 0) body.system = system;
  const budget = settings.reasoningEffort !== undefined ? Math.min(THINKING_BUDGETS[settings.reasoningEffort], maxTokens - 1) : 0;
  const thinking = budget >= MIN_THINKING_BUDGET;
  if (thinking) body.thinking = { type: 'enabled', budget_tokens: budget };
  if (call.tools.length > 0) {
    body.tools = call.tools.map(toTool);
    // With thinking on, the API takes only `auto` and `none`.
    body.tool_choice = toolChoice(settings.toolChoice ?? 'auto', thinking);
  }
  if (call.cache) addCacheBreakpoints(body);
  const merged: Record<string, unknown> = { ...body };
  // Sent only when the session sets one (the SDK's types no longer list it); with thinking on, the API refuses any.
  const temperature = settings.temperature ?? call.temperature;
  if (temperature !== undefined && !thinking) merged.temperature = temperature;
  for (const [key, value] of Object.entries(settings.extraBody ?? {})) {
    if (!PROTECTED_FIELDS.has(key)) merged[key] = value;
  }
  return merged as unknown as MessageCreateParamsNonStreaming;
}

/** The breakpoint Anthropic's prompt cache takes: the prefix up to a marked block, kept five minutes. */
const BREAKPOINT = { type: 'ephemeral' } as const;

/**
 * Prompt-cache breakpoints on the stable prefix of an append-only transcript (at most 3 of the
 * API's 4): the system prompt's last block (the tools come before it, so they are in that prefix;
 * the last tool when there is no system prompt), the last block of the message before the latest
 * reply (where the previous call's prompt ended: its cache entry is read), and the last block of
 * this call's messages (written, for the next call to read). Thinking blocks take no marker.
 */
export function addCacheBreakpoints(body: MessageCreateParamsNonStreaming): void {
  const system = Array.isArray(body.system) ? body.system : [];
  if (system.length > 0) system[system.length - 1]!.cache_control = BREAKPOINT;
  else if (body.tools && body.tools.length > 0) (body.tools[body.tools.length - 1] as Tool).cache_control = BREAKPOINT;
  const { messages } = body;
  let lastReply = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'assistant') {
      lastReply = i;
      break;
    }
  }
  const marked = new Set([lastReply - 1, messages.length - 1].filter((i) => i >= 0));
  for (const index of marked) {
    const blocks = messages[index]!.content as ContentBlockParam[];
    const last = [...blocks].reverse().find((b) => b.type !== 'thinking' && b.type !== 'redacted_thinking');
    if (last) (last as { cache_control?: typeof BREAKPOINT }).cache_control = BREAKPOINT;
  }
}

/** The transcript's messages as Messages' system prompt and alternating user and assistant messages. */
export function toMessages(chat: readonly ChatMessage[]): { system: TextBlockParam[]; messages: MessageParam[] } {
  const system: TextBlockParam[] = [];
  let index = 0;
  const leading: string[] = [];
  while (index < chat.length && chat[index]!.role === 'system') leading.push(chat[index++]!.content ?? '');
  const systemText = leading.filter((t) => t.trim() !== '').join('\n\n');
  if (systemText !== '') system.push({ type: 'text', text: systemText });

  const messages: MessageParam[] = [];
  const add = (role: 'user' | 'assistant', blocks: ContentBlockParam[]): void => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    if (last && last.role === role) (last.content as ContentBlockParam[]).push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (; index < chat.length; index++) {
    const message = chat[index]!;
    switch (message.role) {
      case 'system':
      case 'user':
        // A later system message (the loop's notices) reaches the model as user text, as on Chat Completions.
        add('user', [text(message.content)]);
        break;
      case 'assistant':
        add('assistant', assistantBlocks(message));
        break;
      case 'tool':
        add('user', [{ type: 'tool_result', tool_use_id: toolUseId(message.tool_call_id), content: nonEmpty(message.content) }]);
        break;
      default:
        break;
    }
  }
  if (messages[0]?.role === 'assistant') messages.unshift({ role: 'user', content: [text(CONVERSATION_CONTINUES)] });
  // Results first: the API wants a user message's tool_result blocks before its text.
  for (const message of messages) {
    if (message.role === 'user') (message.content as ContentBlockParam[]).sort((a, b) => rank(a) - rank(b));
  }
  return { system, messages };
}

/** A reply as it goes back: its thinking blocks unchanged, then its text, then its tool calls. */
function assistantBlocks(message: AssistantMessage): ContentBlockParam[] {
  const blocks: ContentBlockParam[] = [];
  for (const block of message.thinking_blocks ?? [])
    blocks.push(block.type === 'thinking' ? { type: 'thinking', thinking: block.thinking, signature: block.signature } : { type: 'redacted_thinking', data: block.data });
  if (message.content !== null && message.content.trim() !== '') blocks.push({ type: 'text', text: message.content });
  for (const call of message.tool_calls ?? []) {
    blocks.push({ type: 'tool_use', id: toolUseId(call.id), name: call.function.name, input: toolInput(call.function.arguments) });
  }
  return blocks;
}

/** A tool definition as Anthropic's: its JSON schema is `input_schema`, always an object schema. */
function toTool(tool: ToolDefinition): Tool {
  const schema = tool.function.parameters;
  return { name: tool.function.name, description: tool.function.description, input_schema: { ...schema, type: 'object' } as Tool['input_schema'] };
}

function toolChoice(choice: NonNullable<ModelSettings['toolChoice']>, thinking: boolean): ToolChoice {
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required' && !thinking) return { type: 'any' };
  return { type: 'auto' };
}

/**
 * A tool call's arguments as the object `tool_use` needs. Arguments that are not a JSON object (a
 * model's malformed call, answered as such by the loop) go as `{"arguments": "<the text>"}`.
 */
export function toolInput(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args === '' ? '{}' : args);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Not JSON: kept as text below.
  }
  return { arguments: args };
}

/** Tool-use ids must match ^[a-zA-Z0-9_-]+$; other servers' ids are mapped the same way on both sides. */
export function toolUseId(id: string): string {
  const safe = id.replace(/[^a-zA-Z0-9_-]/g, '_');
  return safe === '' ? 'call_' : safe;
}

function text(content: string | null | undefined): TextBlockParam {
  return { type: 'text', text: nonEmpty(content) };
}

function nonEmpty(content: string | null | undefined): string {
  return content === null || content === undefined || content.trim() === '' ? EMPTY_TEXT : content;
}

function rank(block: ContentBlockParam): number {
  return block.type === 'tool_result' ? 0 : 1;
}
