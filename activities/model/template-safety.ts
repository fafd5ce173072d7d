/**
 * The messages a request sends, shaped so that strict chat templates accept them. Several local
 * servers render the conversation through the model's own Jinja template, and many templates refuse
 * (raise) on a system message anywhere but first, or on two user messages in a row. The transcript
 * keeps what happened; this pass only changes how it is sent:
 *
 *   - every leading system message becomes ONE system message (joined by a blank line);
 *   - a later system message (the loop's notices) is appended, after a blank line, to the previous
 *     user or tool message, or becomes a user message when the previous one is the assistant's;
 *   - consecutive user messages are merged into one;
 *   - an assistant's `reasoning_content` is dropped unless `sendReasoning` (several servers refuse it);
 *   - nothing beyond the OpenAI wire shape is sent.
 *
 * Pure: never modifies its input (the worker's transcript copy holds the same objects).
 */
import type { AssistantMessage, ChatMessage, ToolCall } from '../../common/messages';

/** Options of `templateSafeMessages`. */
export interface TemplateSafetyOptions {
  /** Keep assistants' `reasoning_content` (ModelSettings.sendReasoning). */
  sendReasoning?: boolean;
}

/** Separator between merged texts. */
const BLANK_LINE = '\n\n';

/** The messages to send for `messages`, as described above. */
export function templateSafeMessages(messages: readonly ChatMessage[], options: TemplateSafetyOptions = {}): ChatMessage[] {
  const out: ChatMessage[] = [];
  let index = 0;
  const leading: string[] = [];
  while (index < messages.length && messages[index]!.role === 'system') {
    leading.push(messages[index]!.content ?? '');
    index += 1;
  }
  if (leading.length > 0) out.push({ role: 'system', content: leading.join(BLANK_LINE) });

  for (; index < messages.length; index++) {
    const message = messages[index]!;
    const previous = out[out.length - 1];
    switch (message.role) {
      case 'system':
        if (previous && (previous.role === 'user' || previous.role === 'tool')) {
          out[out.length - 1] = { ...previous, content: joined(previous.content, message.content) };
        } else if (previous && previous.role === 'system') {
          // Only reachable when nothing but system messages came before: still one system message.
          out[out.length - 1] = { role: 'system', content: joined(previous.content, message.content) };
        } else {
          out.push({ role: 'user', content: message.content ?? '' });
        }
        break;
      case 'user':
        if (previous && previous.role === 'user') out[out.length - 1] = { role: 'user', content: joined(previous.content, message.content) };
        else out.push({ role: 'user', content: message.content ?? '' });
        break;
      case 'assistant':
        out.push(wireAssistant(message, options.sendReasoning === true));
        break;
      case 'tool':
        out.push({ role: 'tool', tool_call_id: message.tool_call_id, content: message.content ?? '' });
        break;
      default:
        // A role the wire does not know cannot come from the transcript's types; drop it rather than send it.
        break;
    }
  }
  return out;
}

function joined(first: string | null | undefined, second: string | null | undefined): string {
  const a = first ?? '';
  const b = second ?? '';
  if (a === '') return b;
  if (b === '') return a;
  return `${a}${BLANK_LINE}${b}`;
}

function wireAssistant(message: AssistantMessage, sendReasoning: boolean): AssistantMessage {
  const out: AssistantMessage = { role: 'assistant', content: message.content ?? null };
  if (message.tool_calls && message.tool_calls.length > 0) out.tool_calls = message.tool_calls.map(wireToolCall);
  if (sendReasoning && typeof message.reasoning_content === 'string' && message.reasoning_content !== '') {
    out.reasoning_content = message.reasoning_content;
  }
  return out;
}

function wireToolCall(call: ToolCall): ToolCall {
  return { id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } };
}
