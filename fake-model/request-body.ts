/** Reading a request's body and parsing it as the JSON object a chat-completion request is. */
import type { IncomingMessage } from 'node:http';
import type { ChatCompletionRequestBody } from './recorded-request';

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
