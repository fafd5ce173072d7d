/**
 * The model activities: `callModel`/`callModelV2` (one request for the model's view of the
 * transcript, through the provider the call's model names: Chat Completions through the official
 * `openai` client, Anthropic Messages through `@anthropic-ai/sdk`, or OpenAI Responses through the `openai` client's `responses.create`; providers.ts), `summarizeContext` (summarize-context.ts), `verifyDocument` (verify/verify-document.ts) and `describeModel` (describe-model.ts). The client's own retries are off: Temporal's retry policy decides, fed
 * by `classifyModelError`. The activity heartbeats while it waits and hands its cancellation signal
 * to the request, so an interrupt or a cancelled workflow aborts the HTTP call. The client reads
 * through a fetch that bounds every body (reply-limit.ts) and logs through a logger that redacts.
 */
import type { Span } from '@opentelemetry/api';
import { Context, log } from '@temporalio/activity';
import OpenAI from 'openai';
import { type ModelRefCallInput, TOOLS_UNKNOWN } from '../../common/activity-types';
import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage, ToolDefinition } from '../../common/messages';
import type { DescribeModelInput, ModelCallInput, ModelCallResult, ModelDescription, SummarizeInput, SummarizeResult } from '../../common/model-call';
import type { VerifyInput, VerifyResult } from '../../common/verify-types';
import { viewMessages } from '../../common/model-view';
import { toolMessage } from '../../common/transcript';
import { estimatePromptTokens } from '../../common/token-estimate';
import { inActivitySpan } from '../activity-span';
import { redactingLogger, type ClientLogger } from './client-logger';
import type { ChatCompletionsClient } from './completion';
import { ModelProviders } from './providers';
import { createDescribeModel } from './describe-model';
import { badRequest, checkInput, inputSchema, refInputSchema } from './input-check';
import { resolveModelConfig, type ModelConfigInput, type ResolvedModelConfig } from './model-config';
import { limitedFetch, type Fetch } from './reply-limit';
import { InlineReader, type InlineReadsOptions } from './inline-reads';
import { RunCache } from '../transcript/run-cache';
import { createSummarizeContext } from './summarize-context';
import { TranscriptCache, type TranscriptPageSource } from '../transcript/transcript-cache';
import { createVerifyDocument } from '../verify/verify-document';

export { DEFAULT_MODEL } from '../../common/model-call';
export type { ChatCompletionsClient } from './completion';

/** What a client factory receives. */
export interface ModelClientConfig {
  apiKey: string;
  baseURL: string | undefined;
  /** Always 0: retries belong to Temporal. */
  maxRetries: 0;
  /** Client-side request timeout in ms, when configured. */
  timeout: number | undefined;
  /** The fetch to make requests with: its bodies stop at the reply-body limit (`maxReplyBodyBytes`). */
  fetch: Fetch;
  /** Where the client's own logs go (OPENAI_LOG): the console, with the key redacted in every encoding. */
  logger: ClientLogger;
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
  /** How `callModelV2` runs a reply's reads inline (createActivities gives it); without it, it runs none. */
  inlineReads?: InlineReadsOptions;
}

/** The model activities a worker registers. */
export interface ModelActivities {
  /** The whole transcript in the input (histories recorded before `callModelV2`). */
  callModel(input: ModelCallInput): Promise<ModelCallResult>;
  /** A reference to the transcript in the input; the worker keeps the messages. */
  callModelV2(input: ModelRefCallInput): Promise<ModelCallResult>;
  /** Summarise the oldest part of the model's view (context compaction). */
  summarizeContext(input: SummarizeInput): Promise<SummarizeResult>;
  /** Check a saved document against its workflow's checklist (the verify phase). */
  verifyDocument(input: VerifyInput): Promise<VerifyResult>;
  /** The model's context window as the server reports it (never fails). */
  describeModel(input: DescribeModelInput): Promise<ModelDescription>;
  /** The worker's transcript copies (for tests and metrics). */
  transcripts: TranscriptCache | undefined;
}

