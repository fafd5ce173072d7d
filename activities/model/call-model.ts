/**
 * The `callModel` activity: one chat-completion request to an OpenAI-compatible server through the
 * official `openai` client. The client's own retries are off: Temporal's retry policy decides, fed
 * by `classifyModelError`. The activity heartbeats while it waits and hands its cancellation signal
 * to the request, so an interrupt or a cancelled workflow aborts the HTTP call.
 */
import type { Span } from '@opentelemetry/api';
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { z } from 'zod';
import type { ModelRefCallInput } from '../../common/activity-types';
import { inActivitySpan } from '../activity-span';
import type { ChatMessage } from '../../common/messages';
import {
  DEFAULT_MAX_REPLY_BYTES,
  MODEL_AUTH_ERROR,
  MODEL_BAD_REQUEST,
  type ModelCallInput,
  type ModelCallResult,
  type ModelFailureDetails,
} from '../../common/model-call';
import { classifyModelError } from './classify-error';
import { startHeartbeat } from './heartbeat';
import { resolveModelConfig, type ModelConfigInput, type ResolvedModelConfig } from './model-config';
import { checkReplySize, normalizeReply } from './normalize-response';
import { TranscriptCache, type TranscriptPageSource } from './transcript-cache';

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
  /** Where `callModelV2` reads a session's transcript when its copy misses (the `transcriptPage` query). */
  transcriptSource?: TranscriptPageSource;
  /** Memory for cached transcripts, in bytes (default 256 MiB; LOOPWRIGHT_TRANSCRIPT_CACHE_MB). */
  transcriptCacheBytes?: number;
}

/** The model activities a worker registers. */
export interface ModelActivities {
  /** The whole transcript in the input (histories recorded before `callModelV2`). */
  callModel(input: ModelCallInput): Promise<ModelCallResult>;
  /** A reference to the transcript in the input; the worker keeps the messages. */
  callModelV2(input: ModelRefCallInput): Promise<ModelCallResult>;
  /** The worker's transcript copies (for tests and metrics). */
  transcripts: TranscriptCache | undefined;
}

const optionsSchema = z.object({
  tools: z.array(z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }).loose() })),
  model: z.string().trim().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().positive().optional(),
});
const inputSchema = optionsSchema.extend({
  messages: z
    .array(z.object({ role: z.enum(['system', 'user', 'assistant', 'tool']) }).loose())
    .min(1, 'at least one message is needed'),
});
const refInputSchema = optionsSchema.extend({
  transcript: z.object({
    workflowId: z.string().min(1),
    runId: z.string().min(1),
    count: z.number().int().min(1, 'at least one message is needed'),
    hash: z.string().min(1),
  }),
  delta: z.object({ from: z.number().int().min(0), messages: z.array(z.object({ role: z.string() }).loose()) }).optional(),
});

