/**
 * Anthropic's Messages API as a provider, through the official `@anthropic-ai/sdk` client: the
 * request from anthropic-request.ts, streamed when asked (the events joined by anthropic-stream.ts
 * and shown in the live output as they come), the reply normalised by anthropic-reply.ts, and the
 * rest as for Chat Completions (completion.ts `runModelRequest`): heartbeats, cancellation, the
 * bounded fetch, redaction, size checks and the same typed failures. The client's own retries are
 * off (Temporal's retry policy decides, honouring `retry-after`), its key comes from the worker's
 * settings only (ANTHROPIC_API_KEY), and it is made on first use: the SDK itself is loaded then, so a
 * worker that never calls Anthropic does not load it (about 50 ms of every worker's start).
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParams } from '@anthropic-ai/sdk/resources/messages/messages';
import { ApplicationFailure } from '@temporalio/common';
import { MODEL_AUTH_ERROR } from '../../../common/model-call';
import { redactingLogger } from '../client-logger';
import { runModelRequest } from '../completion';
import { noDetails } from '../input-check';
import { PLACEHOLDER_API_KEY, type ResolvedModelConfig } from '../model-config';
import type { ModelProvider, PreparedCall, ProviderCall } from '../provider';
import { limitedFetch } from '../reply-limit';
import { templateSafeMessages } from '../template-safety';
import { buildMessagesRequest } from './anthropic-request';
import { normalizeMessagesReply } from './anthropic-reply';
import { MessagesStreamJoiner } from './anthropic-stream';

/** Anthropic's own API, where a key is always needed. */
export const ANTHROPIC_API_URL = 'https://api.anthropic.com';

/** The part of Anthropic's client the provider uses. */
export interface MessagesClient {
  messages: {
    create(body: MessageCreateParams, options?: { signal?: AbortSignal }): PromiseLike<unknown>;
  };
}

/** The Messages provider for the worker's settings; `client` replaces the official client (tests). */
export function anthropicProvider(config: ResolvedModelConfig, client?: MessagesClient): ModelProvider {
  const baseURL = config.anthropic.baseURL ?? ANTHROPIC_API_URL;
  let made: MessagesClient | undefined = client;
  const messagesClient = (): MessagesClient => (made ??= officialClient(config, baseURL));
  const classify = { baseURL, keyVariable: 'ANTHROPIC_API_KEY', baseUrlVariable: 'ANTHROPIC_BASE_URL' };
  return {
    name: 'anthropic',
    checkReady() {
      if (config.anthropic.apiKey !== undefined || new URL(baseURL).hostname !== new URL(ANTHROPIC_API_URL).hostname) return;
      throw ApplicationFailure.create({
        type: MODEL_AUTH_ERROR,
        message: 'ANTHROPIC_API_KEY is not set on the worker: set it, or set ANTHROPIC_BASE_URL to a Messages server that needs no key.',
        nonRetryable: true,
        details: [noDetails()],
      });
    },
    prepare(call: ProviderCall): PreparedCall {
      const body = buildMessagesRequest(call);
      // The chat form of what is sent, for the prompt estimate (thinking counted as reasoning).
      const messages = templateSafeMessages(call.messages, { sendReasoning: true });
      return {
        body,
        messages,
        send: () =>
          runModelRequest(
            config,
            { model: call.model, label: call.label, stream: call.stream },
            {
              classify,
              normalize: (raw) => normalizeMessagesReply(raw, { messages, tools: call.tools }),
              async send(signal, live) {
                if (!live) return messagesClient().messages.create(body, { signal });
                const events = (await messagesClient().messages.create({ ...body, stream: true }, { signal })) as AsyncIterable<unknown>;
                const joiner = new MessagesStreamJoiner();
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
function officialClient(config: ResolvedModelConfig, baseURL: string): MessagesClient {
  // Loaded here, on the first call to Anthropic, not with the worker (see the header).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { default: AnthropicClient } = require('@anthropic-ai/sdk') as { default: typeof Anthropic };
  return new AnthropicClient({
    apiKey: config.anthropic.apiKey ?? PLACEHOLDER_API_KEY,
    // Never a token or profile from the worker's environment or disk: the key above is the only credential.
    authToken: null,
    baseURL,
    maxRetries: 0,
    ...(config.requestTimeoutMs !== undefined ? { timeout: config.requestTimeoutMs } : {}),
    fetch: limitedFetch(config.maxReplyBodyBytes),
    logger: redactingLogger(config.secrets),
  });
}
