/** Reading a request's body, parsing it as the JSON object a chat-completion request is, and recording the request. */
import type { IncomingMessage } from 'node:http';
import { promptTokensOf } from './limits';
import type { ChatCompletionRequestBody, RecordedRequest } from './recorded-request';

/** The whole body of `req` as UTF-8 text. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The body as a JSON object, or null when it is not one (the server then answers 400). */
export function parseJson(text: string): ChatCompletionRequestBody | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as ChatCompletionRequestBody) : null;
  } catch (err) {
    // Not JSON: the caller answers 400, as a real server would; the parse error itself is not useful.
    void err;
    return null;
  }
}

/** The record of request number `index` (0-based): its headers without `authorization`, its body and prompt tokens. */
export function recordOf(req: IncomingMessage, index: number, path: string, body: ChatCompletionRequestBody | null): RecordedRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (name === 'authorization' || value === undefined) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return {
    index,
    method: req.method ?? 'POST',
    path,
    body,
    headers,
    hasAuthorization: req.headers.authorization !== undefined,
    receivedAt: Date.now(),
    aborted: false,
    status: null,
    promptTokens: promptTokensOf(body),
  };
}
