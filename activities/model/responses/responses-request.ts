/**
 * The Responses request of a model call (OpenAI's `/v1/responses`), from the model's view of the
 * transcript. The transcript is in the Chat Completions shape; Responses takes a list of input
 * items instead: the leading system prompt is `instructions`, messages are `message` items, an
 * assistant's tool calls are `function_call` items (with their `call_id`) and tool results
 * `function_call_output` items answering them. A reply's reasoning items go back unchanged, in
 * order, before its text and calls. Nothing depends on the server's state: `store: false`, and the
 * reasoning comes back encrypted (`include: ['reasoning.encrypted_content']`) to be sent again.
 * Pure: the caller sends it.
 */
import type { FunctionTool, ResponseCreateParamsNonStreaming, ResponseInputItem, ToolChoiceOptions } from 'openai/resources/responses/responses';
import type { AssistantMessage, ChatMessage, ToolDefinition } from '../../../common/messages';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../../../common/model-call';
import type { ProviderCall } from '../provider';

/** Fields `extraBody` may never set: what the call is about, how it is read, and that it is stateless. */
const PROTECTED_FIELDS: ReadonlySet<string> = new Set(['model', 'input', 'instructions', 'tools', 'stream', 'store', 'include', 'previous_response_id']);

/** The smallest `max_output_tokens` the API takes. */
export const MIN_OUTPUT_TOKENS = 16;

/** The request body of `call`: instructions, input items, tools and settings in Responses form. */
export function buildResponsesRequest(call: ProviderCall): ResponseCreateParamsNonStreaming {
  const settings = call.settings ?? {};
  const { instructions, input } = toInputItems(call.messages);
  const maxTokens = settings.maxOutputTokens ?? call.maxTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const body: ResponseCreateParamsNonStreaming = {
    model: call.model,
    input,
    max_output_tokens: Math.max(MIN_OUTPUT_TOKENS, maxTokens),
    store: false,
    include: ['reasoning.encrypted_content'],
  };
  if (instructions !== '') body.instructions = instructions;
  if (call.tools.length > 0) {
    body.tools = call.tools.map(toTool);
    body.tool_choice = (settings.toolChoice ?? 'auto') as ToolChoiceOptions;
  }
  const temperature = settings.temperature ?? call.temperature;
  if (temperature !== undefined) body.temperature = temperature;
  if (settings.reasoningEffort !== undefined) body.reasoning = { effort: settings.reasoningEffort, summary: 'auto' };
  const format = call.responseFormat;
  if (format && format.type === 'json_schema') {
    body.text = { format: { type: 'json_schema', name: format.json_schema.name, schema: format.json_schema.schema ?? {}, strict: format.json_schema.strict ?? false } };
  } else if (format && format.type === 'json_object') body.text = { format: { type: 'json_object' } };
  const merged: Record<string, unknown> = { ...body };
  for (const [key, value] of Object.entries(settings.extraBody ?? {})) {
    if (!PROTECTED_FIELDS.has(key)) merged[key] = value;
  }
  return merged as unknown as ResponseCreateParamsNonStreaming;
}

/** The transcript's messages as Responses' instructions and input items. */
export function toInputItems(chat: readonly ChatMessage[]): { instructions: string; input: ResponseInputItem[] } {
  let index = 0;
  const leading: string[] = [];
  while (index < chat.length && chat[index]!.role === 'system') leading.push(chat[index++]!.content ?? '');
  const instructions = leading.filter((t) => t.trim() !== '').join('\n\n');
  const input: ResponseInputItem[] = [];
  for (; index < chat.length; index++) {
    const message = chat[index]!;
    switch (message.role) {
      case 'system':
        // A later system message (the loop's notices) is the developer's word, as Responses names it.
        input.push({ type: 'message', role: 'developer', content: message.content ?? '' });
        break;
      case 'user':
        input.push({ type: 'message', role: 'user', content: message.content ?? '' });
        break;
      case 'assistant':
        input.push(...assistantItems(message));
        break;
      case 'tool':
        input.push({ type: 'function_call_output', call_id: message.tool_call_id, output: message.content ?? '' });
        break;
      default:
        break;
    }
  }
  return { instructions, input };
}

/** A reply as it goes back: its reasoning items unchanged, then its text, then its function calls. */
function assistantItems(message: AssistantMessage): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  for (const item of message.reasoning_items ?? []) {
    items.push({ type: 'reasoning', id: item.id, summary: item.summary, ...(item.encrypted_content ? { encrypted_content: item.encrypted_content } : {}) });
  }
  if (message.content !== null && message.content !== '') items.push({ type: 'message', role: 'assistant', content: message.content });
  for (const call of message.tool_calls ?? []) {
    items.push({ type: 'function_call', call_id: call.id, name: call.function.name, arguments: call.function.arguments });
  }
  // A reasoning item must be followed by what it led to: a reply of reasoning alone goes without it.
  return items.some((i) => i.type !== 'reasoning') ? items : [];
}

/** A tool definition as a Responses function tool (not strict: the project's schemas are not all strict-mode schemas). */
function toTool(tool: ToolDefinition): FunctionTool {
  return {
    type: 'function',
    name: tool.function.name,
    ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
    parameters: tool.function.parameters as FunctionTool['parameters'],
    strict: false,
  };
}
