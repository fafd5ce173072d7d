/**
 * Settings of the model activity, layered from least to most specific: defaults, environment
 * (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `LOOPWRIGHT_MODEL`, `LOOPWRIGHT_LOG_PAYLOADS`,
 * `LOOPWRIGHT_MAX_REPLY_BYTES`, `LOOPWRIGHT_MAX_REPLY_BODY_BYTES`, and for Anthropic's Messages API
 * `LOOPWRIGHT_PROVIDER`, `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`), then the options the worker
 * passes. Validated once, when the worker builds its activities. Keys are read here, on the worker,
 * and nowhere else: never in workflow input or history.
 */
import { z } from 'zod';
import { DEFAULT_MAX_REPLY_BYTES, DEFAULT_MODEL, REPLY_BODY_FACTOR } from '../../common/model-call';
import { PROVIDERS, type ProviderName } from '../../common/providers';

/** Heartbeat cadence while a model call is in flight, unless the activity's heartbeat timeout asks for faster. */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 1000;

/** Key passed to the openai client for servers that need none (it refuses to start without one). */
export const PLACEHOLDER_API_KEY = 'not-needed';

/** Host of OpenAI's own API, where a real key is always needed. */
const OPENAI_HOST = 'api.openai.com';

/** Settings the model activity is built from. */
export interface ResolvedModelConfig {
  /** Key to send; the placeholder when the server needs none. Never logged. */
  apiKey: string;
  /**
   * What must never leave the activity, in any encoding (redact.ts): the key, unless it is the
   * placeholder, which is no secret and would mangle replies that say "not needed".
   */
  secrets: string[];
  /** True when no key was configured and the server is OpenAI's own: every call fails with a clear message. */
  missingApiKey: boolean;
  /** Base URL of an OpenAI-compatible server; undefined means OpenAI's. */
  baseURL: string | undefined;
  defaultModel: string;
  heartbeatIntervalMs: number;
  /** Client-side timeout of one HTTP request; undefined keeps the openai client's own (10 minutes). */
  requestTimeoutMs: number | undefined;
  /** Log messages and replies (LOOPWRIGHT_LOG_PAYLOADS=1). */
  logPayloads: boolean;
  /** Largest reply message returned, as JSON in UTF-8 bytes (DEFAULT_MAX_REPLY_BYTES). */
  maxReplyBytes: number;
  /** Largest HTTP body read from the model server, decoded (REPLY_BODY_FACTOR times `maxReplyBytes`). */
  maxReplyBodyBytes: number;
  /** Provider of calls whose model and session name none: LOOPWRIGHT_PROVIDER, else the kind of `baseURL`. */
  defaultProvider: ProviderName;
  /** Anthropic's Messages API: its key (undefined: none configured) and base URL (undefined: Anthropic's own). */
  anthropic: { apiKey: string | undefined; baseURL: string | undefined };
}

/** Inputs of `resolveModelConfig`: the worker's options, then the environment for what they leave out. */
export interface ModelConfigInput {
  apiKey?: string;
  baseURL?: string;
  defaultModel?: string;
  heartbeatIntervalMs?: number;
  requestTimeoutMs?: number;
  logPayloads?: boolean;
  /** Largest reply message returned (default DEFAULT_MAX_REPLY_BYTES; LOOPWRIGHT_MAX_REPLY_BYTES). */
  maxReplyBytes?: number;
  /** Largest HTTP body read from the model server, decoded (default REPLY_BODY_FACTOR x maxReplyBytes; LOOPWRIGHT_MAX_REPLY_BODY_BYTES). */
  maxReplyBodyBytes?: number;
  /** Provider of calls whose model and session name none (LOOPWRIGHT_PROVIDER; default: the kind of `baseURL`). */
  provider?: ProviderName;
  /** Key of Anthropic's Messages API (ANTHROPIC_API_KEY). */
  anthropicApiKey?: string;
  /** Base URL of Anthropic's Messages API, without `/v1` (ANTHROPIC_BASE_URL; default Anthropic's). */
  anthropicBaseURL?: string;
}

/** A setting of the model activity is invalid; the message names it. */
export class ModelConfigError extends Error {
  override readonly name = 'ModelConfigError';
}

/** A server's base URL: http(s), without credentials (fetch refuses such URLs, and every log or failure would carry the password). */
function serverUrl(keyVariable: string) {
  return z
    .url({ protocol: /^https?$/ })
    .refine((url) => !URL.canParse(url) || !hasCredentials(new URL(url)), `must not hold credentials (user:password@); put the key in ${keyVariable}`)
    .optional();
}

const configSchema = z.object({
  apiKey: z.string().min(1).optional(),
  baseURL: serverUrl('OPENAI_API_KEY'),
  provider: z.enum(PROVIDERS).optional(),
  anthropicApiKey: z.string().min(1).optional(),
  anthropicBaseURL: serverUrl('ANTHROPIC_API_KEY'),
  defaultModel: z.string().trim().min(1),
  heartbeatIntervalMs: z.number().int().positive(),
  requestTimeoutMs: z.number().int().positive().optional(),
  logPayloads: z.boolean(),
  maxReplyBytes: z.number().int().positive(),
  maxReplyBodyBytes: z.number().int().positive().optional(),
});

