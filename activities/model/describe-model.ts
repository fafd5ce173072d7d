/**
 * The `describeModel` activity: the model's context window as the server reports it, so the
 * session can plan compaction for the window it really has. Never fails: a server that says
 * nothing (or cannot be reached) gives `contextWindow: null` and a `source` saying why. Asks, in
 * order: llama.cpp's `GET /props`; `GET <baseURL>/models/<model>`; `GET <baseURL>/models`. Each body
 * is read within the reply-body limit (reply-limit.ts), as the model call's are.
 */
import type { DescribeModelInput, ModelDescription } from '../../common/model-call';
import { splitProviderModel } from '../../common/providers';
import { isOpenAIServer } from './build-request';
import { heartbeatEverySecond } from './heartbeat';
import { PLACEHOLDER_API_KEY, type ResolvedModelConfig } from './model-config';
import { redactSecrets } from '../redaction/redact';
import { limitedFetch, type Fetch } from './reply-limit';

/** Timeout of each request. */
export const DESCRIBE_TIMEOUT_MS = 5_000;

/** Fields of a model entry that name its window, most specific first; `meta.n_ctx_train` (the trained length) comes last. */
const WINDOW_FIELDS: readonly string[] = ['context_length', 'context_window', 'max_model_len', 'max_context_length', 'n_ctx', 'meta.n_ctx', 'meta.n_ctx_train'];

/** What a GET gave: JSON, or why there was none. */
type Fetched = { ok: true; json: unknown } | { ok: false; reachable: boolean; reason: string };

/** Create the `describeModel` activity. */
export function createDescribeModel(config: ResolvedModelConfig, timeoutMs = DESCRIBE_TIMEOUT_MS): (input: DescribeModelInput) => Promise<ModelDescription> {
  const fetch = limitedFetch(config.maxReplyBodyBytes);
  return async (input) => {
    const model = input?.model ?? config.defaultModel;
    let description: ModelDescription;
    // Beats while it asks, so a worker lost meanwhile is noticed within the session's model heartbeat timeout.
    const stopBeating = heartbeatEverySecond();
    try {
      description = await describe(config, model, timeoutMs, fetch);
    } catch (err) {
      // Never fails: an unknown window only means the session's default is used.
      description = { model, contextWindow: null, source: `could not ask the server (${err instanceof Error ? err.message : String(err)})` };
    } finally {
      stopBeating();
    }
    // The source quotes errors, which may quote what the server sent.
    return { ...description, source: redactSecrets(description.source, config.secrets) };
  };
}

async function describe(config: ResolvedModelConfig, model: string, timeoutMs: number, fetch: Fetch): Promise<ModelDescription> {
  // A model on Anthropic's Messages API: the Chat Completions server knows nothing of it.
  if ((splitProviderModel(model).provider ?? config.defaultProvider) === 'anthropic') return { model, contextWindow: null, source: "Anthropic's Messages API does not report it" };
  if (isOpenAIServer(config.baseURL)) return { model, contextWindow: null, source: 'OpenAI does not report it' };
  const base = config.baseURL!.replace(/\/+$/, '');
  const origin = base.replace(/\/v1$/, '');
  const basePath = new URL(base).pathname.replace(/\/+$/, '');
  const headers: Record<string, string> = { accept: 'application/json' };
  if (config.apiKey !== PLACEHOLDER_API_KEY) headers.authorization = `Bearer ${config.apiKey}`;
  const get = (url: string): Promise<Fetched> => getJson(fetch, url, headers, timeoutMs);
  const results: Fetched[] = [];

  const props = await get(`${origin}/props`);
  results.push(props);
  if (props.ok) {
    const fields = asRecord(props.json);
    const fromSettings = positiveInteger(asRecord(fields?.default_generation_settings)?.n_ctx);
    const window = fromSettings ?? positiveInteger(fields?.n_ctx);
    if (window !== null) return { model, contextWindow: window, source: 'llama.cpp /props n_ctx' };
  }

  // The server knows the model by its own name, without a provider prefix (`openai:`, `responses:`).
  const name = splitProviderModel(model).model;
  const one = await get(`${base}/models/${encodeURIComponent(name)}`);
  results.push(one);
  if (one.ok) {
    const found = windowOf(asRecord(one.json));
    if (found) return { model, contextWindow: found.value, source: `${basePath}/models/{model} ${found.field}` };
  }

  const list = await get(`${base}/models`);
  results.push(list);
  if (list.ok) {
    const entry = entryFor(list.json, name);
    const found = windowOf(entry);
    if (found) return { model, contextWindow: found.value, source: `${basePath}/models ${found.field}` };
  }

  if (results.every((r) => !r.ok && !r.reachable)) {
    const reason = results.find((r): r is Extract<Fetched, { ok: false }> => !r.ok)?.reason ?? 'no answer';
    return { model, contextWindow: null, source: `the server did not answer (${reason})` };
  }
  return { model, contextWindow: null, source: 'the server does not say' };
}

/** GET `url` and parse its JSON; never throws. */
async function getJson(fetch: Fetch, url: string, headers: Record<string, string>, timeoutMs: number): Promise<Fetched> {
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    return { ok: false, reachable: false, reason: reasonOf(err, timeoutMs) };
  }
  try {
    if (!response.ok) {
      await response.body?.cancel();
      return { ok: false, reachable: true, reason: `HTTP ${response.status}` };
    }
    return { ok: true, json: await response.json() };
  } catch (err) {
    return { ok: false, reachable: true, reason: reasonOf(err, timeoutMs) };
  }
}

/** The entry of a model list (OpenAI's `{data: [...]}`, llama.cpp's `models`, or a bare array) for `model`, else the only one. */
function entryFor(json: unknown, model: string): Record<string, unknown> | undefined {
  const fields = asRecord(json);
  const list = Array.isArray(json) ? json : Array.isArray(fields?.data) ? fields.data : Array.isArray(fields?.models) ? fields.models : [];
  const entries = (list as unknown[]).map(asRecord).filter((e): e is Record<string, unknown> => e !== undefined);
  const named = entries.find((e) => e.id === model || e.model === model || e.name === model);
  if (named) return named;
  return entries.length === 1 ? entries[0] : undefined;
}

/** The first window field of `entry` with a positive whole number. */
function windowOf(entry: Record<string, unknown> | undefined): { field: string; value: number } | undefined {
  if (!entry) return undefined;
  for (const field of WINDOW_FIELDS) {
    const [first, second] = field.split('.') as [string, string | undefined];
    const value = positiveInteger(second === undefined ? entry[first] : asRecord(entry[first])?.[second]);
    if (value !== null) return { field, value };
  }
  return undefined;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function positiveInteger(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;
}

/** The innermost code or message of a fetch error ("fetch failed" hides ECONNREFUSED). */
function reasonOf(err: unknown, timeoutMs: number): string {
  let current: unknown = err;
  let reason = err instanceof Error ? err.message : String(err);
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const { code, name, cause } = current as { code?: unknown; name?: unknown; cause?: unknown };
    if (typeof code === 'string' && code !== '') return code;
    if (name === 'TimeoutError') return `no answer in ${timeoutMs} ms`;
    current = cause;
  }
  if (reason === '') reason = 'unknown error';
  return reason;
}
