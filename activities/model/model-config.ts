/**
 * Settings of the model activity, layered from least to most specific: defaults, environment
 * (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `LOOPWRIGHT_MODEL`, `LOOPWRIGHT_LOG_PAYLOADS`,
 * `LOOPWRIGHT_MAX_REPLY_BYTES`, `LOOPWRIGHT_MAX_REPLY_BODY_BYTES`), then the options the worker
 * passes. Validated once, when the worker builds its activities.
 */
import { z } from 'zod';
import { DEFAULT_MAX_REPLY_BYTES, DEFAULT_MODEL, REPLY_BODY_FACTOR } from '../../common/model-call';

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
}

/** A setting of the model activity is invalid; the message names it. */
export class ModelConfigError extends Error {
  override readonly name = 'ModelConfigError';
}

const configSchema = z.object({
  apiKey: z.string().min(1).optional(),
  baseURL: z
    .url({ protocol: /^https?$/ })
    // fetch refuses such URLs, and every log or failure would carry the password.
    .refine((url) => !URL.canParse(url) || !hasCredentials(new URL(url)), 'must not hold credentials (user:password@); put the key in OPENAI_API_KEY')
    .optional(),
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
  return {
    apiKey: config.apiKey ?? PLACEHOLDER_API_KEY,
    secrets: config.apiKey !== undefined && config.apiKey !== PLACEHOLDER_API_KEY ? [config.apiKey] : [],
    missingApiKey: config.apiKey === undefined && needsKey,
    baseURL: config.baseURL,
    defaultModel: config.defaultModel,
    heartbeatIntervalMs: config.heartbeatIntervalMs,
    requestTimeoutMs: config.requestTimeoutMs,
    logPayloads: config.logPayloads,
    maxReplyBytes: config.maxReplyBytes,
    maxReplyBodyBytes: config.maxReplyBodyBytes ?? config.maxReplyBytes * REPLY_BODY_FACTOR,
  };
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
