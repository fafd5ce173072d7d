/**
 * Where a session's transcript stands, in a form both sides can check: a chain hash over the
 * messages (h[n] = sha256(h[n-1] + canonical(m[n]))). The workflow keeps the messages and passes the
 * model-call activity only a reference (count + hash) and, when they are small, the messages added
 * since its last call; the worker keeps a copy per session and refills it from the `transcriptPage`
 * query when it misses. Pure code: runs in the workflow sandbox and in the worker alike.
 */
import { sha256Hex } from './sha256';
import type { ChatMessage, ToolMessage, ToolResult } from './messages';

/** Hash of an empty transcript. */
export const EMPTY_TRANSCRIPT_HASH = '0'.repeat(32);

/** Messages added since the model's last call travel inline only up to this many bytes; more are fetched by query. */
export const INLINE_DELTA_BYTES = 4 * 1024;

/** Largest page the `transcriptPage` query returns (a page holds at least one message): under the 512 KB at which Temporal warns of a large payload. */
export const TRANSCRIPT_PAGE_BYTES = 384 * 1024;

/** A transcript this small travels inline in the continue-as-new input; a larger one is paged over. */
export const CARRY_INLINE_BYTES = 256 * 1024;

/**
 * Largest single message the transcript accepts (UTF-8 bytes of its JSON). Temporal refuses payloads
 * over 2 MB, and a message is encoded once more as a payload, so one message stays well under that.
 */
export const MAX_MESSAGE_BYTES = 1_000_000;

/**
 * Messages `[from, to)` a run does not hold: they stand in the run it continued from (and the chain
 * hash after them is `hash`). A run continued from a compacted one carries only the messages the
 * model's view still needs.
 */
export interface TranscriptGap {
  from: number;
  to: number;
  hash: string;
}

/** Where the transcript stands: run, message count and chain hash (and the gap of messages the run does not hold). */
export interface TranscriptRef {
  workflowId: string;
  runId: string;
  count: number;
  hash: string;
  gap?: TranscriptGap;
}

/** Messages `[from, from + messages.length)` of a transcript. */
export interface TranscriptSlice {
  from: number;
  messages: ChatMessage[];
}

/** The `transcriptPage` query's answer. */
export interface TranscriptPage extends TranscriptSlice {
  /** Messages in the transcript now. */
  total: number;
  /** Chain hash after the last message of this page. */
  hash: string;
  /** Set (with no messages) when `from` is in the run's gap: messages up to `to` are in run `runId`. */
  earlier?: { runId: string; to: number };
}

/**
 * The fields of a message that the model sees, in a fixed order: the hash must not depend on how a
 * message object's keys happen to be ordered after a round trip through JSON.
 */
export function canonicalMessage(message: ChatMessage): string {
  const toolCalls = message.role === 'assistant' && message.tool_calls ? message.tool_calls.map((c) => [c.id, c.type, c.function.name, c.function.arguments]) : null;
  return JSON.stringify([message.role, message.content ?? null, message.role === 'tool' ? message.tool_call_id : null, toolCalls]);
}

/** The chain hash after appending `message` to a transcript whose hash is `previous`. */
export function chainHash(previous: string, message: ChatMessage): string {
  return sha256Hex(`${previous}\n${canonicalMessage(message)}`).slice(0, 32);
}

/** A tool message; a result too large for one payload is replaced by an error the model can act on. */
export function toolMessage(toolCallId: string, result: ToolResult): ToolMessage {
  const message: ToolMessage = { role: 'tool', tool_call_id: toolCallId, content: JSON.stringify(result) };
  const bytes = jsonBytes(message);
  if (bytes <= MAX_MESSAGE_BYTES) return message;
  const error = `The tool result is ${bytes} bytes, over the limit of ${MAX_MESSAGE_BYTES} bytes for one message; ask for a smaller file or part`;
  return { role: 'tool', tool_call_id: toolCallId, content: JSON.stringify({ success: false, error }) };
}

/** UTF-8 bytes of a value's JSON, the measure of every size limit here. */
export function jsonBytes(value: unknown): number {
  return utf8Length(JSON.stringify(value) ?? '');
}

/** Any character outside ASCII (no `g` flag: `test` keeps no state). */
// eslint-disable-next-line no-control-regex -- the ASCII range starts at NUL
const NON_ASCII = /[^\x00-\x7f]/;