/** What every `loopwright.model_call` span starts with (OpenTelemetry's gen-ai conventions). */
const MODEL_SPAN_ATTRIBUTES = { 'gen_ai.operation.name': 'chat' } as const;

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
  const transcripts = options.transcriptSource
    ? new TranscriptCache(options.transcriptSource, options.transcriptCacheBytes ?? cacheBytesFromEnv(options.env ?? process.env))
    : undefined;

  /** One chat completion for `messages`; `input` says the tools and options; `span` is the call's `loopwright.model_call`. */
  const complete = async (messages: ChatMessage[], input: Omit<ModelCallInput, 'messages'>, span: Span): Promise<ModelCallResult> => {
    const context = Context.current();
    const model = input.model ?? config.defaultModel;
    // The attempt shows retries: attempt 2, 3, ... are the same call scheduled again.
    span.setAttributes({ 'gen_ai.request.model': model, 'loopwright.attempt': context.info.attempt, 'loopwright.messages': messages.length, 'loopwright.tools': input.tools.length });
    if (config.missingApiKey) {
      throw ApplicationFailure.create({
        type: MODEL_AUTH_ERROR,
        message:
          'OPENAI_API_KEY is not set: set it, or set OPENAI_BASE_URL to an OpenAI-compatible server that needs no key.',
        nonRetryable: true,
        details: [noDetails()],
      });
    }
    const body = buildRequest({ ...input, messages }, model, config);
    log.info('Model call started', {
      model,
      messages: messages.length,
      tools: input.tools.length,
      ...(config.logPayloads ? { request: body } : {}),
    });

    const stopHeartbeat = startHeartbeat(config.heartbeatIntervalMs);
    const started = performance.now();
    try {
      const reply = await client.chat.completions.create(body, { signal: context.cancellationSignal });
      const normalized = normalizeReply(reply);
      // A reply too large to record would be requested again on every retry, each one paid for.
      checkReplySize(normalized.message, DEFAULT_MAX_REPLY_BYTES);
      const result: ModelCallResult = {
        message: normalized.message,
        usage: normalized.usage,
        model: normalized.model ?? model,
        finishReason: normalized.finishReason,
        durationMs: Math.round(performance.now() - started),
      };
      recordModelMetrics(context, result, model);
      span.setAttributes({
        'gen_ai.response.model': result.model,
        'gen_ai.response.finish_reasons': [result.finishReason ?? 'unknown'],
        'loopwright.tool_call_requests': result.message.tool_calls?.length ?? 0,
        ...(result.usage ? { 'gen_ai.usage.input_tokens': result.usage.promptTokens, 'gen_ai.usage.output_tokens': result.usage.completionTokens } : {}),
      });
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
        context.metricMeter.createCounter('loopwright_model_call_failures', 'calls', 'Model calls that failed, by failure type').add(1, { model, type: failure.type ?? 'unknown' });
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
  };

  return {
    transcripts,
    async callModel(input: ModelCallInput): Promise<ModelCallResult> {
      return inActivitySpan('loopwright.model_call', MODEL_SPAN_ATTRIBUTES, async (span) => {
        checkInput(inputSchema, input);
        return complete(input.messages, input, span);
      });
    },
    async callModelV2(input: ModelRefCallInput): Promise<ModelCallResult> {
      return inActivitySpan('loopwright.model_call', MODEL_SPAN_ATTRIBUTES, async (span) => {
        checkInput(refInputSchema, input);
        if (!transcripts) {
          throw ApplicationFailure.create({
            type: MODEL_BAD_REQUEST,
            message: 'This worker cannot read session transcripts: create its activities with a transcript source (createWorker does)',
            nonRetryable: true,
            details: [noDetails()],
          });
        }
        const context = Context.current();
        const { transcript, outcome } = await transcripts.resolve(input.transcript, input.delta, () => context.heartbeat());
        span.setAttribute('loopwright.transcript', outcome);
        if (outcome === 'refilled' || outcome === 'synced') {
          log.info('Transcript read from the session', { outcome, messages: transcript.length, bytes: transcript.bytes });
        }
        const { transcript: _ref, delta: _delta, ...rest } = input;
        const result = await complete(transcript.slice(), rest, span);
        transcripts.recordReply(input.transcript, result.message);
        return result;
      });
    },
  };
}

function cacheBytesFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.LOOPWRIGHT_TRANSCRIPT_CACHE_MB;
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`LOOPWRIGHT_TRANSCRIPT_CACHE_MB must be a positive number of megabytes, got "${raw}"`);
  }
  return Math.round(value * 1024 * 1024);
}

/** Latency and tokens of one model call, through the worker's metric meter (Prometheus when LOOPWRIGHT_METRICS is set). */
function recordModelMetrics(context: Context, result: ModelCallResult, model: string): void {
  const meter = context.metricMeter;
  const tags = { model };
  meter.createHistogram('loopwright_model_call_latency', 'int', 'ms', 'Wall time of one model call').record(result.durationMs, tags);
  if (result.usage) {
    meter.createCounter('loopwright_model_tokens_in', 'tokens', 'Prompt tokens sent to the model').add(result.usage.promptTokens, tags);
    meter.createCounter('loopwright_model_tokens_out', 'tokens', 'Completion tokens the model returned').add(result.usage.completionTokens, tags);
  }
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
function checkInput(schema: z.ZodType, input: unknown): void {
  const parsed = schema.safeParse(input);
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