/** What every `loopwright.model_call` span starts with (OpenTelemetry's gen-ai conventions). */
const MODEL_SPAN_ATTRIBUTES = { 'gen_ai.operation.name': 'chat' } as const;

/**
 * Create the model activities. Reads OPENAI_API_KEY, OPENAI_BASE_URL and LOOPWRIGHT_MODEL for what
 * `options` leaves out; throws ModelConfigError (naming the setting) when a setting is invalid.
 */
export function createModelActivities(options: ModelActivityOptions = {}): ModelActivities {
  const config = resolveModelConfig(options, options.env ?? process.env);
  const client = chatCompletionsClient(config, options.clientFactory);
  const transcripts = options.transcriptSource ? new TranscriptCache(options.transcriptSource, options.transcriptCacheBytes ?? cacheBytesFromEnv(options.env ?? process.env)) : undefined;
  const providers = new ModelProviders(config, client);
  const runs = new RunCache();
  const inlineReader = options.inlineReads ? new InlineReader(options.inlineReads, runs) : undefined;

  /**
   * One chat completion for the transcript `messages` (the whole transcript so far): the view's
   * messages and `extra` are sent, made template-safe; `span` is the call's `loopwright.model_call`.
   */
  const complete = async (transcript: readonly ChatMessage[], input: Omit<ModelCallInput, 'messages'>, span: Span): Promise<ModelCallResult> => {
    const context = Context.current();
    const { provider, model } = providers.resolve(input.model, input.settings);
    const prepared = provider.prepare({
      model,
      messages: [...viewMessages(transcript, input.view), ...(input.extra ?? [])],
      tools: input.tools,
      settings: input.settings,
      temperature: input.temperature,
      maxTokens: input.maxTokens,
      label: 'Model call',
      stream: input.settings?.stream === true,
      cache: true,
    });
    const { messages } = prepared;
    // The attempt shows retries: attempt 2, 3, ... are the same call scheduled again.
    span.setAttributes({ 'gen_ai.request.model': model, 'loopwright.attempt': context.info.attempt, 'loopwright.messages': messages.length, 'loopwright.tools': input.tools.length });
    if (provider.name === 'anthropic') span.setAttribute('gen_ai.system', provider.name);
    provider.checkReady();
    // One log line per call (when it ends) unless payloads are logged: then the request goes out first.
    if (config.logPayloads) log.info('Model call started', { model, messages: messages.length, tools: input.tools.length, request: prepared.body });
    const { reply, durationMs } = await prepared.send();
    const result: ModelCallResult = {
      message: reply.message,
      usage: reply.usage,
      model: reply.model ?? model,
      finishReason: reply.finishReason,
      durationMs,
      ...(reply.refusal ? { refusal: true } : {}),
      ...(reply.warnings ? { warnings: reply.warnings } : {}),
      estimatedPromptTokens: estimatePromptTokens(messages, input.tools),
    };
    recordModelMetrics(context, result, model);
    span.setAttributes({
      'gen_ai.response.model': result.model,
      'gen_ai.response.finish_reasons': [result.finishReason ?? 'unknown'],
      'loopwright.tool_call_requests': result.message.tool_calls?.length ?? 0,
      ...(result.usage ? { 'gen_ai.usage.input_tokens': result.usage.promptTokens, 'gen_ai.usage.output_tokens': result.usage.completionTokens } : {}),
      ...(result.usage?.cacheReadTokens !== undefined ? { 'gen_ai.usage.cache_read.input_tokens': result.usage.cacheReadTokens } : {}),
      ...(result.usage?.cacheWriteTokens !== undefined ? { 'gen_ai.usage.cache_creation.input_tokens': result.usage.cacheWriteTokens } : {}),
    });
    log.info('Model call finished', {
      model: result.model,
      messages: messages.length,
      durationMs: result.durationMs,
      finishReason: result.finishReason,
      toolCalls: (result.message.tool_calls ?? []).map((c) => c.function.name),
      usage: result.usage,
      ...(result.warnings ? { warnings: result.warnings } : {}),
      ...(config.logPayloads ? { reply: result.message } : {}),
    });
    return result;
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
        // Before the transcript: a call that names tools this worker lacks is answered at once.
        const tools = toolsOf(runs, input);
        if (!transcripts) throw badRequest('This worker cannot read session transcripts: create its activities with a transcript source (createWorker does)');
        const context = Context.current();
        const { transcript, outcome } = await transcripts.resolve(input.transcript, input.delta, () => context.heartbeat());
        span.setAttribute('loopwright.transcript', outcome);
        if (outcome === 'refilled' || outcome === 'synced') {
          log.info('Transcript read from the session', { outcome, messages: transcript.length, bytes: transcript.bytes });
        }
        const { transcript: _ref, delta: _delta, inline, toolsKey: _key, ...rest } = input;
        // The copy's own array, read only: nothing changes it until this call has its reply.
        const result = await complete(transcript.messages, { ...rest, tools }, span);
        // With `extra` the reply is not the transcript's next message (a continuation of a cut-off reply).
        if (input.extra === undefined) transcripts.recordReply(input.transcript, result.message);
        const calls = result.message.tool_calls;
        if (inline && inlineReader && calls?.length && input.extra === undefined) {
          const outcome = await inlineReader.run(input.transcript, inline, calls, context.cancellationSignal);
          const ran = outcome.toolResults;
          // Every call ran here: the session will append exactly their tool messages after the reply.
          if (ran?.every((r) => r !== null))
            transcripts.recordToolMessages(
              input.transcript,
              calls.map((c, i) => toolMessage(c.id, ran[i]!)),
            );
          return { ...result, ...outcome };
        }
        return result;
      });
    },
    summarizeContext: createSummarizeContext({ providers, config, transcripts }),
    verifyDocument: createVerifyDocument({ providers, config }),
    describeModel: createDescribeModel(config),
  };
}

