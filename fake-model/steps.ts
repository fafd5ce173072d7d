/**
 * Script steps of the fake model server: what it does with one chat-completion request. Tests queue
 * them in order (`enqueue(toolCalls(...), text(...))`) or return them from a responder.
 */
import type { RecordedRequest } from './recorded-request';
import type { StreamRate } from './stream';

/** Usage numbers that override the ones the server derives from the project's token estimate. */
export interface UsageOverride {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
}

/** Options shared by the successful replies. */
export interface ReplyOptions {
  /** `model` field of the reply (default: the request's model, else the server's). */
  model?: string;
  /** `finish_reason` (default `stop` for text, `tool_calls` for tool calls). */
  finishReason?: string;
  usage?: UsageOverride;
  /** Send no `usage` object at all, as some compatible servers do. */
  omitUsage?: boolean;
  /**
   * The model's reasoning, sent as `message.reasoning_content` (streamed: `reasoning_content` deltas
   * before the content), as llama.cpp and vLLM send it. It is neither counted in usage nor cut by
   * the output limit.
   */
  reasoning?: string;
  /**
   * Streamed, this reply goes at this pace (and stops at this hold) instead of the server's
   * streaming setting, so that tests running at the same time need not share one setting.
   */
  stream?: StreamRate;
}

/** A plain assistant reply. */
export interface TextStep {
  kind: 'text';
  content: string;
  options: ReplyOptions;
}

/** One function call in a `toolCalls` step. A string `arguments` is sent verbatim (malformed JSON allowed). */
export interface FakeToolCall {
  name: string;
  arguments: Record<string, unknown> | string;
  id?: string;
}

/** An assistant reply that calls tools. */
export interface ToolCallsStep {
  kind: 'tool_calls';
  calls: FakeToolCall[];
  options: ReplyOptions & { content?: string | null };
}

/** An HTTP error reply in OpenAI's error shape. */
export interface FaultStep {
  kind: 'fault';
  status: number;
  options: FaultOptions;
}

/** Options of a fault. */
export interface FaultOptions {
  /** `Retry-After` header: seconds, or an HTTP date string. */
  retryAfter?: string | number;
  /** `retry-after-ms` header (OpenAI's own, millisecond precision). */
  retryAfterMs?: number;
  /** The whole response body instead of the default `{error:{message,type,code}}`; a string goes out as is. */
  body?: unknown;
  /** Message inside the default error body. */
  message?: string;
  /** `error.code` inside the default error body. */
  code?: string | null;
}

/** Answer with another step after a pause (nothing is sent if the client disconnects first). */
export interface DelayStep {
  kind: 'delay';
  ms: number;
  step: Step;
}

/** Destroy the connection without any response. */
export interface DropStep {
  kind: 'drop';
}

/** Never answer; the request stays open until the client aborts or the server closes. */
export interface HangStep {
  kind: 'hang';
}

/** Any HTTP status, headers and body, for replies the other steps cannot express (e.g. no choices). */
export interface RawStep {
  kind: 'raw';
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/** Content encodings a bomb can be sent in (Node's fetch decodes each of them transparently). */
export type BombEncoding = 'gzip' | 'deflate' | 'br';

/**
 * A reply body that is small on the wire and `inflatedBytes` long once decoded: the start of a
 * chat-completion JSON object whose content never ends, compressed with `encoding` (bombs.ts).
 */
export interface BombStep {
  kind: 'bomb';
  encoding: BombEncoding;
  inflatedBytes: number;
  status: number;
}

/**
 * A chunked reply body that never ends (the start of a chat-completion JSON object, then content
 * forever), plain or compressed, sent as fast as the client reads it until it disconnects.
 */
export interface EndlessStep {
  kind: 'endless';
  encoding: BombEncoding | 'identity';
  status: number;
}

/** What the server does with one request. */
export type Step = TextStep | ToolCallsStep | FaultStep | DelayStep | DropStep | HangStep | RawStep | BombStep | EndlessStep;

/** Decides the reply to a request dynamically; `index` is the request's 0-based position. */
export type Responder = (request: RecordedRequest, index: number) => Step | Promise<Step>;

/** Reply with assistant text. */
export function text(content: string, options: ReplyOptions = {}): TextStep {
  return { kind: 'text', content, options };
}

/** Reply with tool calls (ids `call_<n>` unless given); `options.content` adds text beside them. */
export function toolCalls(calls: FakeToolCall[], options: ToolCallsStep['options'] = {}): ToolCallsStep {
  return { kind: 'tool_calls', calls, options };
}

/** Reply with an HTTP error status, optionally with Retry-After headers. */
export function fault(status: number, options: FaultOptions = {}): FaultStep {
  return { kind: 'fault', status, options };
}

/** Perform `step` after `ms` milliseconds. */
export function delay(ms: number, step: Step): DelayStep {
  return { kind: 'delay', ms, step };
}

/** Destroy the socket without answering (the client sees a connection error). */
export function drop(): DropStep {
  return { kind: 'drop' };
}

/** Never answer (until the client aborts). */
export function hang(): HangStep {
  return { kind: 'hang' };
}

/** Reply with exactly this status, body (a string goes out as is) and headers. */
export function raw(status: number, body: unknown, headers: Record<string, string> = {}): RawStep {
  return { kind: 'raw', status, body, headers };
}

/** Default decoded size of a `bomb`: 256 MiB, a few hundred KB on the wire with gzip. */
export const DEFAULT_BOMB_BYTES = 256 * 1024 * 1024;

/** Reply with a compression bomb (see BombStep); `status` 200 unless given. */
export function bomb(encoding: BombEncoding, options: { inflatedBytes?: number; status?: number } = {}): BombStep {
  return { kind: 'bomb', encoding, inflatedBytes: options.inflatedBytes ?? DEFAULT_BOMB_BYTES, status: options.status ?? 200 };
}

/** Reply with a body that never ends (see EndlessStep); `identity` and status 200 unless given. */
export function endless(options: { encoding?: EndlessStep['encoding']; status?: number } = {}): EndlessStep {
  return { kind: 'endless', encoding: options.encoding ?? 'identity', status: options.status ?? 200 };
}
