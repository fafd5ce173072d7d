/**
 * Streamed model replies (`ModelSettings.stream`; the contract is common/stream-types.ts). The call
 * asks for server-sent events with usage, through the same openai client and cancellation signal
 * as an unstreamed call, and joins the chunks into the chat-completion object an unstreamed call
 * returns, so normalizeReply, redactReply and the size checks run on it unchanged. While chunks
 * arrive, the reply so far goes into the activity's heartbeat details (stream-progress.ts). The
 * event stream is bounded as it is read like any body: the client's fetch is limitedFetch
 * (reply-limit.ts), which counts every decoded byte of it. A server that refuses to stream (400
 * naming stream) is asked again without, at once and once, and is not asked to stream again by
 * this worker process; one that ignores `stream` and answers plain JSON is read as that JSON.
 *
 * The chunks are joined here rather than by openai's ChatCompletionStream: it overwrites
 * `reasoning_content` with each delta instead of joining them, and throws on a missing role,
 * finish_reason or tool-call type, which compatible servers omit and normalizeReply tolerates.
 */
import { log } from '@temporalio/activity';
import { APIError } from 'openai';
import type { ChatCompletionCreateParams, ChatCompletionCreateParamsNonStreaming, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { redactUrl } from '../redaction/redact';
import { PREVIEW_CHARS, type StreamProgressReporter, type StreamSoFar } from './stream-progress';

/** The openai client's `chat.completions.create` (completion.ts ChatCompletionsClient), called as is. */
export type CreateCompletion = (body: ChatCompletionCreateParams, options: { signal: AbortSignal }) => PromiseLike<unknown>;

/** What a streamed call needs besides the request body. */
export interface StreamCallOptions {
  /** The activity's cancellation signal: aborting it aborts the HTTP stream. */
  signal: AbortSignal;
  /** The configured base URL (undefined: OpenAI's), to remember a server that refuses to stream. */
  baseURL: string | undefined;
  /** Where the reply so far goes while it is written. */
  progress: StreamProgressReporter;
}

/** Base URLs whose server refused a streamed request: this worker process no longer asks them to stream. */
const refusedStreaming = new Set<string>();

/** How a 400 says the server cannot stream: "stream", "streaming", "stream_options" as words. */
const STREAM_REFUSAL = /\bstream(?:_options|ing|s)?\b/i;

/**
 * The reply to `body`, asked for as a stream: the chat completion an unstreamed request returns
 * (or the server's JSON when it did not stream). Throws what the client threw, for classifyModelError.
 */
export async function streamCompletion(create: CreateCompletion, body: ChatCompletionCreateParamsNonStreaming, options: StreamCallOptions): Promise<unknown> {
  const { signal } = options;
  const server = options.baseURL ?? 'https://api.openai.com/v1';
  if (refusedStreaming.has(server)) return create(body, { signal });
  const streamed: ChatCompletionCreateParamsStreaming = { ...body, stream: true, stream_options: { include_usage: true } };
  let opened: Opened;
  try {
    opened = await openStream(create(streamed, { signal }));
  } catch (err) {
    if (signal.aborted || !isStreamRefusal(err)) throw err;
    refusedStreaming.add(server);
    log.warn('The model server refused to stream; asked again without streaming, and not asked to stream again by this worker', {
      baseURL: redactUrl(server),
    });
    return create(body, { signal });
  }
  if (opened.kind === 'completion') return opened.completion;
  const joined = new ChunkJoiner();
  for await (const chunk of opened.chunks) {
    joined.add(chunk);
    options.progress.update(joined);
  }
  // The client ends the iteration quietly when its request is aborted: the cancellation must surface.
  if (signal.aborted) throw new Error('The model call was cancelled while its reply streamed');
  options.progress.finish(joined);
  return joined.completion();
}

/** True when `error` is a 400 whose message names streaming (the server does not stream, or not with stream_options). */
export function isStreamRefusal(error: unknown): boolean {
  if (!(error instanceof APIError) || error.status !== 400) return false;
  const body = (error.error ?? {}) as { message?: unknown };
  return [error.message, body.message].some((text) => typeof text === 'string' && STREAM_REFUSAL.test(text.slice(0, 2000)));
}

type Opened = { kind: 'chunks'; chunks: AsyncIterable<unknown> } | { kind: 'completion'; completion: unknown };

/** The openai client's APIPromise: its raw response tells an event stream from a plain JSON answer. */
interface WithResponse {
  withResponse(): Promise<{ data: unknown; response: Response }>;
}

/**
 * The chunks of the streamed reply, or the whole completion when the server answered plain JSON
 * (the client would read that body as an event stream with no events). Clients other than openai's
 * (tests) may return chunks or a completion directly.
 */
async function openStream(pending: PromiseLike<unknown>): Promise<Opened> {
  if (typeof (pending as Partial<WithResponse>).withResponse === 'function') {
    // The client's stream reads nothing until iterated, so the body is still unread here.
    const { data, response } = await (pending as unknown as WithResponse).withResponse();
    const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() ?? '';
    if (mediaType.includes('json')) return { kind: 'completion', completion: await response.json() };
    return { kind: 'chunks', chunks: data as AsyncIterable<unknown> };
  }
  const value = await pending;
  if (value !== null && typeof value === 'object' && Symbol.asyncIterator in value) return { kind: 'chunks', chunks: value as AsyncIterable<unknown> };
  return { kind: 'completion', completion: value };
}

/** One tool call as its deltas arrive. */
interface ToolCallParts {
  id?: string;
  type?: string;
  name: string;
  arguments: string[];
}

/** One choice as its deltas arrive. */
interface ChoiceParts {
  role?: string;
  content: string[];
  refusal: string[];
  reasoningContent: string[];
  reasoning: string[];
  toolCalls: ToolCallParts[];
  finishReason: string | null;
}

/**
 * The chunks of a streamed chat completion joined into the completion an unstreamed request
 * returns: id, model and created from the first chunk that has them, each choice's text, refusal
 * and reasoning (`reasoning_content`, or `reasoning`) joined, tool calls joined by their index (name
 * and id as last sent, arguments joined), the last finish_reason, and the usage chunk's usage.
 * Chunks are read as any JSON: what is not understood is skipped, and normalizeReply judges the result.
 */
export class ChunkJoiner implements StreamSoFar {
  private id: string | undefined;
  private model: string | undefined;
  private created: number | undefined;
  private systemFingerprint: string | undefined;
  private usage: unknown;
  private readonly choices = new Map<number, ChoiceParts>();
  /** The first choice's content and refusal, up to PREVIEW_CHARS each, and their full lengths. */
  private contentPreview = '';
  private contentChars = 0;
  private refusalPreview = '';
  private refusalChars = 0;
  private reasoningTotal = 0;

  add(chunk: unknown): void {
    if (!isRecord(chunk)) return;
    this.id ??= nonEmpty(chunk.id);
    this.model ??= nonEmpty(chunk.model);
    if (this.created === undefined && typeof chunk.created === 'number') this.created = chunk.created;
    this.systemFingerprint ??= nonEmpty(chunk.system_fingerprint);
    if (chunk.usage !== undefined && chunk.usage !== null) this.usage = chunk.usage;
    if (!Array.isArray(chunk.choices)) return;
    for (const choice of chunk.choices) {
      if (isRecord(choice)) this.addChoice(choice);
    }
  }

  private addChoice(choice: Record<string, unknown>): void {
    const index = typeof choice.index === 'number' ? choice.index : 0;
    let parts = this.choices.get(index);
    if (!parts) {
      parts = { content: [], refusal: [], reasoningContent: [], reasoning: [], toolCalls: [], finishReason: null };
      this.choices.set(index, parts);
    }
    if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') parts.finishReason = choice.finish_reason;
    const delta = choice.delta;
    if (!isRecord(delta)) return;
    const first = index === this.firstIndex();
    parts.role ??= nonEmpty(delta.role);
    const content = nonEmpty(delta.content);
    if (content !== undefined) {
      parts.content.push(content);
      if (first) [this.contentPreview, this.contentChars] = grow(this.contentPreview, this.contentChars, content);
    }
    const refusal = nonEmpty(delta.refusal);
    if (refusal !== undefined) {
      parts.refusal.push(refusal);
      if (first) [this.refusalPreview, this.refusalChars] = grow(this.refusalPreview, this.refusalChars, refusal);
    }
    for (const [field, list] of [
      ['reasoning_content', parts.reasoningContent],
      ['reasoning', parts.reasoning],
    ] as const) {
      const text = nonEmpty(delta[field]);
      if (text === undefined) continue;
      list.push(text);
      if (first) this.reasoningTotal += text.length;
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls) {
        if (isRecord(call)) addToolCall(parts.toolCalls, call);
      }
    }
  }

  /** The choice shown while streaming and read by normalizeReply: the lowest index seen. */
  private firstIndex(): number {
    let lowest = Infinity;
    for (const index of this.choices.keys()) lowest = Math.min(lowest, index);
    return lowest;
  }

  text(): { preview: string; total: number } {
    return this.contentChars > 0 || this.refusalChars === 0 ? { preview: this.contentPreview, total: this.contentChars } : { preview: this.refusalPreview, total: this.refusalChars };
  }

  reasoningChars(): number {
    return this.reasoningTotal;
  }

  toolCallNames(): string[] {
    const parts = this.choices.get(this.firstIndex());
    return (parts?.toolCalls ?? []).filter((c) => c !== undefined).map((c) => c.name);
  }

  /** The joined chat completion, as an unstreamed request would have returned it. */
  completion(): Record<string, unknown> {
    const choices = [...this.choices.entries()].sort(([a], [b]) => a - b).map(([index, parts]) => ({ index, message: joinedMessage(parts), finish_reason: parts.finishReason, logprobs: null }));
    return {
      ...(this.id !== undefined ? { id: this.id } : {}),
      object: 'chat.completion',
      ...(this.created !== undefined ? { created: this.created } : {}),
      ...(this.model !== undefined ? { model: this.model } : {}),
      ...(this.systemFingerprint !== undefined ? { system_fingerprint: this.systemFingerprint } : {}),
      choices,
      ...(this.usage !== undefined ? { usage: this.usage } : {}),
    };
  }
}

