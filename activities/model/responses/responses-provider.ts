/**
 * OpenAI's Responses API as a provider, through the official `openai` client (`responses.create`):
 * the request from responses-request.ts, streamed when asked (the events joined by
 * responses-stream.ts and shown in the live output as they come), the reply normalised by
 * responses-reply.ts, and the rest as for Chat Completions (completion.ts `runModelRequest`):
 * heartbeats, cancellation, the bounded fetch, redaction, size checks and the same typed failures.
 * It talks to the same server with the same key as Chat Completions (OPENAI_BASE_URL,
 * OPENAI_API_KEY); its client is made on first use, with no retries of its own.
 */
import OpenAI from 'openai';
import type { ResponseCreateParamsNonStreaming, ResponseCreateParamsStreaming } from 'openai/resources/responses/responses';
import { redactingLogger } from '../client-logger';
import { checkApiKey, runModelRequest } from '../completion';
import type { ResolvedModelConfig } from '../model-config';
import type { ModelProvider, PreparedCall, ProviderCall } from '../provider';
import { limitedFetch } from '../reply-limit';
import { templateSafeMessages } from '../template-safety';
import { buildResponsesRequest } from './responses-request';
import { normalizeResponsesReply } from './responses-reply';
import { ResponsesStreamJoiner } from './responses-stream';

/** The part of the openai client the provider uses. */
export interface ResponsesClient {
  responses: {
    create(body: ResponseCreateParamsNonStreaming | ResponseCreateParamsStreaming, options?: { signal?: AbortSignal }): PromiseLike<unknown>;
  };
}

/** The Responses provider for the worker's settings; `client` replaces the official client (tests). */
export function responsesProvider(config: ResolvedModelConfig, client?: ResponsesClient): ModelProvider {
  let made: ResponsesClient | undefined = client;
  const responsesClient = (): ResponsesClient => (made ??= officialClient(config));
  return {
    name: 'responses',
    checkReady: () => checkApiKey(config),
    prepare(call: ProviderCall): PreparedCall {
      const body = buildResponsesRequest(call);
      // The chat form of what is sent, for the prompt estimate (reasoning summaries counted as reasoning).
      const messages = templateSafeMessages(call.messages, { sendReasoning: true });
      return {
        body,
        messages,
        send: () =>
          runModelRequest(
            config,
            { model: call.model, label: call.label, stream: call.stream },
            {
              normalize: (raw) => normalizeResponsesReply(raw, { messages, tools: call.tools }),
              async send(signal, live) {
                if (!live) return responsesClient().responses.create(body, { signal });
                const events = (await responsesClient().responses.create({ ...body, stream: true }, { signal })) as AsyncIterable<unknown>;
                const joiner = new ResponsesStreamJoiner();
                for await (const event of events) {
                  joiner.add(event);
                  live.update(joiner);
                }
                // The client ends the iteration quietly when its request is aborted: the cancellation must surface.
                if (signal.aborted) throw new Error('The model call was cancelled while its reply streamed');
                live.finish(joiner);
                return joiner.joined();
              },
            },
          ),
      };
    },
  };
}

/** The official client: no retries of its own, the bounded fetch, a logger that redacts, the key from the settings only. */
function officialClient(config: ResolvedModelConfig): ResponsesClient {
  return new OpenAI({
    apiKey: config.apiKey,
    baseURL: config.baseURL,
    maxRetries: 0,
    ...(config.requestTimeoutMs !== undefined ? { timeout: config.requestTimeoutMs } : {}),
    fetch: limitedFetch(config.maxReplyBodyBytes),
    logger: redactingLogger(config.secrets),
  });
}
