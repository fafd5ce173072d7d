/**
 * The model providers a session can talk to, named once: the settings table offers them as
 * `provider`, and a model string may name one as its prefix (`anthropic:claude-sonnet-4-5`). Plain
 * data and one small function: the workflow sandbox and the command line load this module too.
 */

/**
 * Wire formats a model call can speak: `openai` is Chat Completions (OpenAI and every
 * OpenAI-compatible server), `anthropic` is Anthropic's Messages API, `responses` is OpenAI's
 * Responses API (reasoning items carried between calls).
 */
export const PROVIDERS = ['openai', 'anthropic', 'responses'] as const;

/** One of PROVIDERS. */
export type ProviderName = (typeof PROVIDERS)[number];

/** A model string split into the provider its prefix names (if any) and the model's own name. */
export interface ProviderModel {
  provider: ProviderName | undefined;
  model: string;
}

/**
 * `anthropic:claude-…` → provider `anthropic`, model `claude-…`. Only a known provider's name is a
 * prefix: Ollama's `qwen2.5:7b` stays one model name.
 */
export function splitProviderModel(model: string): ProviderModel {
  const colon = model.indexOf(':');
  if (colon > 0) {
    const prefix = model.slice(0, colon);
    const rest = model.slice(colon + 1);
    if ((PROVIDERS as readonly string[]).includes(prefix) && rest.trim() !== '') return { provider: prefix as ProviderName, model: rest };
  }
  return { provider: undefined, model };
}
