/**
 * The `callModel` activity: one chat-completion request to an OpenAI-compatible server through the
 * official `openai` client. The client's own retries are off: Temporal's retry policy decides, fed
 * by `classifyModelError`. The activity heartbeats while it waits and hands its cancellation signal
 * to the request, so an interrupt or a cancelled workflow aborts the HTTP call.
 */
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { z } from 'zod';
import {
  MODEL_AUTH_ERROR,
  MODEL_BAD_REQUEST,
  type ModelCallInput,
  type ModelCallResult,
  type ModelFailureDetails,
} from '../../common/model-call';
import { classifyModelError } from './classify-error';
import { startHeartbeat } from './heartbeat';
import { resolveModelConfig, type ModelConfigInput, type ResolvedModelConfig } from './model-config';
import { normalizeReply } from './normalize-response';

export { DEFAULT_MODEL } from '../../common/model-call';

/** What a client factory receives. */
export interface ModelClientConfig {
  apiKey: string;
  baseURL: string | undefined;
  /** Always 0: retries belong to Temporal. */
  maxRetries: 0;
  /** Client-side request timeout in ms, when configured. */
  timeout: number | undefined;
}

/** The part of the openai client the activity uses; tests may supply their own. */
export interface ChatCompletionsClient {
  chat: {
    completions: {
      create(body: ChatCompletionCreateParamsNonStreaming, options?: { signal?: AbortSignal }): PromiseLike<unknown>;
    };
  };
}

/** Builds the client from the resolved settings (default: the official `openai` client). */
export type ModelClientFactory = (config: ModelClientConfig) => ChatCompletionsClient;

/** Settings of the model activity; anything left out comes from the environment, then defaults. */
export interface ModelActivityOptions extends ModelConfigInput {
  clientFactory?: ModelClientFactory;
  /** Environment to read instead of `process.env` (tests). */
  env?: NodeJS.ProcessEnv;
}

/** The model activities a worker registers. */
export interface ModelActivities {
  callModel(input: ModelCallInput): Promise<ModelCallResult>;
}

const inputSchema = z.object({
  messages: z
    .array(z.object({ role: z.enum(['system', 'user', 'assistant', 'tool']) }).loose())
    .min(1, 'at least one message is needed'),
  tools: z.array(z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }).loose() })),
  model: z.string().trim().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().positive().optional(),
});

/** Host of OpenAI's own API: it wants `max_completion_tokens`; compatible servers know `max_tokens`. */
const OPENAI_HOST = 'api.openai.com';

/**
 * Create the model activities. Reads OPENAI_API_KEY, OPENAI_BASE_URL and LOOPWRIGHT_MODEL for what
 * `options` leaves out; throws ModelConfigError (naming the setting) when a setting is invalid.
 */
export function createModelActivities(options: ModelActivityOptions = {}): ModelActivities {
  const config = resolveModelConfig(options, options.env ?? process.env);
  const factory = options.clientFactory ?? defaultClientFactory;
  const client = factory({
    apiKey: config.apiKey,
    baseURL: config.baseURL,
    maxRetries: 0,
    timeout: config.requestTimeoutMs,
  });

  return {
    async callModel(input: ModelCallInput): Promise<ModelCallResult> {
      const context = Context.current();
      checkInput(input);
      const model = input.model ?? config.defaultModel;
      if (config.missingApiKey) {
        throw ApplicationFailure.create({
          type: MODEL_AUTH_ERROR,
          message:
            'OPENAI_API_KEY is not set: set it, or set OPENAI_BASE_URL to an OpenAI-compatible server that needs no key.',
          nonRetryable: true,
          details: [noDetails()],
        });
      }
      const body = buildRequest(input, model, config);
      log.info('Model call started', {
        model,
        messages: input.messages.length,
        tools: input.tools.length,
        ...(config.logPayloads ? { request: body } : {}),
      });

      const stopHeartbeat = startHeartbeat(config.heartbeatIntervalMs);
      const started = performance.now();
      try {
        const reply = await client.chat.completions.create(body, { signal: context.cancellationSignal });
        const normalized = normalizeReply(reply);
        const result: ModelCallResult = {
          message: normalized.message,
          usage: normalized.usage,
          model: normalized.model ?? model,
          finishReason: normalized.finishReason,
          durationMs: Math.round(performance.now() - started),
        };
        log.info('Model call finished', {
          model: result.model,
          durationMs: result.durationMs,
          finishReason: result.finishReason,
          toolCalls: (result.message.tool_calls ?? []).map((c) => c.function.name),
          usage: result.usage,
          ...(config.logPayloads ? { reply: result.message } : {}),
        });
        return result;
      } catch (err) {
        const failure = classifyModelError(err, {
          secrets: [config.apiKey],
          model,
          baseURL: config.baseURL,
          signal: context.cancellationSignal,
        });
        const durationMs = Math.round(performance.now() - started);
        if (failure instanceof ApplicationFailure) {
          log.warn('Model call failed', {
            model,
            durationMs,
            type: failure.type,
            nonRetryable: failure.nonRetryable,
            message: failure.message,
          });
        } else {
          log.info('Model call cancelled', { model, durationMs });
        }
        throw failure;
      } finally {
        stopHeartbeat();
      }
    },
  };
}

function defaultClientFactory(config: ModelClientConfig): ChatCompletionsClient {
  return new OpenAI({
    apiKey: config.apiKey,
    baseURL: config.baseURL,
    maxRetries: config.maxRetries,
    ...(config.timeout !== undefined ? { timeout: config.timeout } : {}),
  });
}

/** The request body: tools and `tool_choice: 'auto'` only when there are tools. */
function buildRequest(input: ModelCallInput, model: string, config: ResolvedModelConfig): ChatCompletionCreateParamsNonStreaming {
  const body: ChatCompletionCreateParamsNonStreaming = { model, messages: input.messages };
  if (input.tools.length > 0) {
    body.tools = input.tools;
    body.tool_choice = 'auto';
  }
  if (input.temperature !== undefined) body.temperature = input.temperature;
  if (input.maxTokens !== undefined) {
    const isOpenAI = config.baseURL === undefined || new URL(config.baseURL).hostname === OPENAI_HOST;
    if (isOpenAI) body.max_completion_tokens = input.maxTokens;
    else body.max_tokens = input.maxTokens;
  }
  return body;
}

/** A malformed input is a bug in the caller; retrying cannot fix it. */
function checkInput(input: ModelCallInput): void {
  const parsed = inputSchema.safeParse(input);
  if (parsed.success) return;
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length > 0 ? issue.path.join('.') : 'input';
  throw ApplicationFailure.create({
    type: MODEL_BAD_REQUEST,
    message: `Invalid model call input: ${where}: ${issue.message}`,
    nonRetryable: true,
    details: [noDetails()],
  });
}

function noDetails(): ModelFailureDetails {
  return { status: null, providerType: null, providerCode: null, requestId: null, retryAfterMs: null };
}
