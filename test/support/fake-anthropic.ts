/**
 * A fake Anthropic Messages server for tests, following the documented API: `POST /v1/messages`
 * answered with a `Message` object, or with `"stream": true` the documented server-sent events
 * (message_start, content_block_start / delta / stop per block, message_delta, message_stop, with
 * a ping); error bodies `{"type": "error", "error": {type, message}}` with `request-id` and, when
 * scripted, `retry-after`. Like the real server it refuses (400 invalid_request_error) a request
 * that breaks the API's rules: no `max_tokens`, a first message that is not the user's, roles that
 * do not alternate, empty text, a tool_use without its tool_result in the next message, a
 * tool_result that answers no tool_use of the message before or that follows text in its message,
 * a thinking block changed since it was sent (its signature). Each request takes the next scripted
 * step; every request is recorded.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A content block of a scripted reply. */
export type FakeBlock = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> } | { type: 'thinking'; thinking: string; signature: string };

/** One scripted answer. */
export type FakeAnthropicStep =
  | { kind: 'reply'; content: FakeBlock[]; stopReason: string }
  | { kind: 'error'; status: number; type: string; message: string; retryAfter?: string }
  /** Stream part of the reply, then an `error` event (as the API does when it is overloaded midway). */
  | { kind: 'stream-error'; text: string; type: string; message: string }
  /** Never answer: the client has to give up (a worker killed mid-call). */
  | { kind: 'hang' };

/** A text reply that ends the turn. */
export function say(text: string, stopReason = 'end_turn'): FakeAnthropicStep {
  return { kind: 'reply', content: [{ type: 'text', text }], stopReason };
}

let toolIds = 0;

/** A reply calling tools (with optional text and thinking before). */
export function useTools(calls: { name: string; input: Record<string, unknown> }[], options: { text?: string; thinking?: string } = {}): FakeAnthropicStep {
  const content: FakeBlock[] = [];
  if (options.thinking !== undefined) content.push({ type: 'thinking', thinking: options.thinking, signature: signatureOf(options.thinking) });
  if (options.text !== undefined) content.push({ type: 'text', text: options.text });
  for (const call of calls) content.push({ type: 'tool_use', id: `toolu_${String(++toolIds).padStart(4, '0')}`, name: call.name, input: call.input });
  return { kind: 'reply', content, stopReason: 'tool_use' };
}

/** An error answer with the API's body. */
export function apiError(status: number, type: string, message: string, retryAfter?: string): FakeAnthropicStep {
  return { kind: 'error', status, type, message, ...(retryAfter !== undefined ? { retryAfter } : {}) };
}

/** A recorded request. */
export interface FakeAnthropicRequest {
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
}

