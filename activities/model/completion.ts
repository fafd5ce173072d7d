/**
 * One chat-completion request, as every model activity makes it: heartbeating while it waits, the
 * activity's cancellation handed to the HTTP call, the reply normalised, cleared of the worker's
 * secrets and size-checked, and any error turned into the failure Temporal should act on
 * (classify-error.ts). The reply body itself is bounded as it is read (reply-limit.ts, through the
 * client's fetch). A streamed request (streaming.ts) shows the reply in the heartbeats as it comes.
 */
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ChatCompletionCreateParams, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { ChatMessage, ToolDefinition } from '../../common/messages';
import { MODEL_AUTH_ERROR } from '../../common/model-call';
import { classifyModelError, type ClassifyContext } from './classify-error';
import { startHeartbeat } from './heartbeat';
import { noDetails } from './input-check';
import type { ResolvedModelConfig } from './model-config';
import { checkReplySize, normalizeReply, type NormalizedReply } from './normalize-response';
import { redactReply } from '../redaction/redact-reply';
import { StreamProgressReporter } from './stream-progress';
import { streamCompletion } from './streaming';

/** The part of the openai client the activities use; tests may supply their own. */
export interface ChatCompletionsClient {
  chat: {
    completions: {
      create(body: ChatCompletionCreateParams, options?: { signal?: AbortSignal }): PromiseLike<unknown>;
    };
  };
}

/** One request to make. */
export interface CompletionRequest {
  body: ChatCompletionCreateParamsNonStreaming;
  model: string;
  /** The messages and tools as sent (for the usage estimates and text tool calls). */
  messages: readonly ChatMessage[];
  tools: readonly ToolDefinition[];
  /** Names the call in failure logs (`Model call`, `Compaction summary`). */
  label: string;
  /** Ask for a streamed reply and show it in the heartbeats while it is written (streaming.ts). */
  stream?: boolean;
}

/** The normalised reply and the wall time of the HTTP call. */
export interface Completion {
  reply: NormalizedReply;
  durationMs: number;
}

/** Fail at once when OpenAI's own API is configured without a key: every request would be refused. */
export function checkApiKey(config: ResolvedModelConfig): void {
  if (!config.missingApiKey) return;
  throw ApplicationFailure.create({
    type: MODEL_AUTH_ERROR,
    message: 'OPENAI_API_KEY is not set: set it, or set OPENAI_BASE_URL to an OpenAI-compatible server that needs no key.',
    nonRetryable: true,
    details: [noDetails()],
  });
}

/** Make the request inside the current activity; throws the classified failure. */
export async function requestCompletion(client: ChatCompletionsClient, config: ResolvedModelConfig, request: CompletionRequest): Promise<Completion> {
  return runModelRequest(config, request, {
    send: (signal, live) =>
      live
        ? streamCompletion((body, options) => client.chat.completions.create(body, options), request.body, { signal, baseURL: config.baseURL, progress: live })
        : client.chat.completions.create(request.body, { signal }),
    normalize: (raw) => normalizeReply(raw, { messages: request.messages, tools: request.tools }),
  });
}

/** How one provider sends a request and reads its reply (completion.ts does the rest). */
export interface WireExchange {
  /** Send the request: streamed, feeding `live`, when there is one; throws what the client threw. */
  send(signal: AbortSignal, live: StreamProgressReporter | undefined): PromiseLike<unknown>;
  /** The server's reply in the project's shape; throws a retryable failure when it is unusable. */
  normalize(raw: unknown): NormalizedReply;
  /** What failure hints name (the key and base URL variables, the server); default the Chat Completions ones. */
  classify?: Pick<ClassifyContext, 'baseURL' | 'keyVariable' | 'baseUrlVariable'>;
}

/**
 * One request of any provider inside the current activity: heartbeats while it waits (repeating the
 * live progress when streamed), the activity's cancellation handed to the client, the reply
 * normalised, redacted and size-checked, and any error classified into the failure Temporal acts on.
 */
export async function runModelRequest(config: ResolvedModelConfig, request: Pick<CompletionRequest, 'model' | 'label' | 'stream'>, wire: WireExchange): Promise<Completion> {
  const context = Context.current();
  const { model } = request;
  const signal = context.cancellationSignal;
  const live = request.stream ? new StreamProgressReporter({ attempt: context.info.attempt, secrets: config.secrets, heartbeat: (d) => context.heartbeat(d) }) : undefined;
  // While streaming, the keep-alive beats repeat the latest progress instead of replacing it.
  const stopHeartbeat = startHeartbeat(config.heartbeatIntervalMs, live && (() => live.latest()));
  const started = performance.now();
  try {
    const raw = await wire.send(signal, live);
    const reply = redactReply(wire.normalize(raw), config.secrets);
    // A reply too large to record would be requested again on every retry, each one paid for.
    checkReplySize(reply.message, config.maxReplyBytes);
    if (reply.usageFixed) {
      context.metricMeter.createCounter('loopwright_model_usage_fixed', 'fields', 'Usage fields of model replies that were not sane numbers and were replaced').add(reply.usageFixed, { model });
    }
    return { reply, durationMs: Math.round(performance.now() - started) };
  } catch (err) {
    const failure = classifyModelError(err, {
      secrets: config.secrets,
      model,
      baseURL: config.baseURL,
      signal,
      ...wire.classify,
    });
    const durationMs = Math.round(performance.now() - started);
    if (failure instanceof ApplicationFailure) {
      context.metricMeter.createCounter('loopwright_model_call_failures', 'calls', 'Model calls that failed, by failure type').add(1, { model, type: failure.type ?? 'unknown' });
      log.warn(`${request.label} failed`, { model, durationMs, type: failure.type, nonRetryable: failure.nonRetryable, message: failure.message });
    } else {
      log.info(`${request.label} cancelled`, { model, durationMs });
    }
    throw failure;
  } finally {
    live?.stop();
    stopHeartbeat();
  }
}
