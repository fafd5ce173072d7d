/**
 * A fake OpenAI Responses server for tests, following the documented API: `POST /v1/responses`
 * answered with a `Response` object, or with `"stream": true` the documented server-sent events
 * (response.created, response.in_progress; per output item response.output_item.added, its
 * content part or summary part added, its deltas and `.done` events, response.output_item.done;
 * then response.completed or response.incomplete, each event with its sequence_number); error
 * bodies `{"error": {message, type, param, code}}` with `x-request-id` and, when scripted,
 * `retry-after`. Like the real server it refuses (400, or 404 for an unknown item) what breaks the
 * API's rules: a `function_call_output` with no earlier `function_call` of its `call_id`, a
 * `function_call` never answered, a reasoning item without its encrypted content when `store` is
 * false (the item is not stored), encrypted content it did not issue or that was changed, a
 * reasoning item not followed by the item it led to, a `max_output_tokens` below 16, a tool that
 * is not a named function with an object schema, a `response_format` (Responses takes
 * `text.format`), a JSON-schema format without its name, and encrypted reasoning asked of a model without
 * reasoning (`plainModels`). Its prompt cache follows the documented automatic
 * caching: a prompt of at least 1024 tokens whose start matches an earlier prompt of the same model
 * reads that prefix from the cache, in steps of 128 tokens (`input_tokens_details.cached_tokens`).
 * Tokens are counted as four characters of the prompt's JSON. Each request takes the next scripted
 * step; every request is recorded.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An output item of a scripted reply (the fake gives items their ids and reasoning its encrypted content). */
export type FakeItem =
  { type: 'message'; text: string } | { type: 'refusal'; refusal: string } | { type: 'function_call'; call_id: string; name: string; arguments: string } | { type: 'reasoning'; summary: string };

/** One scripted answer. */
export type FakeResponsesStep =
  | { kind: 'reply'; output: FakeItem[]; incomplete?: 'max_output_tokens' | 'content_filter' }
  | { kind: 'error'; status: number; type: string; code: string | null; message: string; retryAfter?: string }
  /** Stream part of a text, then fail: a `response.failed` event, or an `error` event. */
  | { kind: 'stream-failure'; text: string; event: 'response.failed' | 'error'; code: string; message: string }
  /** Never answer: the client has to give up. */
  | { kind: 'hang' };

/** A text reply; `incomplete` makes it one cut off by the output limit. */
export function say(text: string, options: { incomplete?: 'max_output_tokens' | 'content_filter'; reasoning?: string } = {}): FakeResponsesStep {
  const output: FakeItem[] = options.reasoning !== undefined ? [{ type: 'reasoning', summary: options.reasoning }] : [];
  output.push({ type: 'message', text });
  return { kind: 'reply', output, ...(options.incomplete ? { incomplete: options.incomplete } : {}) };
}

let callIds = 0;

/** A reply calling functions (with optional reasoning and text before). */
export function callTools(calls: { name: string; input: Record<string, unknown> }[], options: { text?: string; reasoning?: string } = {}): FakeResponsesStep {
  const output: FakeItem[] = [];
  if (options.reasoning !== undefined) output.push({ type: 'reasoning', summary: options.reasoning });
  if (options.text !== undefined) output.push({ type: 'message', text: options.text });
  for (const call of calls) output.push({ type: 'function_call', call_id: `call_${String(++callIds).padStart(4, '0')}`, name: call.name, arguments: JSON.stringify(call.input) });
  return { kind: 'reply', output };
}

/** A refusal. */
export function refuse(refusal: string): FakeResponsesStep {
  return { kind: 'reply', output: [{ type: 'refusal', refusal }] };
}

/** An error answer with the API's body. */
export function apiError(status: number, type: string, message: string, options: { code?: string; retryAfter?: string } = {}): FakeResponsesStep {
  return { kind: 'error', status, type, code: options.code ?? null, message, ...(options.retryAfter !== undefined ? { retryAfter: options.retryAfter } : {}) };
}

/** A recorded request. */
export interface FakeResponsesRequest {
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
}

