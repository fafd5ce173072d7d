/**
 * The model's view of a transcript. The transcript is the record and only grows; the view is what
 * one model call sends, described by a few numbers so that the workflow (deciding compaction from
 * recorded facts) and the worker (building the request from its transcript copy) derive the same
 * messages. Pure code: runs in the workflow sandbox and in the worker alike.
 *
 *   view = transcript[0, head)                 system prompt and what critical actions loaded, whole
 *        + summary message                     stands for transcript[head, from), when `summary` is set
 *        + transcript[from, end)               minus the `omit` ranges; tool messages before
 *                                              `pruneBefore` are sent as short stubs, except the
 *                                              skill activations listed in `keep`
 *
 * A skill's instructions stay in the view (Agent Skills client guide, step 5): an activation the
 * pruning reaches is kept whole (`keep`), and one a summary replaces is carried on in the summary's
 * text (`skillInstructions`), since a tool result cannot stand without its call.
 */
import type { ChatMessage, ToolCall, ToolMessage, UserMessage } from './messages';
import { toolSpec } from './tools';
import { ACTIVATE_SKILL } from './tools/activate-skill';
import { argsOf, targetOf } from './tools/tool-spec';
import { utf8Length, utf8Prefix } from './transcript';

/** The summarising call's system message starts with this, so a server (or a test's fake) can tell it apart. */
export const SUMMARY_PROMPT_MARKER = '[Loopwright summary request]';

/** Which messages of the transcript one model call sends, and in what form. */
export interface ModelView {
  /** Messages `[0, head)` are always sent whole: the system prompt and what critical actions loaded. */
  head: number;
  /** First transcript message sent after the summary; `head` while nothing is summarised. */
  from: number;
  /** Summary of messages `[head, from)`, sent as one user message in their place. */
  summary?: string;
  /** Tool messages at an index below this (and at or after `from`) are sent as stubs. */
  pruneBefore: number;
  /** Transcript ranges `[from, to)` left out of the view entirely (a turn whose message could not fit). */
  omit?: { from: number; to: number }[];
  /** Tool messages at these indexes are too large for the window on their own: sent cut to `oversizeBytes`. */
  prunedAlso?: number[];
  /** Bytes of content an oversized tool message keeps (its beginning), with a note saying it was cut. */
  oversizeBytes?: number;
  /** Tool messages (skill activations) sent whole although they lie before `pruneBefore`. */
  keep?: number[];
}

/** Heads the skill instructions a summary carries on. */
export const SKILL_INSTRUCTIONS_NOTE = '[Loopwright] Skill instructions still in effect (activated earlier in the conversation, kept whole):';

/**
 * Indexes of the successful skill activations (`activate_skill` results) among transcript messages
 * `[from, to)`: what compaction keeps in the view. The tool is named by its call in the transcript.
 */
export function skillActivations(messages: readonly ChatMessage[], from: number, to: number): number[] {
  const activating = new Set<string>();
  const out: number[] = [];
  for (let i = 0; i < to && i < messages.length; i++) {
    const message = messages[i];
    if (message === undefined) continue;
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) if (call.function.name === ACTIVATE_SKILL.name) activating.add(call.id);
    if (i >= from && message.role === 'tool' && activating.has(message.tool_call_id) && isSuccess(message.content)) out.push(i);
  }
  return out;
}

/** The instructions of the skill activations at `indexes`, the newest of each skill only, for a summary to carry on. */
export function skillInstructions(messages: readonly ChatMessage[], indexes: readonly number[]): string {
  const bySkill = new Map<string, string>();
  for (const i of indexes) {
    const message = messages[i];
    if (message?.role !== 'tool') continue;
    try {
      const result = JSON.parse(message.content) as { content?: unknown; skill?: { name?: unknown } };
      if (typeof result.content === 'string') bySkill.set(typeof result.skill?.name === 'string' ? result.skill.name : String(i), result.content);
    } catch {
      // Not a result of ours: nothing to carry on.
    }
  }
  return bySkill.size === 0 ? '' : `${SKILL_INSTRUCTIONS_NOTE}\n\n${[...bySkill.values()].join('\n\n')}`;
}

