/**
 * The worker's secrets taken out of a model reply before it leaves the activity. A reply is stored
 * in workflow history and sent back with every later request, and a server (or a model told to)
 * can echo the request's key in it, encoded or not. Only the configured secrets are replaced, in
 * every form (redact.ts `redactKnownSecrets`): the reply is the conversation, and patterns for
 * key-like text would mangle ordinary answers.
 */
import type { AssistantMessage } from '../../common/messages';
import type { NormalizedReply } from '../model/normalize-response';
import { redactKnownSecrets } from './redact';

/** `reply` with every text from the server redacted: content, reasoning (thinking blocks, reasoning summaries), tool calls, model name and warnings. */
export function redactReply(reply: NormalizedReply, secrets: readonly string[]): NormalizedReply {
  if (secrets.length === 0) return reply;
  const redact = (text: string): string => redactKnownSecrets(text, secrets);
  const source = reply.message;
  const message: AssistantMessage = { ...source, content: source.content === null ? null : redact(source.content) };
  if (source.reasoning_content !== undefined) message.reasoning_content = redact(source.reasoning_content);
  // A thinking block whose text held a secret loses its signature's match: the key stays out of history all the same.
  if (source.thinking_blocks) message.thinking_blocks = source.thinking_blocks.map((b) => (b.type === 'thinking' ? { ...b, thinking: redact(b.thinking) } : b));
  // Reasoning summaries are text for readers; the encrypted content is opaque and goes back as it came.
  if (source.reasoning_items) message.reasoning_items = source.reasoning_items.map((r) => ({ ...r, summary: r.summary.map((s) => ({ ...s, text: redact(s.text) })) }));
  if (source.tool_calls) {
    message.tool_calls = source.tool_calls.map((call) => ({
      ...call,
      id: redact(call.id),
      function: { name: redact(call.function.name), arguments: redact(call.function.arguments) },
    }));
  }
  return {
    ...reply,
    message,
    model: reply.model === undefined ? undefined : redact(reply.model),
    ...(reply.warnings ? { warnings: reply.warnings.map(redact) } : {}),
  };
}