/** UTF-8 length of a string without allocating its encoding. */
export function utf8Length(text: string): number {
  // Most texts are ASCII: one native scan instead of a loop over every character.
  if (!NON_ASCII.test(text)) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      // A surrogate pair is one four-byte character.
      bytes += 4;
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes, cut between characters. */
export function utf8Prefix(text: string, maxBytes: number): string {
  if (utf8Length(text) <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = utf8Length(char);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end);
}

/**
 * An append-only list of messages with the chain hash after each one. The workflow's transcript
 * and the worker's copy are both this.
 */
export class HashedTranscript {
  private readonly items: ChatMessage[] = [];
  private readonly hashes: string[] = [];
  private readonly sizes: number[] = [];
  private totalBytes = 0;
  private missing: TranscriptGap | undefined;

  constructor(messages: readonly ChatMessage[] = []) {
    for (const message of messages) this.push(message);
  }

  get length(): number {
    return this.items.length;
  }

  /** The messages this transcript does not hold, if any (see TranscriptGap). */
  get gap(): TranscriptGap | undefined {
    return this.missing;
  }

  /**
   * Start an empty transcript as `head` followed by a gap up to `to`, whose chain hash there is
   * `hash`: the messages `[head.length, to)` are not held. Pushes go on from `to`.
   */
  startWithGap(head: readonly ChatMessage[], to: number, hash: string): void {
    if (this.items.length > 0) throw new Error('startWithGap needs an empty transcript');
    this.push(...head);
    if (to <= head.length) return;
    this.missing = { from: head.length, to, hash };
    // A holey array: the gap costs no memory per message.
    this.items.length = to;
    this.hashes.length = to;
    this.sizes.length = to;
    this.hashes[to - 1] = hash;
  }

  /** True when message `index` is in the gap (not held). */
  inGap(index: number): boolean {
    return this.missing !== undefined && index >= this.missing.from && index < this.missing.to;
  }

  /** UTF-8 bytes of every message's JSON. */
  get bytes(): number {
    return this.totalBytes;
  }

  /** The messages themselves (do not modify). */
  get messages(): readonly ChatMessage[] {
    return this.items;
  }

  /** Hash after the first `count` messages. */
  hashAt(count: number = this.items.length): string {
    if (count < 0 || count > this.items.length) throw new RangeError(`no hash at ${count}: the transcript has ${this.items.length} messages`);
    if (count === 0) return EMPTY_TRANSCRIPT_HASH;
    const hash = this.hashes[count - 1];
    if (hash === undefined) throw new RangeError(`no hash at ${count}: messages ${this.missing?.from}-${(this.missing?.to ?? 0) - 1} are not held by this run`);
    return hash;
  }

  /** Bytes of message `index` (0 in the gap). */
  sizeAt(index: number): number {
    return this.sizes[index] ?? 0;
  }

  push(...messages: ChatMessage[]): void {
    for (const message of messages) {
      const size = jsonBytes(message);
      this.hashes.push(chainHash(this.hashAt(), message));
      this.items.push(message);
      this.sizes.push(size);
      this.totalBytes += size;
    }
  }

  /** Drop every message from `count` on. */
  truncate(count: number): void {
    if (this.missing && count < this.missing.to) throw new RangeError(`cannot truncate to ${count}: messages ${this.missing.from}-${this.missing.to - 1} are not held`);
    while (this.items.length > count) {
      this.items.pop();
      this.hashes.pop();
      this.totalBytes -= this.sizes.pop() ?? 0;
    }
  }

  slice(from = 0, to = this.items.length): ChatMessage[] {
    return this.items.slice(from, to);
  }

  /** Bytes of messages `[from, to)`. */
  bytesBetween(from: number, to = this.items.length): number {
    let bytes = 0;
    for (let i = from; i < to; i++) bytes += this.sizes[i] ?? 0;
    return bytes;
  }

  /** Messages from `from` (up to `to`), stopping before `maxBytes` would be passed; at least one message. */
  page(from: number, maxBytes = TRANSCRIPT_PAGE_BYTES, to = this.items.length): TranscriptPage {
    const start = Math.max(0, Math.min(from, this.items.length));
    // A page stops where the gap starts (a page inside the gap is the caller's to answer).
    const end = Math.min(to, this.items.length, this.missing && start < this.missing.from ? this.missing.from : Infinity);
    let stop = start;
    let bytes = 0;
    while (stop < end && (stop === start || bytes + this.sizes[stop]! <= maxBytes)) {
      bytes += this.sizes[stop]!;
      stop += 1;
    }
    return { from: start, messages: this.items.slice(start, stop), total: this.items.length, hash: this.hashAt(stop) };
  }
}