function isSuccess(content: string): boolean {
  try {
    return (JSON.parse(content) as { success?: unknown }).success === true;
  } catch {
    return false;
  }
}

/** The view of a transcript nothing has been compacted in yet. */
export function fullView(head: number): ModelView {
  return { head, from: head, pruneBefore: 0 };
}

/** The text of the message that stands for the summarised part. */
export function summaryMessage(view: ModelView): UserMessage {
  return {
    role: 'user',
    content:
      `[Loopwright] Summary of the earlier conversation (transcript messages ${view.head}-${view.from - 1}, ` +
      `compacted to fit the model's context window; the full record is kept):\n\n${view.summary ?? ''}`,
  };
}

/**
 * A pruned tool result: says what was there (tool, target argument, size) and how to get it again.
 * `call` is the assistant's tool call the message answers, when it is still in the transcript.
 */
export function prunedToolMessage(message: ToolMessage, call: ToolCall | undefined): ToolMessage {
  // The tool's target argument (a path) as the model wrote it; the tool name alone when there is none.
  const main = call ? targetOf(toolSpec(call.function.name), argsOf(call)) : undefined;
  const target = main !== undefined ? ` ${main.slice(0, 200)}` : '';
  const name = call ? call.function.name : 'the tool';
  let success = true;
  try {
    success = (JSON.parse(message.content) as { success?: unknown }).success !== false;
  } catch {
    // A result that is not JSON counts as a success.
  }
  return {
    role: 'tool',
    tool_call_id: message.tool_call_id,
    content: JSON.stringify({
      success,
      pruned: true,
      note: `This result of ${name}${target} (${utf8Length(message.content)} bytes) was removed from the model's context to save room; it was already answered upon. Call ${name} again if you need it.`,
    }),
  };
}

/** An oversized tool result: its first `bytes` bytes of content (never splitting a character) and a note. */
export function cutToolMessage(message: ToolMessage, bytes: number): ToolMessage {
  const kept = utf8Prefix(message.content, bytes);
  return {
    role: 'tool',
    tool_call_id: message.tool_call_id,
    content: `${kept}\n[Loopwright] This result was cut to its first ${utf8Length(kept)} of ${utf8Length(message.content)} bytes to fit the model's context window; the full result is kept in the transcript.`,
  };
}

/** The messages `view` sends, from the transcript's `messages` (the whole transcript, index 0 first). */
export function viewMessages(messages: readonly ChatMessage[], view: ModelView | undefined): ChatMessage[] {
  if (!view) return messages.slice();
  const out: ChatMessage[] = messages.slice(0, Math.min(view.head, messages.length));
  if (view.summary !== undefined && view.from > view.head) out.push(summaryMessage(view));
  const prunedAlso = new Set(view.prunedAlso ?? []);
  const keep = new Set(view.keep ?? []);
  // Tool calls by id, for the stubs' wording: only those of the part that is sent are needed.
  const calls = new Map<string, ToolCall>();
  for (let i = Math.max(view.from, view.head); i < messages.length; i++) {
    if (isOmitted(view, i)) continue;
    const message = messages[i]!;
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) calls.set(call.id, call);
    if (message.role === 'tool' && prunedAlso.has(i) && i >= view.pruneBefore) {
      out.push(view.oversizeBytes !== undefined ? cutToolMessage(message, view.oversizeBytes) : prunedToolMessage(message, calls.get(message.tool_call_id)));
    } else if (message.role === 'tool' && i < view.pruneBefore && !keep.has(i)) out.push(prunedToolMessage(message, calls.get(message.tool_call_id)));
    else out.push(message);
  }
  return out;
}

/** True when transcript message `index` is in one of the view's omitted ranges. */
export function isOmitted(view: ModelView, index: number): boolean {
  return (view.omit ?? []).some((r) => index >= r.from && index < r.to);
}
