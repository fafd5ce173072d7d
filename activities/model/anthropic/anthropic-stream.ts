/**
 * A streamed Messages reply joined into the `Message` an unstreamed request returns, following the
 * documented event sequence: `message_start` (the message, its usage so far), per content block
 * `content_block_start`, `content_block_delta` (`text_delta`, `input_json_delta`, `thinking_delta`,
 * `signature_delta`) and `content_block_stop`, then `message_delta` (stop reason, usage) and
 * `message_stop`; `ping` and unknown events are skipped. While it is joined it shows the reply so
 * far to the live output (StreamSoFar), as the Chat Completions joiner does. Events are read as any
 * JSON: what is not understood is skipped, and normalizeMessagesReply judges the result.
 */
import { PREVIEW_CHARS, type StreamSoFar } from '../stream-progress';

/** One content block as its deltas arrive. */
interface BlockParts {
  block: Record<string, unknown>;
  text: string[];
  json: string[];
  thinking: string[];
  signature: string[];
}

/** Joins the events of one streamed reply. */
export class MessagesStreamJoiner implements StreamSoFar {
  private message: Record<string, unknown> = {};
  private usage: Record<string, unknown> = {};
  private readonly blocks = new Map<number, BlockParts>();
  private preview = '';
  private textChars = 0;
  private reasoningTotal = 0;

  add(event: unknown): void {
    if (!isRecord(event)) return;
    switch (event.type) {
      case 'message_start':
        if (isRecord(event.message)) {
          this.message = { ...event.message };
          if (isRecord(event.message.usage)) this.addUsage(event.message.usage);
        }
        break;
      case 'content_block_start':
        if (typeof event.index === 'number' && isRecord(event.content_block)) {
          this.blocks.set(event.index, { block: { ...event.content_block }, text: [], json: [], thinking: [], signature: [] });
        }
        break;
      case 'content_block_delta':
        if (typeof event.index === 'number' && isRecord(event.delta)) this.addDelta(event.index, event.delta);
        break;
      case 'message_delta':
        if (isRecord(event.delta)) {
          if (typeof event.delta.stop_reason === 'string') this.message.stop_reason = event.delta.stop_reason;
          if (event.delta.stop_sequence !== undefined) this.message.stop_sequence = event.delta.stop_sequence;
        }
        if (isRecord(event.usage)) this.addUsage(event.usage);
        break;
      default:
        break;
    }
  }

  private addDelta(index: number, delta: Record<string, unknown>): void {
    const parts = this.blocks.get(index);
    if (!parts) return;
    if (delta.type === 'text_delta' && typeof delta.text === 'string') {
      parts.text.push(delta.text);
      const room = PREVIEW_CHARS - this.preview.length;
      if (room > 0) this.preview += delta.text.slice(0, room);
      this.textChars += delta.text.length;
    } else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
      parts.json.push(delta.partial_json);
    } else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') {
      parts.thinking.push(delta.thinking);
      this.reasoningTotal += delta.thinking.length;
    } else if (delta.type === 'signature_delta' && typeof delta.signature === 'string') {
      parts.signature.push(delta.signature);
    }
  }

  /** Usage fields as they come: `message_delta` carries the final counts, later values win. */
  private addUsage(usage: Record<string, unknown>): void {
    for (const [key, value] of Object.entries(usage)) if (value !== null && value !== undefined) this.usage[key] = value;
  }

  text(): { preview: string; total: number } {
    return { preview: this.preview, total: this.textChars };
  }

  reasoningChars(): number {
    return this.reasoningTotal;
  }

  toolCallNames(): string[] {
    return [...this.blocks.values()].filter((p) => p.block.type === 'tool_use' && typeof p.block.name === 'string').map((p) => p.block.name as string);
  }

  /** The joined message, as an unstreamed request would have returned it. */
  joined(): Record<string, unknown> {
    const content = [...this.blocks.entries()].sort(([a], [b]) => a - b).map(([, parts]) => joinedBlock(parts));
    return { ...this.message, content, usage: this.usage };
  }
}

function joinedBlock(parts: BlockParts): Record<string, unknown> {
  const block = { ...parts.block };
  if (block.type === 'text') block.text = `${typeof block.text === 'string' ? block.text : ''}${parts.text.join('')}`;
  if (block.type === 'thinking') {
    block.thinking = `${typeof block.thinking === 'string' ? block.thinking : ''}${parts.thinking.join('')}`;
    block.signature = `${typeof block.signature === 'string' ? block.signature : ''}${parts.signature.join('')}`;
  }
  if (block.type === 'tool_use' && parts.json.length > 0) {
    const text = parts.json.join('');
    try {
      block.input = JSON.parse(text);
    } catch {
      // Kept as text: normalizeMessagesReply passes it on as the call's arguments.
      block.input = text;
    }
  }
  return block;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