/** The call's tool definitions: sent (and kept under their key), or kept from an earlier call of the run. */
function toolsOf(runs: RunCache, input: ModelRefCallInput): ToolDefinition[] {
  if (input.tools) {
    if (input.toolsKey !== undefined) runs.setTools(input.transcript, input.toolsKey, input.tools);
    return input.tools;
  }
  const kept = input.toolsKey !== undefined ? runs.tools(input.transcript, input.toolsKey) : undefined;
  if (kept) return kept;
  throw ApplicationFailure.create({
    type: TOOLS_UNKNOWN,
    message: `This worker holds no tool definitions under key ${input.toolsKey ?? '(none)'} for this session run; the workflow sends them again`,
    nonRetryable: true,
  });
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
    if (result.usage.cacheReadTokens)
      meter.createCounter('loopwright_model_tokens_cache_read', 'tokens', "Prompt tokens read from the provider's prompt cache").add(result.usage.cacheReadTokens, tags);
    if (result.usage.cacheWriteTokens)
      meter.createCounter('loopwright_model_tokens_cache_write', 'tokens', "Prompt tokens written to the provider's prompt cache").add(result.usage.cacheWriteTokens, tags);
  }
}

/**
 * The Chat Completions client of resolved settings, made by `factory` (default: the official one):
 * no retries of its own (the activity's retry policy is the one), the settings' request timeout, a
 * fetch that stops a reply past its size limit, and a logger that redacts the worker's secrets.
 * The model activities and the eval's grader make theirs here.
 */
export function chatCompletionsClient(config: ResolvedModelConfig, factory: ModelClientFactory = defaultClientFactory): ChatCompletionsClient {
  return factory({
    apiKey: config.apiKey,
    baseURL: config.baseURL,
    maxRetries: 0,
    timeout: config.requestTimeoutMs,
    fetch: limitedFetch(config.maxReplyBodyBytes),
    logger: redactingLogger(config.secrets),
  });
}

/** The official `openai` client, as the model activities make it (the eval's grader too). */
export function defaultClientFactory(config: ModelClientConfig): ChatCompletionsClient {
  return new OpenAI({
    apiKey: config.apiKey,
    baseURL: config.baseURL,
    maxRetries: config.maxRetries,
    ...(config.timeout !== undefined ? { timeout: config.timeout } : {}),
    fetch: config.fetch,
    logger: config.logger,
  });
}
