/**
 * Streamed replies of the fake model server, for requests with `"stream": true`, as OpenAI,
 * llama.cpp and vLLM send them: `text/event-stream` with one `data: <chat.completion.chunk>` event
 * per chunk and a final `data: [DONE]`. The chunks are cut from the very ChatCompletion object a
 * non-streamed request gets (response-bodies.ts), so they assemble to the same reply: the same text,
 * tool calls, ids, finish reason and usage, output-limit cuts included.
 *
 * The chunks, in order: `delta: {role: 'assistant', content: ''}`; the reasoning, if the step has
 * any, as `reasoning_content` deltas; the content as `content` deltas; each tool call as a first
 * delta with its index, id, type and name (`arguments: ''`), then its arguments as deltas of
 * `{index, function: {arguments}}`; a chunk with an empty delta and the `finish_reason`; and, when
 * the request asks for `stream_options: {include_usage: true}` and the reply has usage, a chunk with
 * `choices: []` and the usage (the other chunks then carry `usage: null`, as OpenAI's do).
 *
 * Text is cut into pieces of `chunkChars` characters (code points) and the events go out
 * `intervalMs` apart (`StreamRate`), so a test can watch a reply being written; with `holdAfterChunks`
 * a stream stops after that many chunks until the server's `releaseStreams()`, so a test can act
 * while a reply is certainly half written without writing it slowly from end to end. A reply can
 * carry a rate of its own (`stream` in ReplyOptions), with a `release` promise for its hold alone,
 * so that tests running at the same time on one server each pace and hold their own replies. The
 * request's status is recorded once the last event was sent; a client that disconnects before that
 * stops the sending and counts as an abort, as it does for a reply not yet sent.
 */
import type { ServerResponse } from 'node:http';
import type { ChatCompletionRequestBody, RecordedRequest } from './recorded-request';
import type { WireChatCompletion } from './response-bodies';

/** Pace of streamed replies. */
export interface StreamRate {
  /** Characters of text (content, reasoning, tool-call arguments) per chunk; default `DEFAULT_CHUNK_CHARS`. */
  chunkChars?: number;
  /** Pause between two events in milliseconds; default 0 (the whole stream is written at once). */
  intervalMs?: number;
  /** Stop after this many chunks (role chunk included) until the server releases its streams; default: never stop. */
  holdAfterChunks?: number;
  /**
   * With `holdAfterChunks`: go on once this settles instead of at the server's `releaseStreams()`,
   * a hold of the streams given it alone (a reply's own `stream` rate, see ReplyOptions).
   */
  release?: PromiseLike<unknown>;
}

/** How the server treats `"stream": true`: streams at a `StreamRate`, or refuses with a 400 (false). */
export type StreamingSetting = StreamRate | false;

export const DEFAULT_CHUNK_CHARS = 4;

/** The 400 body of a server that does not stream, in OpenAI's shape. */
export const STREAM_REFUSAL_BODY = {
  error: {
    message: "Unsupported value: 'stream' does not support true with this server: stream is not supported. Only the default (false) value is supported.",
    type: 'invalid_request_error',
    param: 'stream',
    code: 'unsupported_value',
  },
};

/** The delta of one chunk's choice. */
export interface WireDelta {
  role?: 'assistant';
  content?: string;
  reasoning_content?: string;
  tool_calls?: { index: number; id?: string; type?: 'function'; function: { name?: string; arguments: string } }[];
}

type WireUsage = NonNullable<WireChatCompletion['usage']>;

/** One `chat.completion.chunk` event. */
export interface WireChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: { index: number; delta: WireDelta; finish_reason: string | null; logprobs: null }[];
  usage?: WireUsage | null;
}

/** Whether a request asks for a streamed reply. */
export function wantsStream(body: ChatCompletionRequestBody | null): boolean {
  return body?.stream === true;
}

/** Check a setting's numbers: `chunkChars` and `holdAfterChunks` whole numbers >= 1, `intervalMs` a finite number >= 0. */
export function checkStreaming(setting: StreamingSetting): StreamingSetting {
  if (setting === false) return false;
  const { chunkChars, intervalMs, holdAfterChunks } = setting;
  if (chunkChars !== undefined && (!Number.isInteger(chunkChars) || chunkChars < 1)) {
    throw new Error(`fake model: chunkChars must be a whole number >= 1, got ${chunkChars}`);
  }
  if (intervalMs !== undefined && (!Number.isFinite(intervalMs) || intervalMs < 0)) {
    throw new Error(`fake model: intervalMs must be a number >= 0, got ${intervalMs}`);
  }
  if (holdAfterChunks !== undefined && (!Number.isInteger(holdAfterChunks) || holdAfterChunks < 1)) {
    throw new Error(`fake model: holdAfterChunks must be a whole number >= 1, got ${holdAfterChunks}`);
  }
  return { ...setting };
}