function joinedMessage(parts: ChoiceParts): Record<string, unknown> {
  const toolCalls = parts.toolCalls.filter((c) => c !== undefined);
  return {
    role: parts.role ?? 'assistant',
    content: parts.content.length > 0 ? parts.content.join('') : null,
    refusal: parts.refusal.length > 0 ? parts.refusal.join('') : null,
    ...(toolCalls.length > 0
      ? {
          tool_calls: toolCalls.map((c) => ({
            ...(c.id !== undefined ? { id: c.id } : {}),
            ...(c.type !== undefined ? { type: c.type } : {}),
            function: { name: c.name, arguments: c.arguments.join('') },
          })),
        }
      : {}),
    ...(parts.reasoningContent.length > 0 ? { reasoning_content: parts.reasoningContent.join('') } : {}),
    ...(parts.reasoning.length > 0 ? { reasoning: parts.reasoning.join('') } : {}),
  };
}

/**
 * One tool-call delta added at its index. A server that sends no index continues the last call,
 * unless the delta brings a new id.
 */
function addToolCall(calls: ToolCallParts[], delta: Record<string, unknown>): void {
  const id = nonEmpty(delta.id);
  let index: number;
  if (typeof delta.index === 'number' && Number.isSafeInteger(delta.index) && delta.index >= 0 && delta.index <= calls.length + 1000) index = delta.index;
  else if (calls.length === 0 || (id !== undefined && id !== calls.at(-1)?.id)) index = calls.length;
  else index = calls.length - 1;
  const call = (calls[index] ??= { name: '', arguments: [] });
  if (id !== undefined) call.id = id;
  const type = nonEmpty(delta.type);
  if (type !== undefined) call.type = type;
  const fn = delta.function;
  if (!isRecord(fn)) return;
  const name = nonEmpty(fn.name);
  if (name !== undefined) call.name = name;
  if (typeof fn.arguments === 'string' && fn.arguments !== '') call.arguments.push(fn.arguments);
}

/** `preview` with `text` added up to PREVIEW_CHARS, and the full length counted. */
function grow(preview: string, total: number, text: string): [string, number] {
  const room = PREVIEW_CHARS - preview.length;
  return [room > 0 ? preview + text.slice(0, room) : preview, total + text.length];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