/** A running fake server. */
export interface FakeAnthropic {
  /** Base URL for the client (no `/v1`: the SDK adds it). */
  readonly baseURL: string;
  readonly requests: FakeAnthropicRequest[];
  enqueue(...steps: FakeAnthropicStep[]): void;
  remaining(): number;
  /** Streams pause after their first text delta until the returned function is called. */
  pauseStreams(): () => void;
  /** Resolve once at least `n` requests arrived (rejects after `timeoutMs`). */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

/** The key the fake accepts. */
export const FAKE_ANTHROPIC_KEY = 'sk-ant-test-0123456789abcdef';

/** The signature the fake gives a thinking text: a changed text no longer matches it. */
function signatureOf(thinking: string): string {
  let hash = 0;
  for (const c of thinking) hash = (hash * 31 + c.codePointAt(0)!) >>> 0;
  return `sig-${hash.toString(16)}`;
}

/** Start the fake on 127.0.0.1 (a free port); it accepts the `keys` given (default FAKE_ANTHROPIC_KEY). */
export async function startFakeAnthropic(options: { keys?: string[] } = {}): Promise<FakeAnthropic> {
  const keys = options.keys ?? [FAKE_ANTHROPIC_KEY];
  const script: FakeAnthropicStep[] = [];
  let paused: Promise<void> | undefined;
  const requests: FakeAnthropicRequest[] = [];
  const hanging = new Set<ServerResponse>();
  let messageIds = 0;
  const server: Server = createServer((req, res) => {
    void handle(req, res);
  });
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/messages') return sendError(res, 404, 'not_found_error', `No route ${req.method} ${req.url}`);
    const key = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '');
    if (typeof key !== 'string' || !keys.includes(key)) return sendError(res, 401, 'authentication_error', 'invalid x-api-key');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return sendError(res, 400, 'invalid_request_error', 'The request body is not valid JSON');
    }
    requests.push({ body, headers: req.headers });
    const problem = requestProblem(body);
    if (problem) return sendError(res, 400, 'invalid_request_error', problem);
    const step = script.shift();
    if (!step) return sendError(res, 500, 'api_error', 'fake anthropic script exhausted');
    if (step.kind === 'hang') {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    if (step.kind === 'error') return sendError(res, step.status, step.type, step.message, step.retryAfter);
    const id = `msg_${String(++messageIds).padStart(4, '0')}`;
    const usage = { input_tokens: Math.ceil(JSON.stringify([body.system, body.messages, body.tools]).length / 4), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    if (step.kind === 'stream-error') {
      startEvents(res);
      event(res, 'message_start', {
        type: 'message_start',
        message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
      });
      event(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
      event(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: step.text } });
      event(res, 'error', { type: 'error', error: { type: step.type, message: step.message } });
      res.end();
      return;
    }
    const outputTokens = Math.max(1, Math.ceil(JSON.stringify(step.content).length / 4));
    if (body.stream !== true) {
      sendJson(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: step.content,
        stop_reason: step.stopReason,
        stop_sequence: null,
        usage: { ...usage, output_tokens: outputTokens },
      });
      return;
    }
    startEvents(res);
    event(res, 'message_start', {
      type: 'message_start',
      message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
    });
    event(res, 'ping', { type: 'ping' });
    for (const [index, block] of step.content.entries()) await streamBlock(res, index, block, paused);
    event(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: step.stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } });
    event(res, 'message_stop', { type: 'message_stop' });
    res.end();
  };
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...steps) => script.push(...steps),
    pauseStreams() {
      let release!: () => void;
      paused = new Promise<void>((resolve) => (release = resolve));
      return () => {
        paused = undefined;
        release();
      };
    },
    remaining: () => script.length,
    async waitForRequests(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < n) {
        if (Date.now() > deadline) throw new Error(`fake anthropic: ${requests.length} of ${n} requests arrived`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    reset() {
      script.length = 0;
      requests.length = 0;
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One block as the documented events: start (empty), deltas in small pieces, stop; a text waits at `paused` after its first piece. */
async function streamBlock(res: ServerResponse, index: number, block: FakeBlock, paused: Promise<void> | undefined): Promise<void> {
  const pieces = (text: string): string[] => text.match(/[\s\S]{1,5}/g) ?? [];
  if (block.type === 'text') {
    event(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    for (const [i, text] of pieces(block.text).entries()) {
      event(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
      if (i === 0 && paused) await paused;
    }
  } else if (block.type === 'thinking') {
    event(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '' } });
    for (const thinking of pieces(block.thinking)) event(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } });
    event(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } });
  } else {
    event(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
    for (const partial_json of pieces(JSON.stringify(block.input))) event(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
  }
  event(res, 'content_block_stop', { type: 'content_block_stop', index });
}

/** What the real API would refuse in `body` with a 400, or undefined. */
export function requestProblem(body: Record<string, unknown>): string | undefined {
  if (typeof body.model !== 'string' || body.model === '') return 'model: Field required';
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required';
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: at least one message is required';
  let previous: Record<string, unknown> | undefined;
  for (const [i, message] of (messages as Record<string, unknown>[]).entries()) {
    if (message.role !== 'user' && message.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (i === 0 && message.role !== 'user') return 'messages: first message must use the "user" role';
    if (previous && previous.role === message.role) return `messages: roles must alternate between "user" and "assistant", but found multiple "${message.role}" roles in a row`;
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content as Record<string, unknown>[]);
    if (!Array.isArray(blocks) || blocks.length === 0) return `messages.${i}: all messages must have non-empty content`;
    let seenOther = false;
    for (const [j, block] of blocks.entries()) {
      if (block.type === 'text' && (typeof block.text !== 'string' || block.text.trim() === '')) return `messages.${i}.content.${j}: text content blocks must contain non-whitespace text`;
      if (block.type === 'thinking' && block.signature !== signatureOf(String(block.thinking))) return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      if (block.type === 'tool_result') {
        if (seenOther) return `messages.${i}: tool_result blocks must come first in the user message`;
        const asked = previousToolUses(previous);
        if (!asked.includes(String(block.tool_use_id))) return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}`;
      } else seenOther = true;
    }
    if (previous?.role === 'assistant') {
      const answered = blocks.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id));
      const missing = previousToolUses(previous).filter((id) => !answered.includes(id));
      if (missing.length > 0) return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}`;
    }
    previous = message;
  }
  if (previous?.role === 'assistant' && previousToolUses(previous).length > 0) return 'messages: the last assistant message has tool_use blocks without results';
  for (const tool of (body.tools as Record<string, unknown>[] | undefined) ?? []) {
    if (typeof tool.name !== 'string' || (tool.input_schema as { type?: unknown } | undefined)?.type !== 'object') return 'tools: each tool needs a name and an input_schema of type object';
  }
  return undefined;
}

function previousToolUses(message: Record<string, unknown> | undefined): string[] {
  if (!message || message.role !== 'assistant' || !Array.isArray(message.content)) return [];
  return (message.content as Record<string, unknown>[]).filter((b) => b.type === 'tool_use').map((b) => String(b.id));
}

function startEvents(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': 'req_fake_stream' });
}

function event(res: ServerResponse, name: string, data: unknown): void {
  res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_fake_${status}`, ...headers });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, type: string, message: string, retryAfter?: string): void {
  sendJson(res, status, { type: 'error', error: { type, message } }, retryAfter !== undefined ? { 'retry-after': retryAfter } : {});
}