/** Names shown in errors, so the operator knows which setting to fix. */
const SETTING_NAMES: Record<string, string> = {
  apiKey: 'apiKey (OPENAI_API_KEY)',
  baseURL: 'baseURL (OPENAI_BASE_URL)',
  defaultModel: 'defaultModel (LOOPWRIGHT_MODEL)',
  heartbeatIntervalMs: 'heartbeatIntervalMs',
  requestTimeoutMs: 'requestTimeoutMs',
  logPayloads: 'logPayloads (LOOPWRIGHT_LOG_PAYLOADS)',
  maxReplyBytes: 'maxReplyBytes (LOOPWRIGHT_MAX_REPLY_BYTES)',
  maxReplyBodyBytes: 'maxReplyBodyBytes (LOOPWRIGHT_MAX_REPLY_BODY_BYTES)',
  provider: 'provider (LOOPWRIGHT_PROVIDER)',
  anthropicApiKey: 'anthropicApiKey (ANTHROPIC_API_KEY)',
  anthropicBaseURL: 'anthropicBaseURL (ANTHROPIC_BASE_URL)',
};

/** Combine options and environment into validated settings; throws ModelConfigError naming the bad setting. */
export function resolveModelConfig(options: ModelConfigInput = {}, env: NodeJS.ProcessEnv = process.env): ResolvedModelConfig {
  const candidate = {
    apiKey: options.apiKey ?? nonEmpty(env.OPENAI_API_KEY),
    baseURL: options.baseURL ?? nonEmpty(env.OPENAI_BASE_URL),
    defaultModel: options.defaultModel ?? nonEmpty(env.LOOPWRIGHT_MODEL) ?? DEFAULT_MODEL,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS,
    requestTimeoutMs: options.requestTimeoutMs,
    logPayloads: options.logPayloads ?? env.LOOPWRIGHT_LOG_PAYLOADS === '1',
    maxReplyBytes: options.maxReplyBytes ?? numberFrom(env.LOOPWRIGHT_MAX_REPLY_BYTES) ?? DEFAULT_MAX_REPLY_BYTES,
    maxReplyBodyBytes: options.maxReplyBodyBytes ?? numberFrom(env.LOOPWRIGHT_MAX_REPLY_BODY_BYTES),
    provider: options.provider ?? nonEmpty(env.LOOPWRIGHT_PROVIDER),
    anthropicApiKey: options.anthropicApiKey ?? nonEmpty(env.ANTHROPIC_API_KEY),
    anthropicBaseURL: options.anthropicBaseURL ?? nonEmpty(env.ANTHROPIC_BASE_URL),
  };
  const parsed = configSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = String(issue.path[0] ?? 'settings');
    // Never echo the value: for apiKey it would be the key itself.
    throw new ModelConfigError(`Invalid model setting ${SETTING_NAMES[field] ?? field}: ${issue.message}`);
  }
  const config = parsed.data;
  const needsKey = config.baseURL === undefined || new URL(config.baseURL).hostname === OPENAI_HOST;
  const baseKind = baseUrlKind(config.baseURL);
  // OPENAI_BASE_URL naming Anthropic's host: its key is an Anthropic key, and the SDK adds /v1 itself.
  const anthropic = {
    apiKey: config.anthropicApiKey ?? (baseKind === 'anthropic' ? config.apiKey : undefined),
    baseURL: config.anthropicBaseURL ?? (baseKind === 'anthropic' ? new URL(config.baseURL!).origin : undefined),
  };
  const secrets = [config.apiKey, anthropic.apiKey].filter((key): key is string => key !== undefined && key !== PLACEHOLDER_API_KEY);
  return {
    apiKey: config.apiKey ?? PLACEHOLDER_API_KEY,
    secrets: [...new Set(secrets)],
    missingApiKey: config.apiKey === undefined && needsKey,
    baseURL: config.baseURL,
    defaultModel: config.defaultModel,
    heartbeatIntervalMs: config.heartbeatIntervalMs,
    requestTimeoutMs: config.requestTimeoutMs,
    logPayloads: config.logPayloads,
    maxReplyBytes: config.maxReplyBytes,
    maxReplyBodyBytes: config.maxReplyBodyBytes ?? config.maxReplyBytes * REPLY_BODY_FACTOR,
    defaultProvider: config.provider ?? baseKind,
    anthropic,
  };
}

/** The provider a base URL's host serves: Anthropic's hosts speak Messages; anything else (or none) Chat Completions. */
export function baseUrlKind(baseURL: string | undefined): ProviderName {
  if (baseURL === undefined || !URL.canParse(baseURL)) return 'openai';
  const host = new URL(baseURL).hostname.toLowerCase();
  return host === 'anthropic.com' || host.endsWith('.anthropic.com') ? 'anthropic' : 'openai';
}

function hasCredentials(url: URL): boolean {
  return url.username !== '' || url.password !== '';
}

/** A number setting from the environment; anything that is not one fails validation by name. */
function numberFrom(value: string | undefined): number | undefined {
  const text = nonEmpty(value);
  return text === undefined ? undefined : Number(text);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