/** A running fake server. */
export interface FakeResponses {
  /** Base URL for the client (with `/v1`, as OPENAI_BASE_URL). */
  readonly baseURL: string;
  readonly requests: FakeResponsesRequest[];
  enqueue(...steps: FakeResponsesStep[]): void;
  remaining(): number;
  /** Streams pause after their first text delta until the returned function is called. */
  pauseStreams(): () => void;
  /** Resolves once `n` requests have arrived. */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

/** The key the fake accepts. */
export const FAKE_RESPONSES_KEY = 'sk-responses-test-0123456789';

/** The documented minimum of a cached prompt, and the steps its cached part grows in. */
const CACHE_MIN_TOKENS = 1024;
const CACHE_STEP_TOKENS = 128;

/** The fake's "encryption" of a reasoning item: its id and summary in the open, sealed by a hash a change breaks. */
function seal(id: string, summary: string): string {
  const payload = Buffer.from(JSON.stringify({ id, summary })).toString('base64url');
  return `enc_${payload}.${createHash('sha256').update(`fake-responses:${payload}`).digest('hex').slice(0, 16)}`;
}

function unseal(content: string): { id: string; summary: string } | undefined {
  const match = /^enc_([A-Za-z0-9_-]+)\.([0-9a-f]{16})$/.exec(content);
  if (!match || createHash('sha256').update(`fake-responses:${match[1]}`).digest('hex').slice(0, 16) !== match[2]) return undefined;
  return JSON.parse(Buffer.from(match[1]!, 'base64url').toString('utf8')) as { id: string; summary: string };
}

/** Start the fake on 127.0.0.1 (a free port); it accepts the `keys` given (default FAKE_RESPONSES_KEY). */
export async function startFakeResponses(options: { keys?: string[]; plainModels?: string[] } = {}): Promise<FakeResponses> {
  const keys = options.keys ?? [FAKE_RESPONSES_KEY];
  const script: FakeResponsesStep[] = [];
  const prompts: { model: string; text: string }[] = [];
  const requests: FakeResponsesRequest[] = [];
  const hanging = new Set<ServerResponse>();
  let paused: Promise<void> | undefined;
  let ids = 0;
  const nextId = (prefix: string): string => `${prefix}_${String(++ids).padStart(6, '0')}`;
  const server: Server = createServer((req, res) => {
    void handle(req, res);
  });
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/responses') return sendError(res, 404, 'invalid_request_error', null, `Invalid URL (${req.method} ${req.url})`);
    const key = req.headers.authorization?.replace(/^Bearer /, '');
    if (key === undefined || !keys.includes(key)) return sendError(res, 401, 'invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return sendError(res, 400, 'invalid_request_error', null, 'We could not parse the JSON body of your request.');
    }
    requests.push({ body, headers: req.headers });
    const problem = requestProblem(body);
    if (problem) return sendError(res, problem.status, 'invalid_request_error', null, problem.message);
    if (options.plainModels?.includes(String(body.model)) && (body.include as unknown[] | undefined)?.includes('reasoning.encrypted_content'))
      return sendError(res, 400, 'invalid_request_error', null, 'Encrypted content is not supported with this model.', undefined, 'include');
    const step = script.shift();
    if (!step) return sendError(res, 500, 'server_error', null, 'fake responses script exhausted');
    if (step.kind === 'hang') {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    if (step.kind === 'error') return sendError(res, step.status, step.type, step.code, step.message, step.retryAfter);
    const id = nextId('resp');
    const model = String(body.model);
    const base = {
      id,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      model,
      instructions: body.instructions ?? null,
      store: false,
      parallel_tool_calls: true,
      tools: body.tools ?? [],
    };
    if (step.kind === 'stream-failure') {
      const stream = events(res);
      stream('response.created', { response: { ...base, status: 'in_progress', output: [], usage: null, error: null, incomplete_details: null } });
      const itemId = nextId('msg');
      stream('response.output_item.added', { output_index: 0, item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
      stream('response.output_text.delta', { item_id: itemId, output_index: 0, content_index: 0, delta: step.text, logprobs: [] });
      if (step.event === 'error') stream('error', { code: step.code, message: step.message, param: null });
      else stream('response.failed', { response: { ...base, status: 'failed', output: [], usage: null, incomplete_details: null, error: { code: step.code, message: step.message } } });
      res.end();
      return;
    }
    const output = step.output.map((item) => outputItem(item, nextId));
    const usage = usageOf(body, output, prompts);
    const done = {
      ...base,
      status: step.incomplete ? 'incomplete' : 'completed',
      incomplete_details: step.incomplete ? { reason: step.incomplete } : null,
      error: null,
      output,
      usage,
    };
    if (body.stream !== true) return sendJson(res, 200, done);
    const stream = events(res);
    stream('response.created', { response: { ...base, status: 'in_progress', output: [], usage: null, error: null, incomplete_details: null } });
    stream('response.in_progress', { response: { ...base, status: 'in_progress', output: [], usage: null, error: null, incomplete_details: null } });
    for (const [index, item] of output.entries()) await streamItem(stream, index, item, paused);
    stream(step.incomplete ? 'response.incomplete' : 'response.completed', { response: done });
    res.end();
  };
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...steps) => script.push(...steps),
    remaining: () => script.length,
    pauseStreams() {
      let release!: () => void;
      paused = new Promise<void>((resolve) => (release = resolve));
      return () => {
        paused = undefined;
        release();
      };
    },
    async waitForRequests(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < n) {
        if (Date.now() > deadline) throw new Error(`fake responses: ${requests.length} of ${n} requests arrived`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    reset() {
      script.length = 0;
      requests.length = 0;
      prompts.length = 0;
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A scripted item as the API returns it. */
function outputItem(item: FakeItem, nextId: (prefix: string) => string): Record<string, unknown> {
  switch (item.type) {
    case 'message':
      return { id: nextId('msg'), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: item.text, annotations: [], logprobs: [] }] };
    case 'refusal':
      return { id: nextId('msg'), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: item.refusal }] };
    case 'function_call':
      return { id: nextId('fc'), type: 'function_call', status: 'completed', call_id: item.call_id, name: item.name, arguments: item.arguments };
    case 'reasoning': {
      const id = nextId('rs');
      return { id, type: 'reasoning', summary: [{ type: 'summary_text', text: item.summary }], encrypted_content: seal(id, item.summary) };
    }
  }
}

/** Usage as the API reports it, with the automatic prompt cache's part. */
function usageOf(body: Record<string, unknown>, output: Record<string, unknown>[], prompts: { model: string; text: string }[]): Record<string, unknown> {
  const model = String(body.model);
  const text = JSON.stringify([body.tools ?? [], body.instructions ?? '', body.input]);
  const inputTokens = Math.ceil(text.length / 4);
  let common = 0;
  for (const earlier of prompts) {
    if (earlier.model !== model) continue;
    let i = 0;
    while (i < earlier.text.length && i < text.length && earlier.text[i] === text[i]) i++;
    common = Math.max(common, i);
  }
  prompts.push({ model, text });
  const prefixTokens = Math.floor(common / 4);
  const cached = inputTokens >= CACHE_MIN_TOKENS && prefixTokens >= CACHE_MIN_TOKENS ? Math.floor(prefixTokens / CACHE_STEP_TOKENS) * CACHE_STEP_TOKENS : 0;
  const reasoning = output.filter((i) => i.type === 'reasoning');
  const reasoningTokens = Math.ceil(JSON.stringify(reasoning).length / 16);
  const outputTokens = Math.max(1, Math.ceil(JSON.stringify(output.filter((i) => i.type !== 'reasoning')).length / 4)) + reasoningTokens;
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: inputTokens + outputTokens,
  };
}

type Emit = (type: string, fields: Record<string, unknown>) => void;

/** One output item as the documented events: added, its parts and deltas in small pieces, done; a text waits at `paused` after its first piece. */
async function streamItem(stream: Emit, index: number, item: Record<string, unknown>, paused: Promise<void> | undefined): Promise<void> {
  const pieces = (text: string): string[] => text.match(/[\s\S]{1,5}/g) ?? [];
  const id = item.id as string;
  const at = { item_id: id, output_index: index };
  if (item.type === 'message') {
    stream('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } });
    for (const [c, part] of (item.content as Record<string, unknown>[]).entries()) {
      const where = { ...at, content_index: c };
      if (part.type === 'output_text') {
        stream('response.content_part.added', { ...where, part: { type: 'output_text', text: '', annotations: [] } });
        for (const [i, delta] of pieces(part.text as string).entries()) {
          stream('response.output_text.delta', { ...where, delta, logprobs: [] });
          if (i === 0 && paused) await paused;
        }
        stream('response.output_text.done', { ...where, text: part.text, logprobs: [] });
      } else {
        stream('response.content_part.added', { ...where, part: { type: 'refusal', refusal: '' } });
        for (const delta of pieces(part.refusal as string)) stream('response.refusal.delta', { ...where, delta });
        stream('response.refusal.done', { ...where, refusal: part.refusal });
      }
      stream('response.content_part.done', { ...where, part });
    }
  } else if (item.type === 'function_call') {
    stream('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
    for (const delta of pieces(item.arguments as string)) stream('response.function_call_arguments.delta', { ...at, delta });
    stream('response.function_call_arguments.done', { ...at, name: item.name, arguments: item.arguments });
  } else {
    stream('response.output_item.added', { output_index: index, item: { id, type: 'reasoning', summary: [] } });
    for (const [s, part] of (item.summary as { text: string }[]).entries()) {
      const where = { ...at, summary_index: s };
      stream('response.reasoning_summary_part.added', { ...where, part: { type: 'summary_text', text: '' } });
      for (const delta of pieces(part.text)) stream('response.reasoning_summary_text.delta', { ...where, delta });
      stream('response.reasoning_summary_text.done', { ...where, text: part.text });
      stream('response.reasoning_summary_part.done', { ...where, part });
    }
  }
  stream('response.output_item.done', { output_index: index, item });
}

/** What the real API would refuse in `body` (its status and message), or undefined. */
export function requestProblem(body: Record<string, unknown>): { status: number; message: string } | undefined {
  const bad = (message: string, status = 400) => ({ status, message });
  if (typeof body.model !== 'string' || body.model === '') return bad("Missing required parameter: 'model'.");
  const limit = body.max_output_tokens;
  if (limit !== undefined && limit !== null && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 16))
    return bad(`Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got ${String(limit)} instead.`);
  for (const [i, tool] of ((body.tools as Record<string, unknown>[] | undefined) ?? []).entries()) {
    if (tool.type !== 'function' || typeof tool.name !== 'string' || (tool.parameters as { type?: unknown } | undefined)?.type !== 'object')
      return bad(`Invalid value for 'tools[${i}]': a function tool needs a name and an object schema as parameters.`);
  }
  const format = (body.text as { format?: Record<string, unknown> } | undefined)?.format;
  if (format?.type === 'json_schema' && (typeof format.name !== 'string' || typeof format.schema !== 'object')) return bad("Missing required parameter: 'text.format.name'.");
  if (body.response_format !== undefined) return bad("Unsupported parameter: 'response_format'. In the Responses API, this parameter has moved to 'text.format'.");
  const input = typeof body.input === 'string' ? [] : body.input;
  if (!Array.isArray(input)) return bad("Invalid type for 'input': expected a string or an array of input items.");
  const stored = body.store !== false;
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const [i, item] of (input as Record<string, unknown>[]).entries()) {
    const type = item.type ?? 'message';
    if (type === 'message') {
      if (!['user', 'assistant', 'system', 'developer'].includes(String(item.role)))
        return bad(`Invalid value: '${String(item.role)}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.`);
      if (typeof item.content !== 'string' && !Array.isArray(item.content)) return bad(`Invalid type for 'input[${i}].content'.`);
    } else if (type === 'function_call') {
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string' || typeof item.arguments !== 'string') return bad(`Missing required parameter: 'input[${i}].call_id'.`);
      calls.add(item.call_id);
    } else if (type === 'function_call_output') {
      if (!calls.has(String(item.call_id))) return bad(`No tool call found for function call output with call_id ${String(item.call_id)}.`);
      answered.add(String(item.call_id));
    } else if (type === 'reasoning') {
      if (typeof item.encrypted_content !== 'string') {
        if (!stored)
          return bad(
            `Item with id '${String(item.id)}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
            404,
          );
        return bad(`Item with id '${String(item.id)}' not found.`, 404);
      }
      const sealed = unseal(item.encrypted_content);
      if (!sealed || sealed.id !== item.id) return bad(`The encrypted content for item ${String(item.id)} could not be verified.`);
      const next = (input as Record<string, unknown>[])[i + 1];
      if (!next || next.type === 'reasoning') return bad(`Item '${String(item.id)}' of type 'reasoning' was provided without its required following item.`);
    } else return bad(`Invalid value: '${String(type)}' for 'input[${i}].type'.`);
  }
  for (const id of calls) if (!answered.has(id)) return bad(`No tool output found for function call ${id}.`);
  return undefined;
}

function events(res: ServerResponse): Emit {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': 'req_fake_stream' });
  let sequence = 0;
  return (type, fields) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`);
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_fake_${status}`, ...headers });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, type: string, code: string | null, message: string, retryAfter?: string, param: string | null = null): void {
  sendJson(res, status, { error: { message, type, param, code } }, retryAfter !== undefined ? { 'retry-after': retryAfter } : {});
}
