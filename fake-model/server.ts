/**
 * A fake OpenAI-compatible HTTP server for tests, benchmarks and the quick-start demo. It speaks
 * `POST /v1/chat/completions` (a JSON reply; with `"stream": true`, server-sent chunks at a
 * settable pace, stream.ts, or, set so, a 400 refusing to stream; set so, a 400 refusing any
 * `response_format`), `GET /v1/models`,
 * `GET /v1/models/<id>` and, when asked to pass for llama.cpp, `GET /props` on 127.0.0.1; answers
 * each chat-completion request with the next scripted step (or a responder's choice), records every
 * request, and notices when a client gives up on one. Like a real server it can have a context
 * window and an output limit (limits.ts), counted with the project's token estimate; like a hostile
 * one it can answer with a compression bomb or a body that never ends (bombs.ts).
 */
import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RecordedRequest } from './recorded-request';
import { parseJson, readBody, recordOf } from './request-body';
import { contextErrorBody, exceedsWindow, mergeLimits, modelEntry, outputLimitOf, propsBody, type FakeLimits } from './limits';
import { sendBomb } from './bombs';
import { buildCompletion, buildErrorBody, faultHeaders, RESPONSE_FORMAT_REFUSAL_BODY, type IdCounters } from './response-bodies';
import type { Responder, Step } from './steps';
import { checkStreaming, sendStream, STREAM_REFUSAL_BODY, StreamHolds, wantsStream, type StreamingSetting, type StreamRate } from './stream';

export type { ChatCompletionRequestBody, RecordedRequest } from './recorded-request';
export { isSummaryRequest } from './limits';
export type { ContextErrorStyle, FakeLimits } from './limits';
export { bomb, DEFAULT_BOMB_BYTES, delay, drop, endless, fault, hang, raw, text, toolCalls } from './steps';
export type { BombEncoding, FakeToolCall, FaultOptions, ReplyOptions, Responder, Step } from './steps';
export { DEFAULT_CHUNK_CHARS, STREAM_REFUSAL_BODY } from './stream';
export { RESPONSE_FORMAT_REFUSAL_BODY } from './response-bodies';
export type { StreamingSetting, StreamRate } from './stream';

/** Model the server names in `/v1/models` and in replies to requests that name none. */
export const FAKE_MODEL = 'loopwright-fake-model';

/** Message of the 500 reply sent when a request arrives and nothing says how to answer it. */
export const SCRIPT_EXHAUSTED_MESSAGE = 'fake model script exhausted';

/** Options of `startFakeOpenAI`; the `FakeLimits` fields set the server's window and output limit. */
export interface FakeOpenAIOptions extends FakeLimits {
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number;
  /** Answers requests once the script is empty. */
  responder?: Responder;
  /** Model listed by `/v1/models` (default `FAKE_MODEL`). */
  model?: string;
  /** Pace of streamed replies (`StreamRate`), or false for a server that refuses `"stream": true` with a 400; default `{}`. */
  streaming?: StreamingSetting;
  /** False: refuse every request carrying `response_format` with a 400 (RESPONSE_FORMAT_REFUSAL_BODY); default true. */
  responseFormat?: boolean;
}

/** Events: `request` (a chat-completion request arrived), `aborted` (its client disconnected before the answer). */
export interface FakeOpenAIEvents {
  request: [RecordedRequest];
  aborted: [RecordedRequest];
}

/** A running fake model server. */
export interface FakeOpenAI {
  /** Base URL for the openai client, e.g. `http://127.0.0.1:43121/v1`. */
  readonly baseURL: string;
  readonly port: number;
  readonly model: string;
  /** Every chat-completion request so far, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Emits `request` and `aborted` with the RecordedRequest. */
  readonly events: EventEmitter<FakeOpenAIEvents>;
  /** Append steps to the script; each request takes the first one left. */
  enqueue(...steps: Step[]): void;
  /** Steps still queued. */
  remaining(): number;
  /** Answer requests with `fn` once the script is empty (undefined removes it). */
  setResponder(fn: Responder | undefined): void;
  /** Resolve once at least `n` requests have arrived; reject after `timeoutMs` (default 5000). */
  waitForRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Resolve once at least `n` requests were aborted by their client; reject after `timeoutMs` (default 5000). */
  waitForAborts(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Requests whose client disconnected before the response was complete. */
  abortedCount(): number;
  /** Change the window, output limit, error style or `/props` (see `FakeLimits`: a field given as undefined removes it). */
  setLimits(limits: FakeLimits): void;
  /** The limits in force. */
  limits(): FakeLimits;
  /** Pace streamed replies (`{ chunkChars, intervalMs, holdAfterChunks }`, default 4, 0 and none), or refuse to stream (false); replaces the setting. */
  setStreaming(setting: StreamingSetting): void;
  /** Let every stream held by `holdAfterChunks` go on, and those that reach their hold later pass it, until the next `setStreaming` or `reset`. */
  releaseStreams(): void;
  /** Streams waiting at their hold now. */
  heldStreams(): number;
  /** Take `response_format` (true) or refuse requests carrying it with a 400 (false). */
  setResponseFormat(accepted: boolean): void;
  /** Forget the script, the responder, the recorded requests, the limits, the streaming and response_format settings (ids keep counting). */
  reset(): void;
  /** Stop listening, drop open connections and pending timers. */
  close(): Promise<void>;
}

/** Start a fake OpenAI-compatible server on 127.0.0.1. */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const fake = new FakeOpenAIServer(options.model ?? FAKE_MODEL, options.responder);
  const { contextWindow, maxOutputTokens, contextErrorStyle, llamaProps } = options;
  fake.setLimits({ contextWindow, maxOutputTokens, contextErrorStyle, llamaProps });
  fake.setStreaming(options.streaming ?? {});
  fake.setResponseFormat(options.responseFormat ?? true);
  await fake.listen(options.port ?? 0);
  return fake;
}