/** The chunks of `completion` (one choice), text cut every `chunkChars` characters. */
export function completionChunks(completion: WireChatCompletion, includeUsage: boolean, chunkChars = DEFAULT_CHUNK_CHARS): WireChunk[] {
  const usage = includeUsage ? completion.usage : undefined;
  const chunk = (delta: WireDelta, finishReason: string | null = null): WireChunk => ({
    id: completion.id,
    object: 'chat.completion.chunk',
    created: completion.created,
    model: completion.model,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    ...(usage ? { usage: null } : {}),
  });
  const choice = completion.choices[0]!;
  const { message } = choice;
  const chunks = [chunk({ role: 'assistant', content: '' })];
  for (const piece of pieces(message.reasoning_content ?? '', chunkChars)) chunks.push(chunk({ reasoning_content: piece }));
  for (const piece of pieces(message.content ?? '', chunkChars)) chunks.push(chunk({ content: piece }));
  (message.tool_calls ?? []).forEach((call, index) => {
    chunks.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }));
    for (const piece of pieces(call.function.arguments, chunkChars)) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  chunks.push(chunk({}, choice.finish_reason));
  if (usage) chunks.push({ ...chunk({}), choices: [], usage });
  return chunks;
}

/** `text` in pieces of `size` code points (none for the empty text). */
function pieces(text: string, size: number): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

/** Index of the first chunk whose delta carries content or a tool call (-1 when none does). */
function firstContentChunk(chunks: readonly WireChunk[]): number {
  return chunks.findIndex((c) => Boolean(c.choices[0]?.delta.content) || (c.choices[0]?.delta.tool_calls?.length ?? 0) > 0);
}

/**
 * Send `completion` as a stream at `rate`. `record.streamedChunks` counts the chunks sent so far,
 * `record.firstChunkAt` says when the first content or tool-call chunk was written;
 * `record.status` is set to 200 once the stream has ended. A closed connection stops the sending.
 * With `rate.holdAfterChunks`, the stream waits for `rate.release`, else for `hold()` (the server's
 * release), after that many chunks.
 */
export function sendStream(
  res: ServerResponse,
  record: RecordedRequest,
  completion: WireChatCompletion,
  rate: StreamRate,
  headers: Record<string, string>,
  hold: () => Promise<void> = () => Promise.resolve(),
): void {
  const includeUsage = record.body?.stream_options?.include_usage === true;
  const chunks = completionChunks(completion, includeUsage, rate.chunkChars);
  const events = [...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`), 'data: [DONE]\n\n'];
  const intervalMs = rate.intervalMs ?? 0;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  record.streamedChunks = 0;
  const firstContent = firstContentChunk(chunks);
  const finished = (): void => {
    record.status = 200;
  };
  const holdAt = rate.holdAfterChunks !== undefined && rate.holdAfterChunks < events.length ? rate.holdAfterChunks : undefined;
  const { release } = rate;
  const waitAtHold =
    release === undefined
      ? hold
      : (): Promise<void> =>
          Promise.resolve(release).then(
            () => undefined,
            () => undefined,
          );
  if (intervalMs === 0 && holdAt === undefined) {
    record.streamedChunks = chunks.length;
    if (firstContent >= 0) record.firstChunkAt = Date.now();
    res.end(events.join(''), finished);
    return;
  }
  let next = 0;
  let timer: NodeJS.Timeout | undefined;
  const sendNext = (): void => {
    timer = undefined;
    if (res.destroyed) return;
    const event = events[next]!;
    if (next === firstContent) record.firstChunkAt = Date.now();
    next += 1;
    if (next <= chunks.length) record.streamedChunks = next;
    if (next === events.length) {
      res.end(event, finished);
      return;
    }
    res.write(event);
    if (next === holdAt) {
      void waitAtHold().then(() => {
        if (!res.destroyed) schedule();
      });
      return;
    }
    schedule();
  };
  const schedule = (): void => {
    timer = setTimeout(sendNext, intervalMs);
    // Like a pending delay, a stream in progress never keeps a test process alive on its own.
    timer.unref();
  };
  res.on('close', () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  });
  sendNext();
}

/**
 * The streams waiting at their hold (`holdAfterChunks`): `wait()` resolves at the next `release()`,
 * at once while released; `arm()` makes later streams wait again (a new setting, a reset).
 */
export class StreamHolds {
  /** Waiting streams; `undefined` while released. */
  private held: Set<() => void> | undefined = new Set();

  wait(): Promise<void> {
    const held = this.held;
    if (held === undefined) return Promise.resolve();
    return new Promise((resolve) => {
      const release = (): void => {
        held.delete(release);
        resolve();
      };
      held.add(release);
    });
  }

  release(): void {
    const waiting = this.held;
    this.held = undefined;
    for (const release of waiting ?? []) release();
  }

  arm(): void {
    this.held ??= new Set();
  }

  count(): number {
    return this.held?.size ?? 0;
  }
}
