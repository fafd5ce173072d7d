/**
 * OpenAI's Responses API as a provider, through the official `openai` client (`responses.create`):
 * the request from responses-request.ts, streamed when asked (the events joined by
 * responses-stream.ts and shown in the live output as they come), the reply normalised by
 * responses-reply.ts, and the rest as for Chat Completions (completion.ts `runModelRequest`):
 * heartbeats, cancellation, the bounded fetch, redaction, size checks and the same typed failures.
 * It talks to the same server with the same key as Chat Completions (OPENAI_BASE_URL,
 * OPENAI_API_KEY); its client is made on first use, with no retries of its own. A model that
 * refuses encrypted reasoning (one without reasoning) is asked again without it.
 */
import OpenAI, { APIError } from 'openai';
import type { ResponseCreateParamsNonStreaming, ResponseCreateParamsStreaming } from 'openai/resources/responses/responses';
import { redactingLogger } from '../client-logger';
import { checkApiKey, runModelRequest } from '../completion';
import type { ResolvedModelConfig } from '../model-config';
import type { ModelProvider, PreparedCall, ProviderCall } from '../provider';
import { limitedFetch } from '../reply-limit';
import type { StreamProgressReporter } from '../stream-progress';
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
  // Models that refused encrypted reasoning (models without reasoning): asked without it from then on.
  const plainModels = new Set<string>();
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
              send: (signal, live) => withoutEncryptedReasoningWhenRefused(plainModels, call.model, body, (sent) => exchange(sent, signal, live)),
            },
          ),
      };
    },
  };

  /** One request of `sent`, streamed into `live` when there is one. */
  async function exchange(sent: ResponseCreateParamsNonStreaming, signal: AbortSignal, live: StreamProgressReporter | undefined): Promise<unknown> {
    if (!live) return responsesClient().responses.create(sent, { signal });
    const events = (await responsesClient().responses.create({ ...sent, stream: true }, { signal })) as AsyncIterable<unknown>;
    const joiner = new ResponsesStreamJoiner();
    for await (const event of events) {
      joiner.add(event);
      live.update(joiner);
    }
    // The client ends the iteration quietly when its request is aborted: the cancellation must surface.
    if (signal.aborted) throw new Error('The model call was cancelled while its reply streamed');
    live.finish(joiner);
    return joiner.joined();
  }
}

/**
 * Send `body`; when the server refuses the encrypted reasoning it asks for (a model without
 * reasoning: "Encrypted content is not supported with this model"), send it again without, and
 * remember the model in `plainModels` so its later calls go without at once. Such a model returns
 * no reasoning items, so nothing is lost.
 */
export async function withoutEncryptedReasoningWhenRefused(
  plainModels: Set<string>,
  model: string,
  body: ResponseCreateParamsNonStreaming,
  send: (body: ResponseCreateParamsNonStreaming) => Promise<unknown>,
): Promise<unknown> {
  const { include, ...without } = body;
  const plain = { ...without, ...(include && include.length > 1 ? { include: include.filter((i) => i !== ENCRYPTED_REASONING) } : {}) };
  if (plainModels.has(model)) return send(plain);
  try {
    return await send(body);
  } catch (err) {
    if (!refusesEncryptedReasoning(err)) throw err;
    plainModels.add(model);
    return send(plain);
  }
}

/** What the request asks for so that reasoning needs no server state. */
const ENCRYPTED_REASONING = 'reasoning.encrypted_content';

function refusesEncryptedReasoning(err: unknown): boolean {
  if (!(err instanceof APIError) || err.status !== 400) return false;
  const param = (err.error as { param?: unknown } | undefined)?.param ?? err.param;
  return /encrypted content is not supported/i.test(err.message) || param === 'include';
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
