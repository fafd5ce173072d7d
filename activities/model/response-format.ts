/**
 * Structured replies (`response_format`) on servers that may not take them. A server that refuses a
 * request for its `response_format` (a 400 naming response_format or json_schema, as some llama.cpp
 * builds and older compatible servers answer) is asked again at once without it, and is not sent
 * one again by this worker process: the same approach as streaming.ts takes for `stream`. The
 * caller's prompt must describe the JSON it wants, so the plain request is answerable too.
 */
import { log } from '@temporalio/activity';
import { APIError } from 'openai';
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import type { ChatCompletionsClient } from './completion';
import { redactUrl } from '../redaction/redact';

/** Base URLs whose server refused a `response_format`: this worker process no longer sends them one. */
const refusedFormat = new Set<string>();

/** How a 400 says the server cannot do the asked format. */
const FORMAT_REFUSAL = /\bresponse_format\b|\bjson_schema\b|\bjson schema\b|\bstructured outputs?\b/i;

/** True when `error` is a 400 whose message names `response_format` or JSON schemas. */
export function isResponseFormatRefusal(error: unknown): boolean {
  if (!(error instanceof APIError) || error.status !== 400) return false;
  const body = (error.error ?? {}) as { message?: unknown };
  return [error.message, body.message].some((text) => typeof text === 'string' && FORMAT_REFUSAL.test(text.slice(0, 2000)));
}

/** Whether this worker process has seen the server at `baseURL` refuse a `response_format`. */
export function refusedResponseFormat(baseURL: string | undefined): boolean {
  return refusedFormat.has(serverOf(baseURL));
}

/**
 * `client`, except that a request with a `response_format` goes out without it to a server known
 * to refuse one, and is asked again without it when the server refuses it now. Other errors, and
 * a refusal after the call was cancelled, are thrown as the client threw them.
 */
export function withResponseFormatFallback(client: ChatCompletionsClient, baseURL: string | undefined): ChatCompletionsClient {
  const server = serverOf(baseURL);
  const create = async (body: ChatCompletionCreateParams, options?: { signal?: AbortSignal }): Promise<unknown> => {
    if (body.response_format === undefined) return client.chat.completions.create(body, options);
    const { response_format: _format, ...plain } = body;
    if (refusedFormat.has(server)) return client.chat.completions.create(plain, options);
    try {
      return await client.chat.completions.create(body, options);
    } catch (err) {
      if (options?.signal?.aborted || !isResponseFormatRefusal(err)) throw err;
      refusedFormat.add(server);
      log.warn('The model server refused response_format; asked again without it, and not sent one again by this worker', {
        baseURL: redactUrl(server),
      });
      return client.chat.completions.create(plain, options);
    }
  };
  return { chat: { completions: { create } } };
}

function serverOf(baseURL: string | undefined): string {
  return baseURL ?? 'https://api.openai.com/v1';
}