class FakeOpenAIServer implements FakeOpenAI {
  readonly requests: RecordedRequest[] = [];
  readonly events = new EventEmitter<FakeOpenAIEvents>();
  private readonly server: Server;
  private readonly script: Step[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly ids: IdCounters = { completion: 0, toolCall: 0 };
  private responder: Responder | undefined;
  private currentLimits: FakeLimits = {};
  private streaming: StreamingSetting = {};
  private readonly holds = new StreamHolds();
  private responseFormat = true;
  private closing = false;
  private boundPort = 0;

  constructor(
    readonly model: string,
    responder: Responder | undefined,
  ) {
    this.responder = responder;
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => this.sendError(res, 500, `fake model server error: ${String(err)}`));
    });
    // Many tests wait on `aborted` events; do not warn about several listeners.
    this.events.setMaxListeners(0);
  }

  get port(): number {
    return this.boundPort;
  }

  get baseURL(): string {
    return `http://127.0.0.1:${this.boundPort}/v1`;
  }

  async listen(port: number): Promise<void> {
    this.server.listen(port, '127.0.0.1');
    await once(this.server, 'listening');
    this.boundPort = (this.server.address() as AddressInfo).port;
  }

  enqueue(...steps: Step[]): void {
    this.script.push(...steps);
  }

  remaining(): number {
    return this.script.length;
  }

  setResponder(fn: Responder | undefined): void {
    this.responder = fn;
  }

  abortedCount(): number {
    return this.requests.filter((r) => r.aborted).length;
  }

  waitForRequests(n: number, timeoutMs = 5000): Promise<RecordedRequest[]> {
    return this.waitFor('request', () => this.requests, n, timeoutMs, 'requests');
  }

  waitForAborts(n: number, timeoutMs = 5000): Promise<RecordedRequest[]> {
    return this.waitFor('aborted', () => this.requests.filter((r) => r.aborted), n, timeoutMs, 'aborted requests');
  }

  setLimits(limits: FakeLimits): void {
    this.currentLimits = mergeLimits(this.currentLimits, limits);
  }

  limits(): FakeLimits {
    return { ...this.currentLimits };
  }

  setStreaming(setting: StreamingSetting): void {
    this.streaming = checkStreaming(setting);
    this.holds.arm();
  }

  releaseStreams(): void {
    this.holds.release();
  }

  heldStreams(): number {
    return this.holds.count();
  }

  setResponseFormat(accepted: boolean): void {
    this.responseFormat = accepted;
  }

  reset(): void {
    this.responseFormat = true;
    this.script.length = 0;
    this.requests.length = 0;
    this.responder = undefined;
    this.currentLimits = {};
    this.streaming = {};
    // Streams still held from before the reset go on; the next ones are held afresh.
    this.holds.release();
    this.holds.arm();
  }

  async close(): Promise<void> {
    this.closing = true;
    this.holds.release();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // Keep-alive sockets and hanging requests would otherwise hold close() open.
    this.server.closeAllConnections();
    await closed;
  }

  private waitFor(event: keyof FakeOpenAIEvents, current: () => RecordedRequest[], n: number, timeoutMs: number, what: string): Promise<RecordedRequest[]> {
    return new Promise((resolve, reject) => {
      if (current().length >= n) return resolve(current());
      const onEvent = (): void => {
        if (current().length < n) return;
        cleanup();
        resolve(current());
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`fake model: expected ${n} ${what} within ${timeoutMs} ms, saw ${current().length}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.events.off(event, onEvent);
      };
      this.events.on(event, onEvent);
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
    if (req.method === 'GET' && this.answerGet(path, res)) {
      req.resume();
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      req.resume();
      this.sendError(res, 404, `No route for ${req.method ?? '?'} ${path || '/'}`, 'not_found');
      return;
    }

    const rawBody = await readBody(req);
    const body = parseJson(rawBody);
    const record = recordOf(req, this.requests.length, path, body);
    this.requests.push(record);
    res.on('close', () => {
      // `close` before `finish` means the connection went away under an unfinished response;
      // unless we dropped it ourselves or are shutting down, the client gave up.
      if (res.writableFinished || record.status !== null || this.closing || droppedSockets.has(req.socket)) return;
      record.aborted = true;
      this.events.emit('aborted', record);
    });
    this.events.emit('request', record);

    if (body === null) {
      this.respondStatus(res, record, 400, buildErrorBody(400, { message: 'Request body is not valid JSON.' }));
      return;
    }
    // A request the server cannot take (a stream or format it does not do, a prompt over the window) spends no step.
    if (this.streaming === false && wantsStream(body)) {
      this.respondStatus(res, record, 400, STREAM_REFUSAL_BODY);
      return;
    }
    if (!this.responseFormat && body.response_format !== undefined) {
      this.respondStatus(res, record, 400, RESPONSE_FORMAT_REFUSAL_BODY);
      return;
    }
    const limits = this.currentLimits;
    if (exceedsWindow(limits, record.promptTokens)) {
      const refusal = contextErrorBody(limits.contextErrorStyle ?? 'openai', limits.contextWindow!, record.promptTokens);
      this.respondStatus(res, record, 400, refusal);
      return;
    }
    let step: Step;
    try {
      step = await this.nextStep(record);
    } catch (err) {
      this.respondStatus(res, record, 500, buildErrorBody(500, { message: `fake model responder failed: ${String(err)}` }));
      return;
    }
    this.perform(step, req, res, record);
  }

  /** Answer the GET routes (`/v1/models`, `/v1/models/<id>`, `/props`); false when `path` is none of them. */
  private answerGet(path: string, res: ServerResponse): boolean {
    const entry = modelEntry(this.model, this.currentLimits);
    if (path === '/v1/models') {
      this.sendJson(res, 200, { object: 'list', data: [entry] });
    } else if (path.startsWith('/v1/models/')) {
      const id = decodeURIComponent(path.slice('/v1/models/'.length));
      if (id === this.model) this.sendJson(res, 200, entry);
      else this.sendJson(res, 404, buildErrorBody(404, { message: `The model '${id}' does not exist or you do not have access to it.` }));
    } else if (path === '/props' && this.currentLimits.llamaProps) {
      this.sendJson(res, 200, propsBody(this.currentLimits));
    } else {
      return false;
    }
    return true;
  }

  private async nextStep(record: RecordedRequest): Promise<Step> {
    const scripted = this.script.shift();
    if (scripted) return scripted;
    if (this.responder) return this.responder(record, record.index);
    return {
      kind: 'fault',
      status: 500,
      options: { message: `${SCRIPT_EXHAUSTED_MESSAGE} (request #${record.index + 1} had no scripted step)` },
    };
  }

  private perform(step: Step, req: IncomingMessage, res: ServerResponse, record: RecordedRequest): void {
    if (res.destroyed || this.closing) return;
    switch (step.kind) {
      case 'text':
      case 'tool_calls': {
        const limit = outputLimitOf(this.currentLimits, record.body, record.promptTokens);
        const completion = buildCompletion(step, record.body, this.model, this.ids, record.receivedAt, record.promptTokens, limit);
        // A stream asked for while the server still streamed goes out even if refusal was set since;
        // a reply with a rate of its own goes at that rate.
        const rate = step.options.stream === undefined ? this.streaming || {} : (checkStreaming(step.options.stream) as StreamRate);
        if (wantsStream(record.body)) sendStream(res, record, completion, rate, this.requestIdHeader(record), () => this.holds.wait());
        else this.respondStatus(res, record, 200, completion);
        return;
      }
      case 'fault':
        this.respondStatus(res, record, step.status, buildErrorBody(step.status, step.options), faultHeaders(step.options));
        return;
      case 'raw':
        this.respondStatus(res, record, step.status, step.body, step.headers);
        return;
      case 'delay': {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          this.perform(step.step, req, res, record);
        }, step.ms);
        // A pending delay must never keep a test process alive on its own.
        timer.unref();
        this.timers.add(timer);
        res.on('close', () => {
          clearTimeout(timer);
          this.timers.delete(timer);
        });
        return;
      }
      case 'drop':
        droppedSockets.add(req.socket);
        req.socket.destroy();
        return;
      case 'hang':
        // Nothing to do: the response stays open until the client aborts or close() runs.
        return;
      case 'bomb':
      case 'endless':
        sendBomb(step, res, record, this.requestIdHeader(record));
        return;
    }
  }

  private respondStatus(res: ServerResponse, record: RecordedRequest, status: number, body: unknown, headers: Record<string, string> = {}): void {
    record.status = status;
    this.sendJson(res, status, body, { ...this.requestIdHeader(record), ...headers });
  }

  private requestIdHeader(record: RecordedRequest): Record<string, string> {
    return { 'x-request-id': `req_fake_${record.index + 1}` };
  }

  private sendError(res: ServerResponse, status: number, message: string, code: string | null = null): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    this.sendJson(res, status, buildErrorBody(status, { message, code }));
  }

  private sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.destroyed) return;
    const payload = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
      ...headers,
    });
    res.end(payload);
  }
}

/** Sockets the server destroyed on purpose (`drop`), so their close is not counted as a client abort. */
const droppedSockets = new WeakSet<object>();
